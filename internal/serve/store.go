package serve

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by a Store for an id it does not hold.
var ErrNotFound = errors.New("no such trace")

// ErrExists is returned by Store.Put when a trace with the same content
// (SHA-256) is already stored; the existing record is returned with it.
var ErrExists = errors.New("trace already stored")

// The kinds of record.
const (
	// KindTrace is one uploaded file analysed as one run.
	KindTrace = "trace"
	// KindJob is the ranks of one distributed job, uploaded together and
	// analysed as one job.
	KindJob = "job"
)

// Record describes one stored upload. The raw bytes of its files live in
// the blob directory under their SHA-256; its reports live in the Store.
type Record struct {
	// ID is the upload's public id: the first IDLen hex digits of SHA256.
	ID string `json:"id"`
	// Kind is KindTrace or KindJob.
	Kind string `json:"kind"`
	// SHA256 is the hex SHA-256 of the bytes as uploaded; for a job, of
	// its ranks' SHA-256s (jobSHA), so that the same ranks make the same
	// job whatever their order.
	SHA256 string `json:"sha256"`
	// Name is the display name (?name= or the multipart file name).
	Name string `json:"name"`
	// Size is the upload's size in bytes, as uploaded (compressed or not);
	// for a job, its ranks' sizes summed.
	Size int64 `json:"size"`
	// Files are a job's rank files in upload order; empty for a trace.
	Files []File `json:"files,omitempty"`
	// Format is the reader that read it ("chrome", "xplane").
	Format string `json:"format"`
	// Verdict and Confidence repeat the report's, for listing.
	Verdict    string    `json:"verdict"`
	Confidence string    `json:"confidence"`
	Created    time.Time `json:"created"`
	// Seq orders records by insertion; it is the list cursor.
	Seq int64 `json:"-"`
}

// File is one file of a job as uploaded.
type File struct {
	// Name is the multipart file name, without directories.
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// blobSHAs returns the blobs that hold rec's files.
func (rec *Record) blobSHAs() []string {
	if rec.Kind != KindJob {
		return []string{rec.SHA256}
	}
	shas := make([]string, len(rec.Files))
	for i, f := range rec.Files {
		shas[i] = f.SHA256
	}
	return shas
}

// ErrNoSummary is returned by Store.Summary for a trace stored before the
// service kept the figures that comparisons and checks read.
var ErrNoSummary = errors.New("trace stored without a comparison summary")

// Reports are the renderings of one analysis that the Store keeps.
type Reports struct {
	// Verdict, Confidence and Format are the run's, as the record lists
	// them: the analysis gives them, so the stored report is not read back
	// for them.
	Verdict, Confidence, Format string
	// JSON is the tracegap/report/v1 document.
	JSON []byte
	// HTML is the self-contained HTML report page, or nil: the service
	// renders it when it is first asked for (Config.RenderHTML).
	HTML []byte
	// Summary is the run's compare.Summary as JSON, which comparisons
	// and checks read; nil when the Analyzer gives none.
	Summary []byte
	// Settings are the Settings (JSON) the reports were made with, which
	// the HTML report rendered later reuses; nil when the Analyzer gives
	// none.
	Settings []byte
}

// ListQuery selects a page of records, newest first.
type ListQuery struct {
	// Limit is the page size (at least 1).
	Limit int
	// Before, when non-zero, keeps records with Seq < Before (cursor
	// paging); otherwise Offset records are skipped (page numbers).
	Before int64
	Offset int
}

// Store keeps records and reports: SQLStore on SQLite (one server) or on
// PostgreSQL (several servers, each a SharedStore user).
type Store interface {
	// Put adds rec with its reports (and a job's files). If a record with rec.SHA256 exists it
	// returns that record and ErrExists.
	Put(ctx context.Context, rec Record, rep Reports) (Record, error)
	// Get returns the record with the given id.
	Get(ctx context.Context, id string) (Record, error)
	// BySHA returns the record whose content has the given SHA-256.
	BySHA(ctx context.Context, sha string) (Record, error)
	// JSON and HTML return a record's reports; HTML is empty until the
	// report has been rendered (SetHTML).
	JSON(ctx context.Context, id string) ([]byte, error)
	HTML(ctx context.Context, id string) ([]byte, error)
	// SetHTML keeps a record's HTML report, rendered after it was stored.
	SetHTML(ctx context.Context, id string, html []byte) error
	// Summary returns a record's compare.Summary (JSON), or ErrNoSummary
	// when it was stored without one.
	Summary(ctx context.Context, id string) ([]byte, error)
	// Settings returns the Settings (JSON) a record's reports were made
	// with, or nil when it was stored without them.
	Settings(ctx context.Context, id string) ([]byte, error)
	// Referenced reports whether a record still holds the blob sha: a
	// trace of that content, or a job with a rank of it.
	Referenced(ctx context.Context, sha string) (bool, error)
	// Blobs calls fn with the SHA-256 of every blob a record holds,
	// each once.
	Blobs(ctx context.Context, fn func(sha string) error) error
	// List returns a page of records, newest first, and the total count.
	List(ctx context.Context, q ListQuery) ([]Record, int, error)
	// Delete removes a record and its reports, returning what it removed.
	Delete(ctx context.Context, id string) (Record, error)
	// ID returns the store's id, made with its schema: the blobs of one
	// store are never another's.
	ID(ctx context.Context) (string, error)
	// Ping checks that the store answers.
	Ping(ctx context.Context) error
	Close() error
}

// A SharedStore is a Store that serialises the uploads of one content
// across the servers sharing it, as each server does among its own
// requests: an upload holds its content's lock from before looking for an
// existing record until its own is stored, so that one content is analysed
// once; a blob is removed only under its content's lock.
type SharedStore interface {
	Store
	// LockContent takes the lock of the content sha, waiting while
	// another server holds it.
	LockContent(ctx context.Context, sha string) (unlock func(), err error)
	// TryLockContent takes the lock of sha if no server holds it.
	TryLockContent(ctx context.Context, sha string) (unlock func(), ok bool, err error)
	// HoldRead tells the other servers that this one reads the blob sha,
	// until release, waiting while one removes it; release is nil on a
	// store that one server holds, where there is no other.
	HoldRead(ctx context.Context, sha string) (release func(), err error)
	// TryRemoval takes the right to remove the blob sha, which no other
	// server has while one reads it (HoldRead): ok is false then, and that
	// server is to remove it once its reads end.
	TryRemoval(ctx context.Context, sha string) (release func(), ok bool, err error)
	// LockEpoch changes whenever this server's locks may have been lost
	// (PostgreSQL drops them with their connection): what was done under
	// locks taken before the change is checked again.
	LockEpoch() uint64
}

// IDLen is the length of a record id: 16 hex digits (64 bits) of the
// content's SHA-256, short enough for a URL, long enough that two different
// traces never meet in practice (a clash is refused, not merged).
const IDLen = 16

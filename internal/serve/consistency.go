package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracegap/tracegap/internal/objects"
)

// openStores opens what cfg names for records (Config.Store, a PostgreSQL
// database, or the data directory's SQLite file) and for blobs (a bucket,
// or nil for the data directory's blobs/), and checks that the bucket
// holds this database's blobs, marking it so when it is new. A check
// (check set) changes neither: it does not migrate the schema or mark the
// bucket.
func openStores(ctx context.Context, cfg Config, check bool) (Store, blobStore, error) {
	var keep blobStore
	if cfg.Blobs != "" {
		if !objects.IsURL(cfg.Blobs) {
			return nil, nil, fmt.Errorf("blob store %q: expected a gs://, s3://, azblob:// or file:// URL", cfg.Blobs)
		}
		b, err := openBucketBlobs(ctx, cfg.Blobs)
		if err != nil {
			return nil, nil, err
		}
		keep = b
	}
	st, err := openRecords(ctx, cfg, check)
	if err != nil || keep == nil {
		return st, keep, err
	}
	id, err := st.ID(ctx)
	if err == nil {
		err = keep.claim(ctx, id, !check)
	}
	if err != nil {
		if cfg.Store == nil {
			st.Close()
		}
		return nil, nil, err
	}
	return st, keep, nil
}

// openRecords opens the store of records that cfg names.
func openRecords(ctx context.Context, cfg Config, check bool) (Store, error) {
	switch {
	case cfg.Store != nil:
		return cfg.Store, nil
	case cfg.Database == "":
		return openSQLite(filepath.Join(cfg.DataDir, "tracegap.db"), !check)
	case !IsPostgresURL(cfg.Database):
		return nil, fmt.Errorf("database %s: expected a postgres:// URL (or none, for SQLite in the data directory)", redactURL(cfg.Database))
	}
	return openPostgres(ctx, cfg.Database, !check)
}

// sweep removes the blobs that no record holds and no upload is storing:
// those of an upload whose server died between storing its files and its
// record. A blob is removed under its content's lock, after looking again
// for a record, so that an upload storing it (here or on another server
// sharing the store) keeps it. It returns how many it removed.
func (s *Server) sweep(ctx context.Context) (int, error) {
	orphans, _, err := unmatched(ctx, s.store, s.blobs.keep)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, sha := range orphans {
		ok, err := s.sweepOne(ctx, sha)
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
		}
	}
	return removed, nil
}

// sweepOne removes the blob sha if no upload holds its lock and no record
// holds it.
func (s *Server) sweepOne(ctx context.Context, sha string) (bool, error) {
	epoch := s.lockEpoch()
	unlock, ok, err := s.tryLockContent(ctx, sha)
	if !ok || err != nil {
		return false, err
	}
	defer unlock()
	used, err := s.store.Referenced(ctx, sha)
	if used || err != nil || s.lockEpoch() != epoch {
		return false, err
	}
	return s.removeBlob(ctx, sha)
}

// unmatched compares the blobs that records hold with those keep holds:
// orphans are kept blobs no record holds, missing are blobs records hold
// that keep lacks, each as they stood while they were listed.
func unmatched(ctx context.Context, st Store, keep blobStore) (orphans, missing []string, err error) {
	var held []string
	if err := st.Blobs(ctx, func(sha string) error {
		held = append(held, sha)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	slices.Sort(held)
	seen := make([]bool, len(held))
	err = keep.walk(ctx, func(sha string) error {
		if i, ok := slices.BinarySearch(held, sha); ok {
			seen[i] = true
		} else {
			orphans = append(orphans, sha)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s: %w", keep, err)
	}
	for i, sha := range held {
		if !seen[i] {
			missing = append(missing, sha)
		}
	}
	return orphans, missing, nil
}

// Problem is one inconsistency between the records and the blobs.
type Problem struct {
	// SHA256 is the blob's.
	SHA256 string
	// Orphan is true for a blob that no record holds; false for a blob
	// that a record holds but the store lacks.
	Orphan bool
}

func (p Problem) String() string {
	if p.Orphan {
		return "blob " + p.SHA256 + " is held by no record"
	}
	return "blob " + p.SHA256 + " is missing: a record holds it"
}

// CheckStore compares the records and the blobs that cfg names (as New
// opens them) and returns what does not match: blobs no record holds,
// blobs records hold that are not there. A blob that an upload is storing
// now, on a server that shares a PostgreSQL database, is not reported; on
// SQLite, check a stopped server.
func CheckStore(ctx context.Context, cfg Config) ([]Problem, error) {
	if cfg.DataDir != "" {
		abs, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data directory %q: %w", cfg.DataDir, err)
		}
		cfg.DataDir = abs
	}
	if cfg.Store == nil && cfg.Database == "" {
		// Checked, not created: a check of the wrong directory says so.
		db := filepath.Join(cfg.DataDir, "tracegap.db")
		if _, err := os.Stat(db); err != nil {
			return nil, fmt.Errorf("no database %s: expected the data directory of a tracegap serve (--data-dir), or --database", db)
		}
		// SQLite has no content locks to tell an upload in flight from
		// an orphan: a running server's directory is refused.
		lock, err := lockDir(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("%w; or check a store on PostgreSQL, whose uploads in flight are told apart", err)
		}
		defer lock.release()
	}
	st, keep, err := openStores(ctx, cfg, true)
	if err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		defer st.Close()
	}
	if keep == nil {
		keep = diskBlobs(filepath.Join(cfg.DataDir, "blobs"))
	}
	orphans, missing, err := unmatched(ctx, st, keep)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	for _, sha := range orphans {
		orphan, err := stillOrphan(ctx, st, sha)
		if err != nil {
			return nil, err
		}
		if orphan {
			problems = append(problems, Problem{SHA256: sha, Orphan: true})
		}
	}
	for _, sha := range missing {
		// Looked at again: its record may have gone, with it, meanwhile.
		used, err := st.Referenced(ctx, sha)
		if err != nil {
			return nil, err
		}
		there, err := keep.exists(ctx, sha)
		if err != nil {
			return nil, fmt.Errorf("looking for blob %s in %s: %w", sha, keep, err)
		}
		if used && !there {
			problems = append(problems, Problem{SHA256: sha})
		}
	}
	return problems, nil
}

// stillOrphan looks again, under the content's lock where the store is
// shared, for a record holding the blob sha: false while an upload holds
// the lock.
func stillOrphan(ctx context.Context, st Store, sha string) (bool, error) {
	if sh, ok := st.(SharedStore); ok {
		unlock, ok, err := sh.TryLockContent(ctx, sha)
		if !ok || err != nil {
			return false, err
		}
		defer unlock()
	}
	used, err := st.Referenced(ctx, sha)
	return !used && err == nil, err
}

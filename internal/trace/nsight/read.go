package nsight

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/trace"
)

func init() {
	trace.Register(trace.Format{
		Name:  "nsight",
		Title: "Nsight Systems SQLite export",
		// After the text and protobuf formats: its sniffer reads a fixed
		// 16-byte header no other format starts with.
		Order:    30,
		Suffixes: []string{".sqlite"},
		Sniff:    Sniff,
		Read:     Read,
		Need:     Need,
	})
}

// fixedNeed is what reading any export takes besides its events and
// names: SQLite's page cache (cache_size), its connection and the
// reader's own, well under the 16 MB FuzzRead allows any input.
const fixedNeed = 16 << 20

// Need returns an upper bound on the memory that reading and analysing
// plain bytes of an export takes: its events, at most one per
// minRowBytes of the file, its names, at most the file, and fixedNeed.
// The file itself is read through the page cache, not held.
func Need(plain, events int64) int64 {
	return fixedNeed + plain + trace.EventsNeed(plain, events, minRowBytes)
}

// sqliteMagic starts every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// Sniff reports whether head starts like a SQLite database. Whether the
// database is an Nsight Systems export is told by its tables, which the
// first 512 bytes do not show; Read refuses any other database with a line
// that says so.
func Sniff(head []byte) bool { return bytes.HasPrefix(head, []byte(sqliteMagic)) }

// maxValueLen bounds the length of one value SQLite will make while
// reading (SQLITE_LIMIT_LENGTH): names are at most kilobytes, and a
// hostile database must not make SQLite build gigabyte strings.
const maxValueLen = 16 << 20

// Read reads an Nsight Systems SQLite export from r. SQLite reads files,
// not streams: when opt.Source is the file being read it is opened by its
// name, read-only; any other input is first copied to a private temporary
// file, which is removed before Read returns.
func Read(r io.Reader, opt trace.Options) (*trace.Trace, error) {
	path, size, fromFile, cleanup, err := localFile(r, opt)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	defer db.close()
	name := path
	if !fromFile {
		name = "" // a temporary copy: its name says nothing
	}
	t, err := readConn(db, name, size, opt)
	if err != nil {
		return nil, err
	}
	t.Bytes = size
	return t, nil
}

// localFile returns the path and size of a file holding the input: the
// file that opt.Source is, when it is one that can be named (the same
// file, not one swapped in under its name), else a temporary copy of r.
func localFile(r io.Reader, opt trace.Options) (path string, size int64, fromFile bool, cleanup func(), err error) {
	if f, ok := opt.Source.(*os.File); ok {
		if p, size, ok := sameFile(f); ok {
			return p, size, true, func() {}, nil
		}
	}
	br := bufio.NewReader(r)
	if head, _ := br.Peek(18); !plausibleHeader(head) {
		return "", 0, false, nil, fmt.Errorf("not a readable Nsight Systems SQLite export: not a database: expected an SQLite header (%q and a page size)", sqliteMagic)
	}
	r = br
	tmp, err := tracefile.CreateTemp("", "tracegap-nsight-*.sqlite")
	if err != nil {
		return "", 0, false, nil, fmt.Errorf("copying the input to a temporary file for SQLite: %w", err)
	}
	cleanup = func() { tracefile.RemoveTemp(tmp) }
	size, err = io.Copy(tmp, r)
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		cleanup()
		return "", 0, false, nil, fmt.Errorf("copying the input to a temporary file for SQLite: %w", err)
	}
	return tmp.Name(), size, false, cleanup, nil
}

// plausibleHeader reports whether head, the first bytes of a stream, may
// start an SQLite database: its magic and a page size SQLite takes (a
// power of two from 512 to 32768, or 1 for 65536). A stream is copied to
// a file before SQLite looks at it: one that is no database (a device of
// zeros, say) is refused before it fills the disk. A stream too short
// for the header is left for SQLite to refuse.
func plausibleHeader(head []byte) bool {
	if !bytes.HasPrefix([]byte(sqliteMagic), head[:min(len(head), len(sqliteMagic))]) {
		return false
	}
	if len(head) < 18 {
		return true
	}
	size := int(head[16])<<8 | int(head[17])
	return size == 1 || size >= 512 && size <= 32768 && size&(size-1) == 0
}

// sameFile returns the absolute path of f and its size when that path
// names f itself.
func sameFile(f *os.File) (string, int64, bool) {
	abs, err := filepath.Abs(f.Name())
	if err != nil {
		return "", 0, false
	}
	a, err1 := f.Stat()
	b, err2 := os.Stat(abs)
	if err1 != nil || err2 != nil || !a.Mode().IsRegular() || !os.SameFile(a, b) {
		return "", 0, false
	}
	return abs, a.Size(), true
}

// openDB opens the database at path read-only and immutable: SQLite takes
// no locks, reads no journal or WAL beside it, and writes nothing. The
// connection's pragmas keep SQL in the schema from running functions
// (trusted_schema) and bound the page cache; a value longer than
// maxValueLen is an error.
func openDB(path string) (*liteDB, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&immutable=1"}
	db, err := openLite(u.String())
	if err != nil {
		return nil, dbError(err)
	}
	db.limit(sqliteLimitLength, maxValueLen)
	for _, p := range []string{
		"PRAGMA query_only = 1",
		"PRAGMA trusted_schema = 0",
		"PRAGMA cache_size = -4096", // KiB
		"PRAGMA mmap_size = 0",
		"PRAGMA cell_size_check = 1",
	} {
		if err := db.exec(p); err != nil {
			db.close()
			return nil, dbError(err)
		}
	}
	return db, nil
}

// sqliteLimitLength is SQLITE_LIMIT_LENGTH, the longest string or blob.
const sqliteLimitLength = 0

// dbError words an error from SQLite for the one line that names the file:
// the file is not a readable export, and why, in words where SQLite's
// message is a known one, else in SQLite's words without its result code
// ("(11)"). The message may quote the database's own text (a damaged
// schema's SQL), so it is escaped onto one line and cut to maxErrorText
// bytes.
func dbError(err error) error {
	msg := sqliteCode.ReplaceAllString(err.Error(), "")
	for _, w := range sqliteWords {
		if strings.Contains(msg, w.sqlite) {
			msg = w.words
			break
		}
	}
	return fmt.Errorf("not a readable Nsight Systems SQLite export: %s", oneLine(msg))
}

// sqliteCode matches the result code the driver appends to a message.
var sqliteCode = regexp.MustCompile(` \(\d+\)$`)

// sqliteWords says in words what SQLite's commonest messages about a
// damaged file mean.
var sqliteWords = []struct{ sqlite, words string }{
	{"database disk image is malformed", "the database is damaged or cut short (was it copied whole? export again with nsys export --type sqlite)"},
	{"file is not a database", "it starts as SQLite but its pages are not a database (damaged, or not an export)"},
}

// maxErrorText bounds the text of SQLite's that an error quotes.
const maxErrorText = 200

// oneLine escapes s onto one printable line: control characters,
// invalid UTF-8 and other runes that are not graphic are written as Go
// escapes.
func oneLine(s string) string {
	if len(s) > maxErrorText {
		s = s[:maxErrorText] + "..."
	}
	q := strconv.QuoteToGraphic(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

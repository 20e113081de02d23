package nsight

import (
	"fmt"
	"runtime"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// liteDB is a database opened through SQLite's C API (modernc's
// translation of it into Go) rather than database/sql: a connection of its
// own, without the per-connection mutex that the driver's connections take
// on every call (SQLITE_OPEN_NOMUTEX; one goroutine reads it), and values
// read straight from a row, not boxed into interfaces. Each value costs
// two calls into SQLite; through the driver each of them also took and
// left the mutex, which was most of the time of reading a row.
type liteDB struct {
	tls *libc.TLS
	db  uintptr
	// slot is where SQLite writes the handles it returns: Go memory on
	// the heap, which does not move.
	slot *uintptr
}

// openLite opens the database named by the SQLite URI uri read-only.
func openLite(uri string) (*liteDB, error) {
	d := &liteDB{tls: libc.NewTLS(), slot: new(uintptr)}
	name, err := libc.CString(uri)
	if err != nil {
		d.tls.Close()
		return nil, err
	}
	defer libc.Xfree(d.tls, name)
	rc := sqlite3.Xsqlite3_open_v2(d.tls, name, uintptr(unsafe.Pointer(d.slot)), sqlite3.SQLITE_OPEN_READONLY|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	d.db = *d.slot
	if rc != sqlite3.SQLITE_OK {
		err := d.error(rc)
		d.close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(d.tls, d.db, 1)
	return d, nil
}

func (d *liteDB) close() {
	if d.db != 0 {
		sqlite3.Xsqlite3_close_v2(d.tls, d.db)
		d.db = 0
	}
	d.tls.Close()
	runtime.KeepAlive(d.slot)
}

// error returns SQLite's message for the result code rc.
func (d *liteDB) error(rc int32) error {
	var msg string
	if d.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(d.tls, d.db))
	} else {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(d.tls, rc))
	}
	return fmt.Errorf("%s (%d)", msg, rc)
}

// limit sets one of SQLite's limits (sqlite3_limit).
func (d *liteDB) limit(id, v int32) { sqlite3.Xsqlite3_limit(d.tls, d.db, id, v) }

// liteStmt is a prepared statement and, after next, its current row.
type liteStmt struct {
	d *liteDB
	p uintptr
}

// prepare compiles one SQL statement.
func (d *liteDB) prepare(q string) (*liteStmt, error) {
	cq, err := libc.CString(q)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(d.tls, cq)
	*d.slot = 0
	if rc := sqlite3.Xsqlite3_prepare_v2(d.tls, d.db, cq, -1, uintptr(unsafe.Pointer(d.slot)), 0); rc != sqlite3.SQLITE_OK {
		return nil, d.error(rc)
	}
	if *d.slot == 0 {
		return nil, fmt.Errorf("no SQL statement in %q", q)
	}
	return &liteStmt{d: d, p: *d.slot}, nil
}

// exec runs a statement that returns no rows the reader needs.
func (d *liteDB) exec(q string) error {
	s, err := d.prepare(q)
	if err != nil {
		return err
	}
	defer s.close()
	for {
		ok, err := s.next()
		if err != nil || !ok {
			return err
		}
	}
}

func (s *liteStmt) close() { sqlite3.Xsqlite3_finalize(s.d.tls, s.p) }

// next steps to the next row: false at the end.
func (s *liteStmt) next() (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(s.d.tls, s.p); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, s.d.error(rc)
	}
}

// reset makes the statement ready to run again, with new bindings.
func (s *liteStmt) reset() { sqlite3.Xsqlite3_reset(s.d.tls, s.p) }

// bindInt binds the integer v to parameter i (from 1).
func (s *liteStmt) bindInt(i int32, v int64) error {
	if rc := sqlite3.Xsqlite3_bind_int64(s.d.tls, s.p, i, v); rc != sqlite3.SQLITE_OK {
		return s.d.error(rc)
	}
	return nil
}

// int returns column i of the row as an integer, false when it holds
// anything else (NULL, text, a blob, a real).
func (s *liteStmt) int(i int32) (int64, bool) {
	if sqlite3.Xsqlite3_column_type(s.d.tls, s.p, i) != sqlite3.SQLITE_INTEGER {
		return 0, false
	}
	return sqlite3.Xsqlite3_column_int64(s.d.tls, s.p, i), true
}

// null reports whether column i of the row is NULL.
func (s *liteStmt) null(i int32) bool {
	return sqlite3.Xsqlite3_column_type(s.d.tls, s.p, i) == sqlite3.SQLITE_NULL
}

// text returns column i of the row as a string, false when it holds no
// text (NULL, a number; a blob is taken as its bytes).
func (s *liteStmt) text(i int32) (string, bool) {
	b, ok := s.bytes(i)
	return string(b), ok
}

// bytes is text as a copy of the bytes, for a caller that keeps them
// only as long as it needs (Builder.InternBytes).
func (s *liteStmt) bytes(i int32) ([]byte, bool) {
	t := sqlite3.Xsqlite3_column_type(s.d.tls, s.p, i)
	if t != sqlite3.SQLITE_TEXT && t != sqlite3.SQLITE_BLOB {
		return nil, false
	}
	p := sqlite3.Xsqlite3_column_text(s.d.tls, s.p, i)
	n := sqlite3.Xsqlite3_column_bytes(s.d.tls, s.p, i)
	if p == 0 || n <= 0 {
		return nil, true
	}
	return libc.GoBytes(p, int(n)), true
}

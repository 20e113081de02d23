package tracetest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"regexp"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// NsightPID is the process id WriteNsight gives a spec without one.
const NsightPID = 1000

// NsightSchema is the part of an Nsight Systems export (schema 3.x) that
// WriteNsight writes: the tables and columns the reader reads, with the
// types nsys declares. Tests build hostile exports from it.
const NsightSchema = `
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
	deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
	correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
	shortName INTEGER NOT NULL, mangledName INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
	deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
	correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
	copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
	deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
	correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
	eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
	nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
	rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
	endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
`

// WriteNsight writes s as the SQLite database `nsys export --type sqlite`
// writes (schema 3.16): host operators, annotations and Python frames as
// NVTX push/pop ranges (marks when they have no duration), runtime calls
// in CUPTI_ACTIVITY_KIND_RUNTIME with their correlation ids, kernels,
// copies and memsets in their CUPTI tables, names in StringIds and
// ThreadNames. A copy's kinds come from its Kineto-style name ("Memcpy
// DtoH (Device -> Pageable)"). Device annotations have no Nsight
// counterpart and are left out. Threads are globalTid PID<<24 | TID.
func WriteNsight(w io.Writer, s *Spec) error {
	b, err := NsightBytes(s, NsightOptions{})
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// NsightOptions change what NsightBytes writes.
type NsightOptions struct {
	// PageSize is the database's page size (default SQLite's, 4096): 512
	// makes the smallest files, for fuzzing seeds.
	PageSize int
	// Extra is SQL run once the export is written, to damage it for a
	// test; "" runs none.
	Extra string
}

// NsightBytes is WriteNsight to memory.
func NsightBytes(s *Spec, o NsightOptions) ([]byte, error) {
	for i, e := range s.Events {
		if int(e.Role) > int(DeviceAnnotation) {
			return nil, fmt.Errorf("event %d (%q): unknown role %d", i, e.Name, e.Role)
		}
	}
	db, err := sql.Open("sqlite", "file:tracetest-nsight?mode=memory")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if o.PageSize > 0 {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d", o.PageSize)); err != nil {
			return nil, err
		}
	}
	if _, err := conn.ExecContext(ctx, NsightSchema); err != nil {
		return nil, fmt.Errorf("nsight schema: %w", err)
	}
	nw := &nsightWriter{ctx: ctx, conn: conn, ids: map[string]int64{}, pid: s.PID}
	if nw.pid == 0 {
		nw.pid = NsightPID
	}
	if err := nw.write(s); err != nil {
		return nil, err
	}
	if o.Extra != "" {
		if _, err := conn.ExecContext(ctx, o.Extra); err != nil {
			return nil, fmt.Errorf("extra SQL: %w", err)
		}
	}
	var out []byte
	err = conn.Raw(func(dc any) error {
		ser, ok := dc.(interface{ Serialize() ([]byte, error) })
		if !ok {
			return fmt.Errorf("sqlite connection %T cannot serialize", dc)
		}
		out, err = ser.Serialize()
		return err
	})
	return out, err
}

type nsightWriter struct {
	ctx  context.Context
	conn *sql.Conn
	ids  map[string]int64
	pid  int64
}

func (n *nsightWriter) exec(q string, args ...any) error {
	_, err := n.conn.ExecContext(n.ctx, q, args...)
	return err
}

// str returns the StringIds id of s, adding it on first use.
func (n *nsightWriter) str(s string) (int64, error) {
	if id, ok := n.ids[s]; ok {
		return id, nil
	}
	id := int64(len(n.ids) + 1)
	n.ids[s] = id
	return id, n.exec(`INSERT INTO StringIds VALUES (?, ?)`, id, s)
}

func (n *nsightWriter) gtid(tid int64) int64 { return n.pid<<24 | tid&0xffffff }

func (n *nsightWriter) write(s *Spec) error {
	if err := n.exec(`BEGIN`); err != nil {
		return err
	}
	for _, kv := range [][2]string{{"EXPORT_PRODUCT_VERSION", "2024.6.2.25"}, {"EXPORT_SCHEMA_VERSION", "3.16.1"}} {
		if err := n.exec(`INSERT INTO META_DATA_EXPORT VALUES (?, ?)`, kv[0], kv[1]); err != nil {
			return err
		}
	}
	for _, th := range s.Threads {
		id, err := n.str(th.Name)
		if err != nil {
			return err
		}
		if err := n.exec(`INSERT INTO ThreadNames VALUES (?, 0, ?)`, id, n.gtid(th.TID)); err != nil {
			return err
		}
	}
	for _, d := range s.devices() {
		if err := n.exec(`INSERT INTO TARGET_INFO_GPU VALUES (0, ?, 'tracetest GPU')`, d); err != nil {
			return err
		}
	}
	for i := range s.Events {
		if err := n.event(&s.Events[i]); err != nil {
			return fmt.Errorf("event %d (%q): %w", i, s.Events[i].Name, err)
		}
	}
	return n.exec(`COMMIT`)
}

// nullCorr is a correlation id as nsys writes it: NULL when there is none.
func nullCorr(c uint64) any {
	if c == 0 {
		return nil
	}
	return int64(c)
}

func (n *nsightWriter) event(e *Event) error {
	end := e.Start + e.Dur
	switch e.Role {
	case CPUOp, Annotation, Python:
		if e.Dur == 0 {
			return n.exec(`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, NULL, 34, ?, ?)`, e.Start, e.Name, n.gtid(e.Thread))
		}
		return n.exec(`INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)`, e.Start, end, e.Name, n.gtid(e.Thread))
	case Runtime:
		id, err := n.str(e.Name)
		if err != nil {
			return err
		}
		return n.exec(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)`, e.Start, end, n.gtid(e.Thread), nullCorr(e.Corr), id)
	case Kernel:
		id, err := n.str(e.Name)
		if err != nil {
			return err
		}
		return n.exec(`INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, NULL)`, e.Start, end, e.Device, e.Stream, nullCorr(e.Corr), n.pid<<24, id, id)
	case Memcpy:
		kind, src, dst := copyKinds(e.Name)
		return n.exec(`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)`, e.Start, end, e.Device, e.Stream, nullCorr(e.Corr), n.pid<<24, e.Bytes, kind, src, dst)
	case Memset:
		return n.exec(`INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, ?, 1, ?, ?, ?, 0, 0)`, e.Start, end, e.Device, e.Stream, nullCorr(e.Corr), n.pid<<24)
	}
	return nil // a device annotation: no Nsight counterpart
}

// kinetoCopy parses Kineto's name of a copy: "Memcpy DtoH (Device -> Pageable)".
var kinetoCopy = regexp.MustCompile(`^Memcpy (\w+)(?: \((\w+) -> (\w+)\))?`)

// copyKinds returns the ENUM_CUDA_MEMCPY_OPER and ENUM_CUDA_MEM_KIND
// values of a copy named as Kineto names it; unknown parts are 0 (copy)
// and NULL (memory).
func copyKinds(name string) (kind int64, src, dst any) {
	m := kinetoCopy.FindStringSubmatch(name)
	if m == nil {
		return 0, nil, nil
	}
	kinds := map[string]int64{"HtoD": 1, "DtoH": 2, "HtoA": 3, "AtoH": 4, "AtoA": 5, "AtoD": 6, "DtoA": 7, "DtoD": 8, "HtoH": 9, "PtoP": 10}
	mem := func(s string) any {
		for i, k := range []string{"Pageable", "Pinned", "Device", "Array", "Managed"} {
			if strings.EqualFold(s, k) {
				return int64(i)
			}
		}
		return nil
	}
	return kinds[m[1]], mem(m[2]), mem(m[3])
}

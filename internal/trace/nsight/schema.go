package nsight

import (
	"fmt"
	"strings"
)

// colSpec is a column the reader reads: the first of names the table has.
// A column that is not required reads as NULL when the table has none of
// them.
type colSpec struct {
	names    []string
	required bool
	// text columns hold strings; the others integers.
	text bool
}

func need(names ...string) colSpec { return colSpec{names: names, required: true} }
func opt(names ...string) colSpec  { return colSpec{names: names} }
func optText(name string) colSpec  { return colSpec{names: []string{name}, text: true} }
func needText(name string) colSpec { return colSpec{names: []string{name}, required: true, text: true} }

// tableSpec is a table the reader reads and the columns it reads of it, in
// the order its rows give them.
type tableSpec struct {
	name string
	cols []colSpec
}

// The tables the reader knows. Names are those of the 2.x and 3.x export
// schemas; columns that later versions added or dropped are optional.
var (
	stringTable  = tableSpec{"StringIds", []colSpec{need("id"), needText("value")}}
	threadTable  = tableSpec{"ThreadNames", []colSpec{need("nameId"), need("globalTid")}}
	metaTables   = []string{"META_DATA_EXPORT", "EXPORT_META_DATA"}
	gpuTable     = tableSpec{"TARGET_INFO_GPU", []colSpec{need("id"), optText("name")}}
	kernelTable  = tableSpec{"CUPTI_ACTIVITY_KIND_KERNEL", []colSpec{need("start"), need("end"), need("deviceId"), need("streamId"), opt("correlationId"), need("demangledName", "shortName", "mangledName")}}
	memcpyTable  = tableSpec{"CUPTI_ACTIVITY_KIND_MEMCPY", []colSpec{need("start"), need("end"), need("deviceId"), need("streamId"), opt("correlationId"), opt("bytes"), opt("copyKind"), opt("srcKind"), opt("dstKind")}}
	memsetTable  = tableSpec{"CUPTI_ACTIVITY_KIND_MEMSET", []colSpec{need("start"), need("end"), need("deviceId"), need("streamId"), opt("correlationId"), opt("bytes")}}
	syncTable    = tableSpec{"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", []colSpec{need("start"), need("end"), need("deviceId"), need("streamId"), opt("correlationId"), opt("syncType")}}
	runtimeTable = tableSpec{"CUPTI_ACTIVITY_KIND_RUNTIME", []colSpec{need("start"), need("end"), need("globalTid"), opt("correlationId"), need("nameId")}}
	nvtxTable    = tableSpec{"NVTX_EVENTS", []colSpec{need("start"), opt("end"), need("eventType"), optText("text"), opt("textId"), opt("globalTid")}}
	osrtTable    = tableSpec{"OSRT_API", []colSpec{need("start"), need("end"), need("globalTid"), need("nameId")}}
)

// eventTables are the tables that hold events; an export has at least one.
var eventTables = []*tableSpec{&kernelTable, &memcpyTable, &memsetTable, &syncTable, &runtimeTable, &nvtxTable, &osrtTable}

// column is a column as PRAGMA table_xinfo describes it.
type column struct {
	typ       string // the declared type, upper case
	generated bool   // a generated column: computed by an expression on read
	dflt      bool   // has a default, which rows written before it use
	pk        bool   // the table's (first) primary key column
}

// schema is what the database holds of the tables the reader knows: each
// table present, by name, with its columns.
type schema map[string]map[string]column

// known reports whether the reader reads a table called name.
func known(name string) bool {
	switch name {
	case stringTable.name, threadTable.name, gpuTable.name, metaTables[0], metaTables[1]:
		return true
	}
	for _, t := range eventTables {
		if t.name == name {
			return true
		}
	}
	return false
}

// loadSchema finds the known tables, walking sqlite_master a row at a
// time, and their columns. Only plain tables count: a view or a virtual
// table under a known name would run SQL or a module's code on read.
func loadSchema(c *liteDB) (schema, error) {
	s := schema{}
	var names []string
	err := query(c, `SELECT type, name, sql FROM sqlite_master`, func(v *liteStmt) error {
		typ, _ := v.text(0)
		name, _ := v.text(1)
		ddl, _ := v.text(2)
		if typ != "table" || !known(name) || s[name] != nil {
			return nil
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ddl)), "CREATE VIRTUAL") {
			return fmt.Errorf("table %s is a virtual table, expected a plain table", name)
		}
		s[name] = map[string]column{}
		names = append(names, name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		err := query(c, `PRAGMA table_xinfo("`+name+`")`, func(v *liteStmt) error {
			col, _ := v.text(1)
			typ, _ := v.text(2)
			pk, _ := v.int(5)
			hidden, _ := v.int(6)
			s[name][col] = column{typ: strings.ToUpper(typ), generated: hidden == 2 || hidden == 3, dflt: !v.null(4), pk: pk == 1}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// nsight reports whether the schema is an Nsight Systems export's: the
// string table and at least one table of events.
func (s schema) nsight() bool {
	if s[stringTable.name] == nil {
		return false
	}
	for _, t := range eventTables {
		if s[t.name] != nil {
			return true
		}
	}
	return false
}

// selectList returns the SELECT of spec's columns from its table, or an
// error naming what the table lacks or holds that cannot be read. A
// missing optional column reads as NULL.
func (s schema) selectList(spec *tableSpec) (string, error) {
	cols := s[spec.name]
	var sel []string
	for _, cs := range spec.cols {
		name, col, ok := "", column{}, false
		for _, n := range cs.names {
			if col, ok = cols[n]; ok {
				name = n
				break
			}
		}
		switch {
		case !ok && cs.required:
			return "", fmt.Errorf("table %s has no column %s", spec.name, strings.Join(cs.names, " or "))
		case !ok:
			sel = append(sel, "NULL")
			continue
		case col.generated:
			return "", fmt.Errorf("table %s column %s is generated by an expression, expected stored values", spec.name, name)
		case col.dflt:
			return "", fmt.Errorf("table %s column %s has a default value, which no export declares", spec.name, name)
		case !cs.text && !integerType(col.typ):
			return "", fmt.Errorf("table %s column %s is declared %s, expected INTEGER", spec.name, name, oneLine(col.typ))
		}
		sel = append(sel, `"`+name+`"`)
	}
	return `SELECT ` + strings.Join(sel, ", ") + ` FROM "` + spec.name + `"`, nil
}

// integerType reports whether a declared type gives a column integer
// affinity, or none (a column declared without a type holds anything).
func integerType(typ string) bool { return typ == "" || strings.Contains(typ, "INT") }

// query runs q and calls row with each row, which is valid during the
// call only; it stops at the first error.
func query(c *liteDB, q string, row func(*liteStmt) error) error {
	st, err := c.prepare(q)
	if err != nil {
		return dbError(err)
	}
	defer st.close()
	for {
		ok, err := st.next()
		if err != nil {
			return dbError(err)
		}
		if !ok {
			return nil
		}
		if err := row(st); err != nil {
			return err
		}
	}
}

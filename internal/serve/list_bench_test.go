package serve

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// benchRecords is how many records BenchmarkList fills each store with;
// TRACEGAP_BENCH_RECORDS changes it.
func benchRecords(b *testing.B) int {
	n := 100_000
	if v := os.Getenv("TRACEGAP_BENCH_RECORDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("TRACEGAP_BENCH_RECORDS=%q: expected an integer of at least 1000", v)
		}
	}
	return n
}

// BenchmarkList times pages of List on a store of many records (half of
// them jobs of four files) on SQLite and PostgreSQL (skipped where no
// server can start): the first page, a page deep in by offset, and the
// same page by cursor; and a COUNT(*) of the records alone. A page asks for 21 records, as GET /api/v1/traces
// does for its default 20.
//
//	go test -run '^$' -bench List -benchtime 200x ./internal/serve/
func BenchmarkList(b *testing.B) {
	n := benchRecords(b)
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			st := openBenchStore(b, name)
			fillStore(b, st, n)
			ctx := context.Background()
			mid, _, err := st.List(ctx, ListQuery{Limit: 1, Offset: n / 2})
			if err != nil || len(mid) != 1 {
				b.Fatalf("finding the middle record: %v", err)
			}
			for _, c := range []struct {
				name string
				q    ListQuery
			}{
				{"first", ListQuery{Limit: 21}},
				{"offset", ListQuery{Limit: 21, Offset: n / 2}},
				{"before", ListQuery{Limit: 21, Before: mid[0].Seq + 1}},
			} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						recs, total, err := st.List(ctx, c.q)
						if err != nil || len(recs) != 21 || total != n {
							b.Fatalf("List(%+v) = %d records of %d, %v; want 21 of %d", c.q, len(recs), total, err, n)
						}
					}
				})
			}
			b.Run("count", func(b *testing.B) { // what the total costs alone
				for b.Loop() {
					var total int
					if err := st.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM traces`).Scan(&total); err != nil || total != n {
						b.Fatalf("COUNT(*) = %d, %v; want %d", total, err, n)
					}
				}
			})
		})
	}
}

func openBenchStore(b *testing.B, name string) *SQLStore {
	b.Helper()
	st, err := openers[name](b)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st.(*SQLStore)
}

// fillStore inserts n records through the store's schema, in batches of
// many rows a statement: every second one a job of four files, each with
// a small JSON report and no HTML.
func fillStore(b *testing.B, st *SQLStore, n int) {
	b.Helper()
	ctx := context.Background()
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	const batch = 500
	for lo := 1; lo <= n; lo += batch {
		hi := min(lo+batch-1, n)
		var traces, reports, files rows
		for i := lo; i <= hi; i++ {
			kind := KindTrace
			if i%2 == 0 {
				kind = KindJob
				for k := range 4 {
					files.add(testSHA(i)[:IDLen], k, fmt.Sprintf("rank%d.json", k), testSHA(n+4*i+k), 1000+k)
				}
			}
			rec, rep := testRecord(i, kind)
			traces.add(rec.ID, kind, rec.SHA256, rec.Name, rec.Size, rec.Format, rec.Verdict, rec.Confidence, rec.Created.UnixNano())
			reports.add(rec.ID, rep.JSON, []byte{}, rep.Summary, rep.Settings)
		}
		for _, ins := range []struct {
			head string
			r    rows
		}{
			{`INSERT INTO traces (id, kind, sha256, name, size, format, verdict, confidence, created_ns) VALUES `, traces},
			{`INSERT INTO reports (id, json, html, summary, settings) VALUES `, reports},
			{`INSERT INTO job_files (job_id, idx, name, sha256, size) VALUES `, files},
		} {
			if _, err := tx.ExecContext(ctx, st.d.bind(ins.head+ins.r.values()), ins.r.args...); err != nil {
				b.Fatalf("filling the store: %v", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if st.d.name == "PostgreSQL" { // as autovacuum would after such a load
		if _, err := st.db.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
}

// rows gathers the values of a multi-row INSERT.
type rows struct {
	width, n int
	args     []any
}

func (r *rows) add(v ...any) { r.width, r.n, r.args = len(v), r.n+1, append(r.args, v...) }

func (r rows) values() string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", r.width), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", r.n), ", ")
}

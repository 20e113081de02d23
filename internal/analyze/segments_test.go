package analyze

import (
	"slices"
	"strings"
	"testing"
)

// TestSegmentTables: a result's segments taken as tables and given to a
// copy of the result come back segment for segment, named alike; damaged
// tables are refused, naming what is wrong.
func TestSegmentTables(t *testing.T) {
	res := analyzeSpec(t, scenarios[0].loop.Spec())
	if len(res.Gaps) == 0 {
		t.Fatal("the scenario has no gaps")
	}
	tables := res.SegmentTables()
	back := *res
	back.Gaps = slices.Clone(res.Gaps)
	back.segs = segments{}
	if err := back.SetSegmentTables(tables); err != nil {
		t.Fatal(err)
	}
	for i := range res.Gaps {
		if got, want := back.NamedSegments(&back.Gaps[i]), res.NamedSegments(&res.Gaps[i]); !slices.EqualFunc(got, want, sameNamed) {
			t.Errorf("gap %d: segments %+v, want %+v", i, got, want)
		}
	}

	for _, tc := range []struct {
		name   string
		damage func(st *SegmentTables)
		want   string
	}{
		{"a gap missing", func(st *SegmentTables) { st.Spans = st.Spans[1:] }, "expected a run per gap"},
		{"a run past the data", func(st *SegmentTables) { st.Spans[0][1] = len(st.Data) + 1 }, "segments of gap 0 at"},
		{"a kind past the stacks", func(st *SegmentTables) { st.Kinds[0][0] = uint32(len(st.Stacks)) }, "indexes past its tables"},
		{"a cause past the causes", func(st *SegmentTables) { st.Kinds[0][2] = uint32(NumCauses) }, "indexes past its tables"},
		{"no empty stack first", func(st *SegmentTables) { st.Stacks = st.Stacks[1:] }, "without the empty stack"},
		{"no kinds", func(st *SegmentTables) { st.Kinds = nil }, "past the kinds"},
		{"a run cut", func(st *SegmentTables) {
			st.Data = st.Data[:st.Spans[0][1]-1]
			st.Spans = [][2]int{{st.Spans[0][0], len(st.Data)}}
			st.Spans = append(st.Spans, make([][2]int, len(res.Gaps)-1)...)
		}, "cut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := *res.SegmentTables()
			st.Data, st.Spans, st.Kinds, st.Stacks = slices.Clone(st.Data), slices.Clone(st.Spans), slices.Clone(st.Kinds), slices.Clone(st.Stacks)
			tc.damage(&st)
			r := *res
			r.Gaps = slices.Clone(res.Gaps)
			if err := r.SetSegmentTables(&st); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func sameNamed(x, y NamedSegment) bool {
	return x.Start == y.Start && x.Dur == y.Dur && x.Cause == y.Cause && x.Sync == y.Sync && slices.Equal(x.Stack, y.Stack)
}

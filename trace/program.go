package trace

import "sort"

// Program is a compiled program that ran on the devices, as the source
// describes it: an XLA module (JAX's jit_train_step) with the lines of the
// user's code its ops were traced from. It is public because the analysis
// names, for idle that no line of the user's code is on the host's stacks
// for, the program the device waited on and where its code is.
type Program struct {
	// Name is the program's name: "jit_forward_3d_conv".
	Name StrID
	// ID is the program's id in the source (XLA's module id), which
	// device work names it by.
	ID uint64
	// Lines are the lines of the user's code its ops come from, the line
	// of the most ops first, of equal counts the one met first.
	Lines []SourceLine
}

// SourceLine is a line of the user's code that ops of a program come from.
type SourceLine struct {
	File StrID
	Line int32
	// Op is the name of the first of its ops: XLA's op_name,
	// "jit(forward_3d_conv)/conv_general_dilated".
	Op StrID
	// Ops counts the program's ops that name the line.
	Ops int32
}

// ProgramRun is a run of a device track's events that belong to one
// program, from the first one's start to the last one's end. Runs are
// kept per change of program rather than per event: a program's run on a
// device is hundreds of events.
type ProgramRun struct {
	Track int32
	// Program is the index in Trace.Programs, -1 for a program the
	// source gives no lines of.
	Program    int32
	Start, End int64
}

// ProgramBefore returns the index in t.Programs of the program whose work
// on tracks reaches furthest up to at, the work a device idle from at
// waited on; -1 when that work belongs to no program of Trace.Programs,
// or none of their work before at belongs to a program.
// Trace.ProgramRuns are sorted by track and start.
func (t *Trace) ProgramBefore(tracks []int32, at int64) int {
	best, reach := -1, int64(-1)
	runs := t.ProgramRuns
	for _, tr := range tracks {
		// The last run of tr starting before at.
		i := sort.Search(len(runs), func(k int) bool {
			return runs[k].Track > tr || runs[k].Track == tr && runs[k].Start >= at
		}) - 1
		if i < 0 || runs[i].Track != tr {
			continue
		}
		if r := min(runs[i].End, at); r > reach {
			best, reach = int(runs[i].Program), r
		}
	}
	return best
}

package trace

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

package advice

import (
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
)

// stackHints say how each framework records Python stacks; PyTorch's
// stands for the others.
var stackHints = map[analyze.Framework]string{
	analyze.JAX:        "profile with the Python tracer on (jax.profiler.ProfileOptions() with python_tracer_level=1, passed to jax.profiler.start_trace)",
	analyze.TensorFlow: "profile with the Python tracer on (tf.profiler.experimental.ProfilerOptions(python_tracer_level=1), passed to tf.profiler.experimental.start)",
	analyze.PyTorch:    "profile with torch.profiler.profile(..., with_stack=True) to record them",
}

// stackHint writes r.StackHint when its call sites name no line of the
// user's code: how to record Python stacks in the framework that wrote the
// trace, so that a later report can name them. A result without device
// work has no call sites and gets none.
func stackHint(r *analyze.Result) {
	if r.Verdict == analyze.NoDevice || r.Facts.UserFrames {
		return
	}
	if r.Source.Format == nsightFormat && !r.Facts.CallFrames {
		r.StackHint = nsysStackHint(r.Framework, r.Facts.HasFrames)
		return
	}
	r.StackHint = stackHintFor(r.Framework, r.Facts.CallFrames)
	if r.Facts.CallFrames && slices.ContainsFunc(r.CallSites, func(s analyze.CallSite) bool { return !s.Program.IsZero() }) {
		r.StackHint = programsHint
	}
}

// programsHint is the hint for frames all in library code where a sync's
// site names the program it waited on instead (the program's HLO
// metadata gives the user's line): the call's own line stays unnamed.
const programsHint = "The trace's Python frames around these calls are all in library code (the frameworks, NumPy, Python's own modules), so the calls' own lines cannot be named; a sync's site names instead the program the device waited on and the line of your code its ops come from. For the lines of the calls, start the capture before the function that runs the loop is entered: the Python tracer records a frame only when it is entered after the capture starts."

// nsysStackHint says how to record call sites with Nsight Systems: its
// exports hold no stacks this report reads, but NVTX ranges it reads, and
// nsys's backtraces show the call sites in Nsight Systems itself.
func nsysStackHint(f analyze.Framework, frames bool) string {
	return "The trace has no call stacks, so no call site can be named: put NVTX ranges around the parts of your code (" + nvtxHow(f, frames) + "), which this report names, and record backtraces to look the calls up in Nsight Systems: nsys profile --python-backtrace=cuda --python-sampling=true for Python, --backtrace=dwarf --cudabacktrace=all for native code."
}

// stackHintFor is the hint for a trace of framework f; frames is set when
// the trace has frames around the calls, but none of the user's code.
func stackHintFor(f analyze.Framework, frames bool) string {
	if frames {
		return "The trace's Python frames around these calls are all in library code (the frameworks, NumPy, Python's own modules), so no line of your code can be named: the Python tracer records a frame only when it is entered after the capture starts, so start the capture before the function that runs the loop is entered."
	}
	how, ok := stackHints[f]
	if !ok {
		how = stackHints[analyze.PyTorch]
	}
	return "The trace has no Python frames, so no call site can be named: " + how + "."
}

// jobSitesHint is a job's stack hint when its ranks' traces name lines of
// the user's code: the job's report names no call site of its own.
const jobSitesHint = "A job's report names no call site of its own: analyse a rank alone (tracegap analyze --no-job RANK-TRACE) for the lines of your code that held its device idle."

// JobStackHint is the stack hint of a job's overall result, which names no
// call site: how to record Python stacks (the first rank's hint that has
// one, in the ranks' order), else where the ranks' call sites are named.
// Ranks without device work are skipped; none with it gives "".
func JobStackHint(ranks []*analyze.Result) string {
	active := false
	for _, r := range ranks {
		if r == nil || r.Verdict == analyze.NoDevice {
			continue
		}
		if r.StackHint != "" {
			return r.StackHint
		}
		active = true
	}
	if active {
		return jobSitesHint
	}
	return ""
}

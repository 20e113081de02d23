package analyze

import (
	"fmt"
	"github.com/tracegap/tracegap/internal/human"
)

// hostOnlySteps says what a trace without device work still shows: its
// steps and the share of them the host spent in the input pipeline (the
// time any host thread was inside an input event and not in a blocking
// call, merged over the threads). Empty when the trace has no steps.
func (a *analyzer) hostOnlySteps() string {
	pattern, err := a.stepPattern()
	if err != nil {
		return "" // Validate has compiled it already
	}
	scan := a.scanHost(pattern)
	steps, src := a.findSteps(scan)
	if len(steps) == 0 {
		return ""
	}
	var loading []Interval
	for _, th := range a.scanned {
		loading = union(loading, subtract(th.inputs, th.syncs))
	}
	var dur, input int64
	for _, s := range steps {
		dur += s.end - s.start
		input += timeIn(loading, Interval{s.start, s.end})
	}
	n := int64(len(steps))
	msg := fmt.Sprintf("host only: %s (%s) of %s on average", plural(len(steps), "step"), src, human.Duration(dur/n))
	if input == 0 {
		return msg + "; no input pipeline event in them"
	}
	return msg + fmt.Sprintf("; the input pipeline takes %s of each, %s of the steps' time", human.Duration(input/n), human.Share(float64(input)/float64(max(dur, 1))))
}

// Package trackname holds what the names on tracks mean to tracegap
// beyond package trace's own API: the order of device ids, the process
// that holds tracegap's own annotations, and which source files are a
// library's rather than the user's. Package trace imports
// it, so it imports nothing of tracegap's.
package trackname

import (
	"strconv"
	"strings"
)

// CompareDevice orders device ids by kind and then by number, so that
// "GPU:2" sorts before "GPU:10".
func CompareDevice(a, b string) int {
	ak, an := splitDevice(a)
	bk, bn := splitDevice(b)
	if c := strings.Compare(ak, bk); c != 0 {
		return c
	}
	if an != bn {
		if an < bn {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func splitDevice(id string) (string, int) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return id, -1
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil {
		return id, -1
	}
	return id[:i], n
}

// AnnotationProcess names the process (Chrome JSON) and, after
// "/device:CUSTOM:", the plane (XPlane) that tracegap's annotated traces
// add: its gap and step slices are conclusions, not host work, so readers
// keep its tracks as context and an annotated trace analyses as the
// original did.
const AnnotationProcess = "tracegap"

// AnnotationCategory begins the category of every event of the "tracegap"
// process in an annotated Chrome trace ("tracegap.gap", "tracegap.step",
// "tracegap.verdict"): the annotation ends the trace's events, so its last
// event has one.
const AnnotationCategory = AnnotationProcess + "."

// AnnotationPlane names the plane an annotated XPlane adds, after the
// trace's own planes: XProf's prefix for planes of its own.
const AnnotationPlane = "/device:CUSTOM:" + AnnotationProcess

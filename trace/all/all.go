// Package all registers every trace format that tracegap ships with the
// trace package. A program that reads traces imports it for its side
// effect, so that adding a format means adding it here alone:
//
//	import _ "github.com/tracegap/tracegap/trace/all"
package all

import (
	_ "github.com/tracegap/tracegap/internal/trace/chrome" // Chrome trace-event JSON
	_ "github.com/tracegap/tracegap/internal/trace/nsight" // Nsight Systems SQLite export
	_ "github.com/tracegap/tracegap/internal/trace/xplane" // XPlane protobuf
)

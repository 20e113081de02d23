// Package xplane reads XPlane protobuf traces (an XSpace message, as JAX,
// TensorFlow and XProf write to *.xplane.pb) into the trace model. It
// registers the format "xplane" with package trace.
//
// The input is walked by hand with protowire: the generated types in
// xplanepb cost about ten times the file's size and run at a tenth of the
// speed. The input is walked twice: once to find each plane's parts and
// count its lines' events, once to decode them.
// Events become:
//
//   - on "/device:GPU:N" planes, "Stream #S(...)" lines: device work of
//     device "GPU:N"; other lines there are overlays;
//   - on "/device:TPU:N" planes, the "XLA Ops" line: device work of
//     "TPU:N"; other lines there are overlays;
//   - on "/host:CPU", a host track per line (thread);
//   - on other planes ("/host:metadata", "/device:CUSTOM:...", "Task
//     Environment"): overlays on TrackOther tracks, kept as context.
//
// Derived lines (XProf's views: "Steps", "XLA Modules", "Framework Ops",
// "TensorFlow Ops", ..., and any device line with an id from 0xdeadbeef up)
// are Derived tracks of overlays, never work.
//
// Times are line.timestamp_ns + offset_ps/1000 and durations are rounded
// so that events abutting in picoseconds abut in nanoseconds. Stats are
// interpreted only where the analysis uses them: correlation_id becomes
// Event.Corr (through Builder.Corr); events on a "Steps" line and host events with a step_num
// stat or an _r stat of 1 (a step's root) get FlagStep, and a step name
// without a number gets one appended from step_num or group_id
// ("train_step#7"); copies get FlagMemcpy, FlagDtoH and FlagPageable from
// their names ("MemcpyD2H") and memcpy_details stats, whose "size:" goes
// to Trace.CopyBytes under the event's Corr. Names are an event
// metadata's display_name when it has one (the short op name on TPU),
// else its name. Meta gets "hostname", "planes", "lines", and where the
// planes say so "device_vendor", "device_type", "profile_start_time_ns"
// and "profile_stop_time_ns".
//
// The "/host:metadata" plane's HLO protos give Trace.Programs: each
// program's lines of user code, read from its ops' OpMetadata (hlo.go),
// and the runs of device work with its program_id (Trace.ProgramRuns).
package xplane

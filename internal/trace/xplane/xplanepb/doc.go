// Package xplanepb holds the generated Go types of the XSpace protobuf
// (xplane.proto). The reader in internal/trace/xplane walks the wire format by hand
// for speed; these types serve the writer of generated test traces and
// anything that wants a whole XSpace as a message.
package xplanepb

//go:generate protoc --go_out=. --go_opt=paths=source_relative xplane.proto

package chrome

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
)

// probeHead is how much of a trace ProbeRank reads: Kineto writes
// distributedInfo after deviceProperties and before the events.
const probeHead = 1 << 20

var (
	distributedRe = regexp.MustCompile(`"distributedInfo"\s*:\s*\{`)
	rankRe        = regexp.MustCompile(`"rank"\s*:\s*(\d+)`)
	worldRe       = regexp.MustCompile(`"world_size"\s*:\s*(\d+)`)
)

// ProbeRank reads the rank and world size from the distributedInfo object
// that PyTorch writes near the start of a trace, reading at most the first
// MiB of r (decompressed). ok is false when the head holds none.
func ProbeRank(r io.Reader) (rank, world int, ok bool) {
	head, _ := io.ReadAll(io.LimitReader(r, probeHead)) // a short or cut file still has its head
	loc := distributedRe.FindIndex(head)
	if loc == nil {
		return 0, 0, false
	}
	info := head[loc[1]:min(len(head), loc[1]+4096)]
	if i := bytes.Index(info, []byte(`"traceEvents"`)); i >= 0 {
		info = info[:i]
	}
	rm, wm := rankRe.FindSubmatch(info), worldRe.FindSubmatch(info)
	if rm == nil || wm == nil {
		return 0, 0, false
	}
	rank, err1 := strconv.Atoi(string(rm[1]))
	world, err2 := strconv.Atoi(string(wm[1]))
	return rank, world, err1 == nil && err2 == nil
}

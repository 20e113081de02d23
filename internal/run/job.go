package run

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/trace"
)

// AnalyzeJob reads every rank's trace, at most Jobs at a time, and
// analyses them as one distributed job. Every rank is held in memory while
// the job is analysed, so the budget admits their needs together. Every
// input that cannot be read is named in the error, one line each.
func (e *Engine) AnalyzeJob(ctx context.Context, paths []string) (*analyze.JobResult, error) {
	ts := make([]*trace.Trace, len(paths))
	releases := make([]func(), len(paths))
	errs := make([]error, len(paths))
	defer func() {
		for _, r := range releases {
			if r != nil {
				r()
			}
		}
	}()
	ranks := *e
	if e.Budget != nil {
		release, err := e.admitJob(ctx, paths)
		if err != nil {
			return nil, err
		}
		defer release()
		ranks.Budget = nil // admitted together above
	}
	each(len(paths), e.Jobs, func(i int) {
		in := e.input(paths[i])
		err := Protect("reading", func() error {
			var err error
			ts[i], releases[i], err = ranks.read(ctx, in)
			return err
		})
		if err != nil {
			errs[i] = Named(in.name(), err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var jr *analyze.JobResult
	err := Protect("analysing the job", func() error {
		var err error
		jr, err = analyze.AnalyzeJob(ts, e.Analysis)
		return err
	})
	return jr, err
}

// admitJob acquires the needs of every rank at once.
func (e *Engine) admitJob(ctx context.Context, paths []string) (release func(), err error) {
	var total int64
	for _, p := range paths {
		in := e.input(p)
		if in.R != nil {
			continue // a stream is admitted at its fixed cost
		}
		r, size, closeIn, err := open(in)
		if err != nil {
			continue // reading it names the error
		}
		n, _ := e.estimate(r, size, in.Format)
		closeIn()
		total += n
	}
	release, err = e.Budget.Acquire(ctx, total)
	if err != nil {
		return nil, fmt.Errorf("job of %d ranks: %w", len(paths), err)
	}
	return release, nil
}

// LooksLikeJob reports whether the files are the ranks of one job: at
// least two, each naming a different rank of the same world size in the
// distributedInfo near its start (where PyTorch writes it).
func LooksLikeJob(paths []string) bool {
	if len(paths) < 2 {
		return false
	}
	ranks := map[int]bool{}
	world := -1
	for _, p := range paths {
		r, w, ok := probe(p)
		if !ok || ranks[r] || (world >= 0 && w != world) {
			return false
		}
		ranks[r], world = true, w
	}
	return true
}

// probe reads a trace's rank and world size; a variable so that the probe
// can move to package trace without touching LooksLikeJob.
var probe = probeRank

// probeHead is how much of a (decompressed) trace probeRank reads: Kineto
// writes distributedInfo after deviceProperties and before the events.
const probeHead = 1 << 20

var (
	distributedRe = regexp.MustCompile(`"distributedInfo"\s*:\s*\{`)
	rankRe        = regexp.MustCompile(`"rank"\s*:\s*(\d+)`)
	worldRe       = regexp.MustCompile(`"world_size"\s*:\s*(\d+)`)
)

// probeRank reads the rank and world size from the distributedInfo near the
// start of a Chrome trace, gzipped or not, without reading the whole file.
func probeRank(path string) (rank, world int, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, 0, false
		}
		r = zr
	}
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

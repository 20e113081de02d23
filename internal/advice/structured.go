package advice

import (
	"fmt"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// This file gives findings their figures as fields beside the English:
// the idle a finding is about, the calls and call sites it names, and the
// settings it recommends, so that scripts and rules need not parse
// sentences.

// structure fills the fields of the findings made from the causes' tallies
// and adds the findings about copies and known op costs.
func (a *adviser) structure(fs []analyze.Finding) []analyze.Finding {
	r := a.r
	wd := float64(max(r.Window.Dur(), 1))
	for i := range fs {
		f := &fs[i]
		var c analyze.Cause
		switch f.ID {
		case FindForcedSync:
			f.Idle, c = r.Idle.Sync(), analyze.InSync
			f.Calls = a.f.Sync.Names(3)
		case FindSlowInput, FindInlineInput:
			f.Idle, c = r.Idle.Of(analyze.Input), analyze.Input
			f.Calls = a.f.Causes[analyze.Input].Names(1)
		case FindDispatch:
			f.Idle, c = r.Idle.Of(analyze.Host), analyze.Host
			f.Calls = a.f.Causes[analyze.Host].Names(3)
		case FindCommWait:
			f.Idle, c = r.Idle.Of(analyze.Host), analyze.Host
			f.Calls = a.commCalls()
		case FindRuntimeWork:
			f.Idle, c = r.Idle.Of(analyze.Runtime), analyze.Runtime
			f.Calls = a.f.Causes[analyze.Runtime].Names(3)
		case FindUntracedThread:
			f.Idle, c = r.Idle.Of(analyze.Untraced), analyze.Untraced
		default:
			continue
		}
		f.Share = float64(f.Idle) / wd
		switch {
		case f.ID == FindCommWait:
			for _, call := range f.Calls {
				f.Sites = append(f.Sites, a.sitesOf(c, call, 1)...)
			}
		case c != analyze.Untraced:
			f.Sites = a.sitesOf(c, "", 3)
		}
		if l := siteList(f.Sites); l != "" {
			f.Message += " Called from " + l + "."
		}
		if f.ID == FindForcedSync {
			f.Message += a.syncCountNote(a.sitesOf(analyze.InSync, "", len(r.CallSites)))
		}
	}
	if f, ok := a.copyFinding(); ok {
		fs = append(fs, f)
	}
	return append(fs, a.opFindings(wd)...)
}

// minOpShare is the share of the window a known op cost must hold the
// devices idle for to be a finding of its own.
const minOpShare = 0.02

// opFindings names the known op costs (optimizer step, zero_grad, collate)
// that hold the devices idle for more than minOpShare of the window, each
// with its own fix.
func (a *adviser) opFindings(wd float64) []analyze.Finding {
	var fs []analyze.Finding
	for _, o := range a.r.Ops {
		share := float64(o.Idle) / wd
		if o.Fix == "" || share <= minOpShare {
			continue
		}
		where := ""
		if !o.Frame.IsZero() {
			where = ", called at " + o.Frame.String()
		}
		per := ""
		if o.Calls > 0 {
			per = fmt.Sprintf(" (%s, %s a call, %.1f launches a call)", human.Count(o.Calls, "call"), human.Duration(o.Host/int64(o.Calls)), float64(o.Launches)/float64(o.Calls))
		}
		f := analyze.Finding{
			ID: FindCostlyOp, Severity: "info",
			Message: fmt.Sprintf("The %s waits on %s%s for %s, %s of the window%s.",
				a.deviceWord(), o.Name, where, human.Duration(o.Idle), human.Share(share), per),
			Fix:  o.Fix,
			Idle: o.Idle, Share: share, Calls: []string{o.Name},
			Sites: a.sitesOf(analyze.Host, o.Name, 3),
		}
		if o.Setting != nil {
			f.Settings = []analyze.Setting{*o.Setting}
		}
		if share > a.r.Options.InputThreshold {
			f.Severity = "medium"
		}
		fs = append(fs, f)
	}
	return fs
}

// sitesOf returns the call sites of cause c (in-sync: all sync), of the
// call named call when not empty, most idle first, at most k.
func (a *adviser) sitesOf(c analyze.Cause, call string, k int) []analyze.CallSite {
	var out []analyze.CallSite
	for _, s := range a.r.CallSites {
		if s.Cause == c && (call == "" || s.Call == call) && len(out) < k {
			out = append(out, s)
		}
	}
	return out
}

// workersFor returns the loader workers that hide load per step behind
// compute per step: ceil(load / compute) + 1, one spare.
func workersFor(load, compute int64) int {
	return ceilDiv(load, compute) + 1
}

// siteList writes call sites for a message: "train.py:45 <module> (5
// calls)".
func siteList(sites []analyze.CallSite) string {
	var parts []string
	for _, s := range sites {
		if !s.Frame.IsZero() {
			parts = append(parts, fmt.Sprintf("%s (%s)", s.Where(), human.Count(s.Count, "call")))
		}
	}
	return strings.Join(parts, ", ")
}

// ceilDiv returns ceil(x / y) for y > 0.
func ceilDiv(x, y int64) int {
	return int((x + y - 1) / y)
}

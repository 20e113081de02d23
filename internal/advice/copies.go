package advice

import (
	"cmp"
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// copyFinding explains the copy kind that holds the devices idle most, when
// it blocks the host and its idle passes the sync threshold.
func (a *adviser) copyFinding() (analyze.Finding, bool) {
	r := a.r
	wd := max(r.Window.Dur(), 1)
	if len(r.Copies) == 0 {
		return analyze.Finding{}, false
	}
	c := &r.Copies[0]
	share := float64(c.Idle) / float64(wd)
	if !c.Blocking || c.Top.Count == 0 || share <= a.r.Options.SyncThreshold {
		return analyze.Finding{}, false
	}
	t := &c.Top
	where := ""
	if !t.Frame.IsZero() {
		where = " at " + t.Frame.String()
	}
	what := "device-to-host"
	if c.Direction != "DtoH" {
		what = "host-to-device"
	}
	size := "copy"
	if t.Bytes > 0 {
		size = human.Bytes(t.Bytes) + " copy"
	}
	mem := map[bool]string{true: "into " + cmp.Or(c.Memory, "host"), false: "from " + cmp.Or(c.Memory, "host")}[c.Direction == "DtoH"]
	msg := fmt.Sprintf("A %s %s %s memory (%s%s) %s: the %s drains its queue and idles %s, %s of the window, while the host waits for it.",
		what, size, mem, t.Call, where, a.copyOften(t), a.deviceWord(), human.Duration(c.Idle), human.Share(share))
	fix, set := a.copyFix(c.Direction)
	return analyze.Finding{
		ID: FindBlockingCopy, Severity: "medium", Message: msg, Fix: fix,
		Idle: c.Idle, Share: share, Calls: []string{t.Call}, Settings: set,
		Sites: a.sitesOf(analyze.InSync, t.Call, 3),
	}, true
}

// copyOften says how long and how often copies of size t block the host:
// per step in a window of steps, else in all over the window, with the
// share of the window's blocking calls they are when the forced-sync
// finding counts those, so that the two findings' counts agree.
func (a *adviser) copyOften(t *analyze.CopySize) string {
	r := a.r
	if steps := r.Window.Steps; steps > 0 {
		return fmt.Sprintf("blocks the host for %s per step (%s per step)",
			human.Duration(t.HostBlocked/int64(steps)), human.Count(max(t.Count/steps, 1), "copy"))
	}
	of := ""
	wd := float64(max(r.Window.Dur(), 1))
	if n := a.f.SyncCalls; t.Count <= n && float64(r.Idle.Sync())/wd > r.Options.SyncThreshold {
		of = fmt.Sprintf(" (%d of the window's %s)", t.Count, human.Count(n, "blocking call"))
	}
	return fmt.Sprintf("blocks the host for %s in all, over %s%s", human.Duration(t.HostBlocked), human.Count(t.Count, "copy"), of)
}

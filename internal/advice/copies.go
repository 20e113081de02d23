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
	steps := max(r.Window.Steps, 1)
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
	msg := fmt.Sprintf("A %s %s %s memory (%s%s) blocks the host for %s per step (%s per step): the %s drains its queue and idles %s, %s of the window, while the host waits for it.",
		what, size, map[bool]string{true: "into " + cmp.Or(c.Memory, "host"), false: "from " + cmp.Or(c.Memory, "host")}[c.Direction == "DtoH"], t.Call, where, human.Duration(t.HostBlocked/int64(steps)),
		plural(max(t.Count/steps, 1), "copy"), a.deviceWord(), human.Duration(c.Idle), human.Share(share))
	fix := "Copy from pinned memory asynchronously: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to(device, non_blocking=True)."
	set := analyze.Setting{Name: "non_blocking", Value: "True"}
	if c.Direction == "DtoH" {
		fix = "Do not read device values on the step: keep them on the device, or copy into a pinned buffer with non_blocking=True and wait on an event a step later; a device-to-host copy into pageable memory (.cpu(), .tolist(), .item()) waits for all queued work and then for the copy."
		set = analyze.Setting{Name: "pin_memory", Value: "True"}
	}
	return analyze.Finding{
		ID: FindBlockingCopy, Severity: "medium", Message: msg, Fix: fix,
		Idle: c.Idle, Share: share, Calls: []string{t.Call}, Settings: []analyze.Setting{set},
		Sites: a.sitesOf(analyze.InSync, t.Call, 3),
	}, true
}

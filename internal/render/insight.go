package render

import (
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/report"
)

// The wire forms of call sites, ops, copies and settings, and of the
// findings' structured fields (docs/report-v1.md).

func causeWord(c analyze.Cause) string {
	if c == analyze.InSync {
		return "sync"
	}
	return c.String()
}

func jsonSites(sites []analyze.CallSite, win int64) []report.CallSiteV1 {
	out := []report.CallSiteV1{}
	for _, s := range sites {
		v := report.CallSiteV1{
			File: s.Frame.File, Line: s.Frame.Line, Function: s.Frame.Function, Call: s.Call, Via: s.Via.String(),
			Cause: causeWord(s.Cause), Count: s.Count, IdleNs: s.Idle, Share: round4(share(s.Idle, win)),
		}
		if p := s.Program; !p.IsZero() {
			v.Program = &report.ProgramV1{Name: p.Name, File: p.File, Line: p.Line, Op: p.Op}
		}
		out = append(out, v)
	}
	return out
}

func jsonOps(ops []analyze.OpCost, win int64) []report.OpV1 {
	out := []report.OpV1{}
	for _, o := range ops {
		v := report.OpV1{Name: o.Name, Calls: o.Calls, HostNs: o.Host, Launches: o.Launches, IdleNs: o.Idle,
			Share: round4(share(o.Idle, win)), Site: o.Frame.String(), Fix: o.Fix}
		if o.Calls > 0 {
			v.NsPerCall = o.Host / int64(o.Calls)
			v.LaunchesPerCall = round4(float64(o.Launches) / float64(o.Calls))
		}
		if o.Setting != nil {
			v.Setting = &report.SettingV1{Name: o.Setting.Name, Value: o.Setting.Value}
		}
		out = append(out, v)
	}
	return out
}

func jsonCopies(cs []analyze.CopyStat, win int64) []report.CopyV1 {
	out := []report.CopyV1{}
	for _, c := range cs {
		v := report.CopyV1{Direction: c.Direction, Memory: c.Memory, Count: c.Count, Bytes: c.Bytes,
			DeviceNs: c.Device, Blocking: c.Blocking, HostBlockedNs: c.HostBlocked,
			IdleNs: c.Idle, Share: round4(share(c.Idle, win))}
		if t := c.Top; t.Count > 0 {
			v.Top = &report.CopySizeV1{Bytes: t.Bytes, Count: t.Count, HostBlockedNs: t.HostBlocked, IdleNs: t.Idle, Call: t.Call, Site: t.Frame.String()}
		}
		out = append(out, v)
	}
	return out
}

func jsonFinding(f *analyze.Finding, win int64) report.FindingV1 {
	v := report.FindingV1{ID: f.ID, Severity: f.Severity, Message: f.Message, Fix: f.Fix,
		IdleNs: f.Idle, Share: round4(f.Share), Calls: nonNil(f.Calls),
		Sites: jsonSites(f.Sites, win), Settings: []report.SettingV1{}}
	for _, s := range f.Settings {
		v.Settings = append(v.Settings, report.SettingV1{Name: s.Name, Value: s.Value})
	}
	return v
}

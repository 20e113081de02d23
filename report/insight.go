package report

import "github.com/tracegap/tracegap/analyze"

// The wire forms of call sites, ops, copies and settings, and of the
// findings' structured fields (docs/report-v1.md).

// CallSiteV1 is a call with the user-code line it came from.
type CallSiteV1 struct {
	// File, Line and Function name the innermost user-code frame; empty
	// and 0 when the trace has no Python stacks.
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Call     string `json:"call"`
	// Via is the library frame the user's line called through ("file:line
	// function"), absent when there is none to name (see
	// analyze.CallSite.Via).
	Via string `json:"via,omitempty"`
	// Cause is "sync" (in-sync and after-sync), "input", "host" or
	// "runtime".
	Cause  string  `json:"cause"`
	Count  int     `json:"count"`
	IdleNs int64   `json:"idle_ns"`
	Share  float64 `json:"share"`
}

// OpV1 is a row of the per-op host table.
type OpV1 struct {
	Name            string  `json:"name"`
	Calls           int     `json:"calls"`
	HostNs          int64   `json:"host_ns"`
	NsPerCall       int64   `json:"ns_per_call"`
	Launches        int     `json:"launches"`
	LaunchesPerCall float64 `json:"launches_per_call"`
	IdleNs          int64   `json:"idle_ns"`
	Share           float64 `json:"share"`
	// Site is the user-code line the op is mostly called from ("" when
	// unknown); Fix and Setting are a known cost's own.
	Site    string     `json:"site"`
	Fix     string     `json:"fix"`
	Setting *SettingV1 `json:"setting"`
}

// CopyV1 sums the window's copies of one kind.
type CopyV1 struct {
	Direction     string  `json:"direction"`
	Memory        string  `json:"memory"`
	Count         int     `json:"count"`
	Bytes         int64   `json:"bytes"`
	DeviceNs      int64   `json:"device_ns"`
	Blocking      bool    `json:"blocking"`
	HostBlockedNs int64   `json:"host_blocked_ns"`
	IdleNs        int64   `json:"idle_ns"`
	Share         float64 `json:"share"`
	// Top is the copy size that blocked the host longest; null when none
	// blocks.
	Top *CopySizeV1 `json:"top"`
}

// CopySizeV1 is the copies of one kind and size.
type CopySizeV1 struct {
	Bytes         int64  `json:"bytes"`
	Count         int    `json:"count"`
	HostBlockedNs int64  `json:"host_blocked_ns"`
	IdleNs        int64  `json:"idle_ns"`
	Call          string `json:"call"`
	Site          string `json:"site"`
}

// SettingV1 is a recommended setting.
type SettingV1 struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func causeWord(c analyze.Cause) string {
	if c == analyze.InSync {
		return "sync"
	}
	return c.String()
}

func jsonSites(sites []analyze.CallSite, win int64) []CallSiteV1 {
	out := []CallSiteV1{}
	for _, s := range sites {
		out = append(out, CallSiteV1{
			File: s.Frame.File, Line: s.Frame.Line, Function: s.Frame.Function, Call: s.Call, Via: s.Via.String(),
			Cause: causeWord(s.Cause), Count: s.Count, IdleNs: s.Idle, Share: round4(share(s.Idle, win)),
		})
	}
	return out
}

func jsonOps(ops []analyze.OpCost, win int64) []OpV1 {
	out := []OpV1{}
	for _, o := range ops {
		v := OpV1{Name: o.Name, Calls: o.Calls, HostNs: o.Host, Launches: o.Launches, IdleNs: o.Idle,
			Share: round4(share(o.Idle, win)), Site: o.Frame.String(), Fix: o.Fix}
		if o.Calls > 0 {
			v.NsPerCall = o.Host / int64(o.Calls)
			v.LaunchesPerCall = round4(float64(o.Launches) / float64(o.Calls))
		}
		if o.Setting != nil {
			v.Setting = &SettingV1{o.Setting.Name, o.Setting.Value}
		}
		out = append(out, v)
	}
	return out
}

func jsonCopies(cs []analyze.CopyStat, win int64) []CopyV1 {
	out := []CopyV1{}
	for _, c := range cs {
		v := CopyV1{Direction: c.Direction, Memory: c.Memory, Count: c.Count, Bytes: c.Bytes,
			DeviceNs: c.Device, Blocking: c.Blocking, HostBlockedNs: c.HostBlocked,
			IdleNs: c.Idle, Share: round4(share(c.Idle, win))}
		if t := c.Top; t.Count > 0 {
			v.Top = &CopySizeV1{Bytes: t.Bytes, Count: t.Count, HostBlockedNs: t.HostBlocked, IdleNs: t.Idle, Call: t.Call, Site: t.Frame.String()}
		}
		out = append(out, v)
	}
	return out
}

func jsonFinding(f *analyze.Finding, win int64) FindingV1 {
	v := FindingV1{ID: f.ID, Severity: f.Severity, Message: f.Message, Fix: f.Fix,
		IdleNs: f.Idle, Share: round4(f.Share), Calls: nonNil(f.Calls),
		Sites: jsonSites(f.Sites, win), Settings: []SettingV1{}}
	for _, s := range f.Settings {
		v.Settings = append(v.Settings, SettingV1{s.Name, s.Value})
	}
	return v
}

package render

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// SARIF (Static Analysis Results Interchange Format, OASIS, version 2.1.0)
// is what CI code scanning reads: GitHub shows each result on the line of
// the pull request it names. `tracegap check --format sarif` writes one
// result per failed rule and call site of the trace that held the device
// idle, located at the site's Python file and line, so that a forced sync
// or an inline loader shows on the line that causes it.

// SARIFFile is one input of a check, as WriteSARIF reports it.
type SARIFFile struct {
	Path string
	// Err is why the input could not be used, naming the file as the
	// command line's error does ("c.json: unrecognised format"); "" when
	// it was usable.
	Err string
	// Failures are the rules it failed.
	Failures []SARIFFailure
	// Result is its analysis (nil when Err is set).
	Result *analyze.Result
}

// SARIFFailure is a failed rule: its name and the one-line message.
type SARIFFailure struct{ Rule, Message string }

// sarifSites is how many call sites a failure is located at, most idle
// first.
const sarifSites = 10

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
	// URIBaseID is "%SRCROOT%" for a URI made relative to the source
	// root (see WriteSARIF), as code scanning reads it.
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// sarifRuleText describes the rules check applies; a rule not listed is
// described by its name.
var sarifRuleText = map[string]string{
	"verdict":         "the run's verdict is one the check fails on",
	"max-idle":        "the device idles more of the window than allowed",
	"max-sync-idle":   "the device idles on blocking calls more than allowed",
	"max-input-idle":  "the device idles on the input pipeline more than allowed",
	"min-utilization": "the device is busy less of the window than required",
	"min-steps":       "the trace holds fewer steady-state steps than required",
	"fail-on-finding": "a finding the check fails on",
	"input":           "the trace could not be read or analysed",
}

// WriteSARIF writes the check of files as a SARIF 2.1.0 log. root, when
// set, is where the traced code's files sit on the machine that ran it
// ("/workspace/"): a location under it is written relative to it, against
// %SRCROOT%, so that code scanning finds the file in the repository; one
// elsewhere is written as the trace names it.
func WriteSARIF(w io.Writer, version string, files []SARIFFile, root string) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{
		Name: "tracegap", Version: version, InformationURI: "https://github.com/tracegap/tracegap",
	}}, Results: []sarifResult{}}
	rules := map[string]bool{}
	for _, f := range files {
		if f.Err != "" {
			rules["input"] = true
			run.Results = append(run.Results, sarifResult{RuleID: "input", Level: "error",
				Message: sarifMessage{sarifText(f.Err)}})
			continue
		}
		for _, fail := range f.Failures {
			rules[fail.Rule] = true
			run.Results = append(run.Results, failureResults(f, fail, root)...)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(rules)) {
		text := sarifRuleText[id]
		if text == "" {
			text = id
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{text}})
	}
	if run.Tool.Driver.Rules == nil {
		run.Tool.Driver.Rules = []sarifRule{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// failureResults locates a failed rule at the call sites of f that held
// the device idle and name a Python line, one result each, or gives one
// result without a location that says how to record the lines.
func failureResults(f SARIFFile, fail SARIFFailure, root string) []sarifResult {
	msg := f.Path + ": " + fail.Message
	var out []sarifResult
	r := f.Result
	for _, s := range r.CallSites {
		if len(out) == sarifSites {
			break
		}
		if res, ok := siteResult(msg, fail.Rule, r, s, root); ok {
			out = append(out, res)
		}
	}
	if len(out) > 0 {
		return out
	}
	hint := r.StackHint
	if hint == "" {
		hint = "No call site of the trace names a line of your code."
	}
	return []sarifResult{{RuleID: fail.Rule, Level: "error", Message: sarifMessage{sarifText(msg + ". " + hint)}}}
}

// siteResult is the result of rule at call site s, located at its line
// of user code or, without one, at the line of the program the device
// waited on; false when s names neither or caused no idle.
func siteResult(msg, rule string, r *analyze.Result, s analyze.CallSite, root string) (sarifResult, bool) {
	if s.Idle <= 0 {
		return sarifResult{}, false
	}
	idle := fmt.Sprintf("%s (%s of the window, %s, %d calls)", human.Duration(s.Idle), human.Share(share(s.Idle, r.Window.Dur())), s.Cause, s.Count)
	var file string
	var line int
	var text string
	switch p := s.Program; {
	case !s.Frame.IsZero() && s.Frame.Line > 0:
		file, line = s.Frame.File, s.Frame.Line
		text = fmt.Sprintf("%s. This line held the device idle for %s: %s", msg, idle, s.Call)
		if !s.Via.IsZero() {
			text += " via " + s.Via.String()
		}
	case s.Frame.IsZero() && !p.IsZero() && p.Line > 0:
		file, line = p.File, p.Line
		text = fmt.Sprintf("%s. %s held the device idle for %s waiting on the program %s, whose ops come from this line (%s): this is where the waited-on program's code is, not the blocking call, which the trace shows in library code only",
			msg, s.Call, idle, p.Name, p.Op)
	default:
		return sarifResult{}, false
	}
	return sarifResult{RuleID: rule, Level: "error", Message: sarifMessage{sarifText(text)},
		Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
			ArtifactLocation: artifactOf(file, root),
			Region:           &sarifRegion{StartLine: line},
		}}}}, true
}

// artifactOf locates file: relative to root, against %SRCROOT%, when it is
// under root, else as it is.
func artifactOf(file, root string) sarifArtifact {
	if root != "" {
		root = strings.TrimSuffix(root, "/") + "/"
		if rel, ok := strings.CutPrefix(file, root); ok && rel != "" {
			return sarifArtifact{URI: sarifURI(rel), URIBaseID: "%SRCROOT%"}
		}
	}
	return sarifArtifact{URI: sarifURI(file)}
}

// sarifText makes untrusted text (names from a trace, file names) inert
// wherever the log is shown: a CI log, a pull request's annotation.
func sarifText(s string) string { return untrusted.Terminal(s) }

// sarifURI writes a frame's file as a URI reference: its path with the
// characters a URI cannot hold escaped.
func sarifURI(file string) string {
	var b strings.Builder
	for _, c := range []byte(file) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"%<>\^`+"`{|}#?[]", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

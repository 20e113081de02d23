package check

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
)

// The rules are set by name and text alike from every front end: a
// command-line flag (--max-idle 10%), a config key (max_idle = "10%") and a
// query parameter of the service (?max-idle=10%) all go through a Param's
// Value, so that they accept the same text and mean the same rule.

// A Value is one rule's setting as text. Its methods are those of
// pflag.Value, so a command line takes a Param as a flag.
type Value interface {
	String() string
	// Set parses one use of the setting: a list grows with each use
	// after the first, which replaces the default.
	Set(s string) error
	// Type names the kind of value: "verdicts", "percent", "int",
	// "stringArray" or "bool" (a switch: given alone, it is on).
	Type() string
}

// A Param is one rule settable by name.
type Param struct {
	// Name is the flag and query parameter's name ("max-idle"); the
	// config key is the same with "_" for "-".
	Name  string
	Usage string
	Value Value
}

// Params returns the settings of r's rules, each writing into r, starting
// from r as it is.
func (r *Rules) Params() []Param {
	return []Param{
		{"fail-on", "verdicts that fail the check (comma-separated, or none)", &verdictList{v: &r.FailOn}},
		{"max-idle", "fail when attributed device idle exceeds this share of the window", &r.MaxIdle},
		{"max-sync-idle", "fail when sync-caused idle (in-sync + after-sync) exceeds this share of the window", &r.MaxSyncIdle},
		{"max-input-idle", "fail when input-caused idle exceeds this share of the window", &r.MaxInputIdle},
		{"min-utilization", "fail when any device is busy less than this share of the window", &r.MinUtilization},
		{"min-steps", "fail a capture with fewer steady steps than this (too short to judge)", (*count)(&r.MinSteps)},
		{"fail-on-finding", "finding kinds that fail the check when found with high or medium severity (comma-separated: blocking-copy, forced-sync, ...)", &findingList{v: &r.FailOnFinding}},
		{"allow-no-device", "let a trace without device activity pass (by default it fails: a CUPTI permission failure or a cut trace looks the same)", (*switchValue)(&r.AllowNoDevice)},
	}
}

// Set applies named settings to r, each value of a name in turn as a
// repeated flag would be, then validates the rules. The names are those of
// Params; another is an error.
func (r *Rules) Set(values map[string][]string) error {
	params := r.Params()
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := slices.Index(names, k)
		if i < 0 {
			return fmt.Errorf("unknown rule %q: expected one of %s", k, strings.Join(names, ", "))
		}
		for _, v := range values[k] {
			if err := params[i].Value.Set(v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return r.Validate()
}

// ParsePercent parses a share written as a percentage ("5%") or as a
// fraction below 1 ("0.05"). A bare number of 1 or more is refused: "1"
// could mean 100% or 1%, so it must carry its "%".
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err == nil && !pct && v >= 1 {
		return 0, fmt.Errorf("invalid percentage %q: a bare number is ambiguous; expected a percentage like \"%g%%\" or a fraction below 1 like 0.05", s, v)
	}
	if pct {
		v /= 100
	}
	if err != nil || v < 0 || v > 1 || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid percentage %q: expected a value from 0%% to 100%%, like 5%% (or a fraction like 0.05)", s)
	}
	return v, nil
}

// String writes the limit as a percentage; "" when it is off.
func (l *Limit) String() string {
	if !l.On {
		return ""
	}
	return strconv.FormatFloat(l.Share*100, 'g', -1, 64) + "%"
}

// Set parses a percentage (ParsePercent) and turns the limit on.
func (l *Limit) Set(s string) error {
	v, err := ParsePercent(s)
	if err != nil {
		return err
	}
	l.Share, l.On = v, true
	return nil
}

// Type names the kind of value.
func (l *Limit) Type() string { return "percent" }

// verdictList sets a list of verdicts, written "sequential,data-bound"
// (repeatable) or "none". It is also a pflag.SliceValue, so that a config
// file's empty array clears it.
type verdictList struct {
	v       *[]analyze.Verdict
	changed bool
}

func (l *verdictList) String() string {
	s := make([]string, len(*l.v))
	for i, v := range *l.v {
		s[i] = string(v)
	}
	return strings.Join(s, ",")
}

func (l *verdictList) Type() string { return "verdicts" }

// Set parses a comma-separated list; the first use replaces the default.
func (l *verdictList) Set(s string) error {
	if !l.changed {
		*l.v, l.changed = nil, true
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "none" {
			continue
		}
		if err := l.Append(f); err != nil {
			return err
		}
	}
	return nil
}

// Append adds one verdict.
func (l *verdictList) Append(s string) error {
	v, err := ParseVerdict(s)
	if err != nil {
		return err
	}
	if !slices.Contains(*l.v, v) {
		*l.v = append(*l.v, v)
	}
	return nil
}

// Replace sets the whole list.
func (l *verdictList) Replace(s []string) error {
	*l.v, l.changed = nil, true
	for _, v := range s {
		if err := l.Append(v); err != nil {
			return err
		}
	}
	return nil
}

// GetSlice returns the list.
func (l *verdictList) GetSlice() []string {
	if len(*l.v) == 0 {
		return nil
	}
	return strings.Split(l.String(), ",")
}

// count sets an integer, parsed as a command-line flag's int is (base
// prefixes allowed).
type count int

func (c *count) String() string { return strconv.Itoa(int(*c)) }

func (c *count) Type() string { return "int" }

func (c *count) Set(s string) error {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 0, strconv.IntSize)
	if err != nil {
		return fmt.Errorf("invalid integer %q: expected a whole number like 3", s)
	}
	*c = count(v)
	return nil
}

// switchValue is a rule that is on or off.
type switchValue bool

func (b *switchValue) String() string { return strconv.FormatBool(bool(*b)) }

func (b *switchValue) Type() string { return "bool" }

func (b *switchValue) Set(s string) error {
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("invalid switch %q: expected true or false", s)
	}
	*b = switchValue(v)
	return nil
}

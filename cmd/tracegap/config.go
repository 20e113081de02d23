package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// A config file keeps a repository's rules and thresholds, so that CI runs
// "tracegap check --config tracegap.toml profiles/" and the rules live in
// review. It is a small subset of TOML, parsed here to avoid a dependency:
//
//	# comments
//	[check]
//	fail_on = ["sequential", "data-bound"]
//	max_idle = "10%"
//	min_steps = 3
//
//	[analysis]
//	min_gap = "50us"
//	sync_pattern = ["my_blocking_call"]
//
// Keys are the flag names with "_" for "-"; a section holds the flags of the
// command it names ([check], [compare]) and [analysis] the shared analysis
// flags. Values are strings ("..." or '...'), numbers, booleans and arrays of
// those (one element per flag use). A flag given on the command line wins
// over the file.

// configEntry is one "key = value" line (or lines, for an array).
type configEntry struct {
	section, key string
	line         int
	values       []string
}

// config is a parsed config file.
type config struct {
	path    string
	entries []configEntry
}

// configSections are the sections a config file may hold.
var configSections = []string{"analysis", "check", "compare"}

// loadConfig reads and parses the config file at path.
func loadConfig(path string) (*config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return parseConfig(path, string(data))
}

// parseConfig parses the text of a config file; path names it in errors.
func parseConfig(path, text string) (*config, error) {
	c := &config{path: path}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	section := ""
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimSpace(stripComment(lines[i]))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			name, ok := strings.CutSuffix(strings.TrimPrefix(line, "["), "]")
			name = strings.TrimSpace(name)
			if !ok || !slices.Contains(configSections, name) {
				return nil, fmt.Errorf("%s:%d: unknown section %s: expected one of [%s]", path, n, line, strings.Join(configSections, "], ["))
			}
			section = name
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || !isBareKey(key) {
			return nil, fmt.Errorf("%s:%d: expected key = value or [section], got %q", path, n, line)
		}
		if section == "" {
			return nil, fmt.Errorf("%s:%d: key %s outside a section: expected a [check], [compare] or [analysis] header first", path, n, key)
		}
		// An array may run over several lines: gather them until its
		// brackets balance.
		for strings.HasPrefix(val, "[") && !arrayClosed(val) && i+1 < len(lines) {
			i++
			val += " " + strings.TrimSpace(stripComment(lines[i]))
		}
		values, err := parseValue(val)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", path, n, key, err)
		}
		id := section + "." + key
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s:%d: %s set again in [%s] (first on line %d): expected each key once", path, n, key, section, prev)
		}
		seen[id] = n
		c.entries = append(c.entries, configEntry{section: section, key: key, line: n, values: values})
	}
	return c, nil
}

func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// stripComment drops a "#" comment that is not inside a string.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case quote != 0 && ch == '\\' && quote == '"':
			i++
		case quote != 0 && ch == quote:
			quote = 0
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
		case quote == 0 && ch == '#':
			return line[:i]
		}
	}
	return line
}

// arrayClosed reports whether the brackets outside strings balance.
func arrayClosed(s string) bool {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0 && ch == '\\' && quote == '"':
			i++
		case quote != 0 && ch == quote:
			quote = 0
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
		case quote == 0 && ch == '[':
			depth++
		case quote == 0 && ch == ']':
			depth--
		}
	}
	return depth <= 0 && quote == 0
}

// parseValue parses a scalar or a one-level array into the strings a flag's
// Set takes.
func parseValue(s string) ([]string, error) {
	if !strings.HasPrefix(s, "[") {
		v, rest, err := parseScalar(s)
		if err != nil {
			return nil, err
		}
		if rest != "" {
			return nil, fmt.Errorf("unexpected %q after the value", rest)
		}
		return []string{v}, nil
	}
	rest := strings.TrimSpace(s[1:])
	values := []string{}
	for {
		if strings.HasPrefix(rest, "]") {
			if r := strings.TrimSpace(rest[1:]); r != "" {
				return nil, fmt.Errorf("unexpected %q after the array", r)
			}
			return values, nil
		}
		if rest == "" {
			return nil, fmt.Errorf("array not closed: expected ]")
		}
		v, r, err := parseScalar(rest)
		if err != nil {
			return nil, err
		}
		values = append(values, v)
		rest = strings.TrimSpace(r)
		switch {
		case rest == "":
			return nil, fmt.Errorf("array not closed: expected ]")
		case strings.HasPrefix(rest, ","):
			rest = strings.TrimSpace(rest[1:])
		case !strings.HasPrefix(rest, "]"):
			return nil, fmt.Errorf("expected , or ] after array element %q, got %q", v, rest)
		}
	}
}

// parseScalar parses a string, number or boolean at the start of s and
// returns it and what follows.
func parseScalar(s string) (val, rest string, err error) {
	switch {
	case strings.HasPrefix(s, `"`):
		return parseBasicString(s)
	case strings.HasPrefix(s, "'"):
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "", fmt.Errorf("string %s not closed: expected '", s)
		}
		return s[1 : end+1], strings.TrimSpace(s[end+2:]), nil
	}
	end := strings.IndexAny(s, ",] \t")
	if end < 0 {
		end = len(s)
	}
	tok := s[:end]
	if tok == "true" || tok == "false" {
		return tok, strings.TrimSpace(s[end:]), nil
	}
	num := strings.ReplaceAll(tok, "_", "")
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		return "", "", fmt.Errorf("invalid value %q: expected a quoted string, a number, true, false or an array [...]", tok)
	}
	return num, strings.TrimSpace(s[end:]), nil
}

func parseBasicString(s string) (val, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '"':
			return b.String(), strings.TrimSpace(s[i+1:]), nil
		case '\\':
			if i+1 == len(s) {
				return "", "", fmt.Errorf("string %s not closed: expected \"", s)
			}
			i++
			switch e := s[i]; e {
			case '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", "", fmt.Errorf(`invalid escape \%c in %s: expected \", \\, \n or \t`, e, s)
			}
		default:
			b.WriteByte(ch)
		}
	}
	return "", "", fmt.Errorf("string %s not closed: expected \"", s)
}

// apply sets, from the entries of the given sections, the flags of fs that
// the command line left alone. allowed says which flags a section may set.
func (c *config) apply(fs *pflag.FlagSet, allowed map[string][]string) error {
	for _, e := range c.entries {
		names, ok := allowed[e.section]
		if !ok {
			continue // another command's section
		}
		name := strings.ReplaceAll(e.key, "_", "-")
		f := fs.Lookup(name)
		if f == nil || !slices.Contains(names, name) {
			keys := make([]string, len(names))
			for i, n := range names {
				keys[i] = strings.ReplaceAll(n, "-", "_")
			}
			return fmt.Errorf("%s:%d: unknown key %s in [%s]: expected one of %s", c.path, e.line, e.key, e.section, strings.Join(keys, ", "))
		}
		if f.Changed {
			continue
		}
		if len(e.values) == 0 {
			// An empty array clears a list flag.
			sv, ok := f.Value.(pflag.SliceValue)
			if !ok {
				return fmt.Errorf("%s:%d: %s: expected a value, got an empty array", c.path, e.line, e.key)
			}
			if err := sv.Replace(nil); err != nil {
				return fmt.Errorf("%s:%d: %s: %w", c.path, e.line, e.key, err)
			}
		}
		for _, v := range e.values {
			if err := f.Value.Set(v); err != nil {
				return fmt.Errorf("%s:%d: %s: %w", c.path, e.line, e.key, err)
			}
		}
	}
	return nil
}

// flagNames lists the flags that add defines, for a config section.
func flagNames(add func(fs *pflag.FlagSet)) []string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	add(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// analysisKeys are the flags an [analysis] section may set.
var analysisKeys = flagNames(func(fs *pflag.FlagSet) { addAnalysisFlags(fs) })

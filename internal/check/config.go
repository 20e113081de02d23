package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	// go-toml/v2 rather than BurntSushi/toml: it reports the line and key
	// of unknown keys and type errors, and its parser gives every key's
	// line, so errors found after decoding (a bad percentage, a key a
	// section does not have) name their line too. It has no dependencies.
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// A config file keeps a repository's rules and thresholds, so that the rules
// live in review and CI runs "tracegap check profiles/":
//
//	[check]
//	fail_on = ["sequential", "data-bound"]
//	max_idle = "10%"
//	min_steps = 3
//
//	[analysis]
//	min_gap = "50us"
//	sync_pattern = ["my_blocking_call"]
//
// [analysis] holds the analysis settings every command shares; [check] and
// [compare] those of the command they name. Which keys a section has, and
// of what kind, is the front end's to say (see [Config.Section]): the CLI's
// keys are its flag names with "_" for "-".

// ConfigName is the name of the config file [FindConfig] looks for.
const ConfigName = "tracegap.toml"

// PyprojectName is the Python project file that may hold the same settings
// under a [tool.tracegap] table ([tool.tracegap.check], ...), as ruff and
// other Python tools read theirs.
const PyprojectName = "pyproject.toml"

// pyprojectPrefix is the key path of the settings in a pyproject.toml.
var pyprojectPrefix = []string{"tool", "tracegap"}

// sectionNames are the sections a config file may hold, sorted.
var sectionNames = []string{"analysis", "check", "compare"}

// Config is a parsed config file.
type Config struct {
	// Path names the file in errors.
	Path    string
	entries []entry
	// prefix goes before a section's name in messages: "tool.tracegap."
	// in a pyproject.toml, whose sections are [tool.tracegap.check]...
	prefix string
}

// header writes section as the file's header for it: "[check]", or in a
// pyproject.toml "[tool.tracegap.check]".
func (c *Config) header(section string) string { return "[" + c.prefix + section + "]" }

// headers lists the sections as the file's headers, for messages.
func (c *Config) headers() []string {
	out := make([]string, len(sectionNames))
	for i, s := range sectionNames {
		out[i] = c.header(s)
	}
	return out
}

// entry is one key of a section, in file order.
type entry struct {
	section, key string
	line         int
	value        any // as go-toml decodes it
}

// FindConfig looks for a config file in dir, then in each of its parents
// up to the filesystem root, and returns the first found, parsed; nil when
// there is none. In each directory ConfigName comes first, then a
// PyprojectName that holds a [tool.tracegap] table (one without is passed
// over, as ruff passes over a pyproject.toml without [tool.ruff]).
func FindConfig(dir string) (*Config, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("finding %s: %w", ConfigName, err)
	}
	for {
		for _, name := range []string{ConfigName, PyprojectName} {
			p := filepath.Join(dir, name)
			st, err := os.Stat(p)
			switch {
			case err == nil && !st.IsDir():
				if c, err := loadFound(p); c != nil || err != nil {
					return c, err
				}
			case err != nil && !errors.Is(err, os.ErrNotExist):
				// A file that may be there but cannot be seen must not be
				// passed over for one further up.
				return nil, fmt.Errorf("finding %s: %w", name, err)
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// maxPyproject bounds the pyproject.toml FindConfig reads: project files
// are a few kilobytes.
const maxPyproject = 1 << 20

// loadFound parses the config file at path, as FindConfig meets it: nil
// for a pyproject.toml without a [tool.tracegap] table. One that fails to
// decode but names tracegap is an error rather than passed over: it may be
// meant for tracegap.
func loadFound(path string) (*Config, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	if filepath.Base(path) == PyprojectName && !strings.Contains(string(data), "tracegap") {
		return nil, nil
	}
	doc, err := decodeConfig(path, data)
	if err != nil {
		return nil, err
	}
	if _, ok := toolTable(path, doc); !ok {
		return nil, nil
	}
	return configOf(path, data, doc)
}

// readConfigFile reads a config file of at most maxPyproject bytes.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPyproject+1))
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	if len(data) > maxPyproject {
		return nil, fmt.Errorf("reading config: %s is larger than %d bytes: expected a small settings file", path, maxPyproject)
	}
	return data, nil
}

// LoadConfig reads and parses the config file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(path, data)
}

// parseConfig parses a config file's text; path names it in errors.
func parseConfig(path string, data []byte) (*Config, error) {
	doc, err := decodeConfig(path, data)
	if err != nil {
		return nil, err
	}
	return configOf(path, data, doc)
}

// decodeConfig decodes a config file's text; path names it in errors,
// with the line and column of a syntax error.
func decodeConfig(path string, data []byte) (map[string]any, error) {
	if countKeys(data) > maxConfigKeys {
		return nil, fmt.Errorf("%s: more than %d keys and tables: expected a small settings file", path, maxConfigKeys)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: %w", path, line, col, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// maxConfigKeys bounds the keys and table headers of a config file, those
// of inline tables included: settings files hold tens, and the decoder's
// time grows as the square of a table's keys (20,000 take a second).
const maxConfigKeys = 10000

// countKeys counts the keys and table headers of data, up to the first
// syntax error (which decoding then reports), stopping once past
// maxConfigKeys. The parser alone takes time in proportion to the text.
func countKeys(data []byte) int {
	var p unstable.Parser
	p.Reset(data)
	n := 0
	for n <= maxConfigKeys && p.NextExpression() {
		n += keysIn(p.Expression())
	}
	return n
}

// keysIn counts the keys and table headers at and below node n.
func keysIn(n *unstable.Node) int {
	c := 0
	switch n.Kind {
	case unstable.KeyValue, unstable.Table, unstable.ArrayTable:
		c = 1
	}
	for it := n.Children(); it.Next(); {
		c += keysIn(it.Node())
	}
	return c
}

// toolTable returns the part of the decoded file at path that is
// tracegap's: all of a ConfigName, the [tool.tracegap] table of a
// PyprojectName (ok is false when it has none).
func toolTable(path string, doc map[string]any) (map[string]any, bool) {
	if filepath.Base(path) != PyprojectName {
		return doc, true
	}
	tool, _ := doc["tool"].(map[string]any)
	v, ok := tool["tracegap"]
	t, _ := v.(map[string]any)
	return t, ok
}

// configOf makes the Config of a decoded file: data is its text, for the
// keys' lines.
func configOf(path string, data []byte, doc map[string]any) (*Config, error) {
	c := &Config{Path: path}
	seen := map[[2]string]bool{}
	keys := keyLines(data)
	doc, _ = toolTable(path, doc)
	if filepath.Base(path) == PyprojectName {
		// Only [tool.tracegap] is tracegap's: its tables are the sections.
		keys = under(keys, pyprojectPrefix)
		c.prefix = strings.Join(pyprojectPrefix, ".") + "."
	}
	for _, k := range keys {
		name := k.key[0]
		section, ok := doc[name].(map[string]any)
		switch {
		case !ok && k.kind == unstable.ArrayTable && len(k.key) == 1:
			return nil, fmt.Errorf("%s:%d: [%s: expected a %s table", path, k.line, c.header(quoteKey(name))+"]", c.header(quoteKey(name)))
		case !ok:
			return nil, fmt.Errorf("%s:%d: key %s outside a section: expected a %s, %s or %s header first", path, k.line, quoteKey(name), c.header("check"), c.header("compare"), c.header("analysis"))
		case !slices.Contains(sectionNames, name):
			return nil, fmt.Errorf("%s:%d: unknown section %s: expected one of %s", path, k.line, c.header(quoteKey(name)), strings.Join(c.headers(), ", "))
		case len(k.key) > 1:
			// A dotted key or a [check.x] table is key x of [check].
			c.add(seen, entry{name, k.key[1], k.line, section[k.key[1]]})
		case k.kind == unstable.KeyValue:
			// A section written as an inline table: the parser does not
			// list its keys, which take its line.
			for _, key := range slices.Sorted(maps.Keys(section)) {
				c.add(seen, entry{name, key, k.line, section[key]})
			}
		}
	}
	return c, nil
}

// add appends e unless its key is already there.
func (c *Config) add(seen map[[2]string]bool, e entry) {
	if id := [2]string{e.section, e.key}; !seen[id] {
		seen[id] = true
		c.entries = append(c.entries, e)
	}
}

// under returns the keys below prefix, the prefix taken off; the prefix
// itself, as a table header, is left out.
func under(keys []keyLine, prefix []string) []keyLine {
	var out []keyLine
	for _, k := range keys {
		if len(k.key) > len(prefix) && slices.Equal(k.key[:len(prefix)], prefix) {
			k.key = k.key[len(prefix):]
			out = append(out, k)
		}
	}
	return out
}

// keyLine is where a table header or a key-value line names a key.
type keyLine struct {
	key  []string // from the top: a key under [check] is [check key]
	line int
	kind unstable.Kind // Table, ArrayTable or KeyValue
}

// keyLines lists the keys of a document that decodes, in file order.
func keyLines(data []byte) []keyLine {
	var p unstable.Parser
	p.Reset(data)
	lines := &lineCounter{data: data, line: 1}
	var table []string
	var out []keyLine
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, line := keyOf(e, lines)
			table = key
			out = append(out, keyLine{key, line, e.Kind})
		case unstable.KeyValue:
			key, line := keyOf(e, lines)
			out = append(out, keyLine{append(slices.Clone(table), key...), line, e.Kind})
		}
	}
	return out
}

// keyOf returns the parts of an expression's key and its line.
func keyOf(e *unstable.Node, lines *lineCounter) (key []string, line int) {
	it := e.Key()
	for it.Next() {
		n := it.Node()
		if key == nil {
			line = lines.at(int(n.Raw.Offset))
		}
		key = append(key, string(n.Data))
	}
	return key, line
}

// lineCounter gives the lines of offsets met in increasing order, counting
// each byte once: the parser's Shape counts from the file's start on every
// call, which made a file of many keys cost their number squared.
type lineCounter struct {
	data []byte
	off  int // line is the line of data[off]
	line int
}

// at returns the 1-based line of the byte at off; off must not be below
// that of the call before.
func (c *lineCounter) at(off int) int {
	off = min(max(off, c.off), len(c.data))
	c.line += bytes.Count(c.data[c.off:off], []byte("\n"))
	c.off = off
	return c.line
}

// A Kind is what a key's value must be.
type Kind int

const (
	// String is a string.
	String Kind = iota
	// Strings is a string or an array of strings.
	Strings
	// Int is an integer.
	Int
	// Bool is true or false.
	Bool
	// Percent is a percentage ("10%") or a fraction below 1 (0.1).
	Percent
	// Duration is a duration with its unit ("50us"), or 0.
	Duration
	// Size is a size ("64GiB") or a number of bytes.
	Size
)

var kindExpected = [...]string{
	String:   "a string",
	Strings:  "a string or an array of strings",
	Int:      "an integer",
	Bool:     "true or false",
	Percent:  `a percentage like "10%" or a fraction below 1 like 0.1`,
	Duration: `a duration with its unit like "50us"`,
	Size:     `a size like "64GiB" or a number of bytes`,
}

// text returns v as the strings a flag of kind k takes, one per array
// element; ok is false when v is not of kind k.
func (k Kind) text(v any) (vals []string, ok bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, k != Int && k != Bool
	case int64:
		return []string{strconv.FormatInt(v, 10)}, k == Int || k == Percent || k == Duration || k == Size
	case float64:
		return []string{strconv.FormatFloat(v, 'g', -1, 64)}, k == Percent || k == Duration
	case bool:
		return []string{strconv.FormatBool(v)}, k == Bool
	case []any:
		if k != Strings {
			return nil, false
		}
		vals = []string{} // an empty array clears the list: not nil
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			vals = append(vals, s)
		}
		return vals, true
	}
	return nil, false
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		for _, e := range v {
			if _, ok := e.(string); !ok {
				return "an array holding " + typeName(e)
			}
		}
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date or time"
	}
	return fmt.Sprintf("%T", v)
}

// maxSettingLen bounds a setting's value, or each element of an array:
// the errors that quote a bad value are one line to read, and the longest
// setting, a pattern, is a few hundred bytes.
const maxSettingLen = 4096

// A Setting is one key of a section, its value in text form.
type Setting struct {
	// Key is the key as written ("max_idle") and Line where.
	Key  string
	Line int
	// Values holds the value, or an array's elements, as text: numbers as
	// strconv formats them. An empty array gives an empty Values.
	Values []string

	path string
}

// Wrap places err, found using s, at its key in the file.
func (s Setting) Wrap(err error) error {
	return fmt.Errorf("%s:%d: %s: %w", s.path, s.Line, quoteKey(s.Key), err)
}

// Section returns the settings of the named section in file order, after
// checking that each is one of keys and of its kind. A section the file
// does not have gives none.
func (c *Config) Section(name string, keys map[string]Kind) ([]Setting, error) {
	var out []Setting
	for _, e := range c.entries {
		if e.section != name {
			continue
		}
		kind, ok := keys[e.key]
		if !ok {
			return nil, fmt.Errorf("%s:%d: unknown key %s in %s: expected one of %s",
				c.Path, e.line, quoteKey(e.key), c.header(name), strings.Join(slices.Sorted(maps.Keys(keys)), ", "))
		}
		vals, ok := kind.text(e.value)
		if !ok {
			return nil, fmt.Errorf("%s:%d: %s in %s: expected %s, got %s", c.Path, e.line, quoteKey(e.key), c.header(name), kindExpected[kind], typeName(e.value))
		}
		for _, v := range vals {
			if len(v) > maxSettingLen {
				return nil, fmt.Errorf("%s:%d: %s in %s: a value of %d bytes, expected at most %d", c.Path, e.line, quoteKey(e.key), c.header(name), len(v), maxSettingLen)
			}
		}
		out = append(out, Setting{Key: e.key, Line: e.line, Values: vals, path: c.Path})
	}
	return out, nil
}

// quoteKey returns a key as TOML would write it bare, or quoted when it
// holds other characters: a key is text from the file and may hold
// anything, terminal escapes included.
func quoteKey(k string) string {
	bare := k != ""
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			bare = false
		}
	}
	if bare {
		return k
	}
	return strconv.Quote(k)
}

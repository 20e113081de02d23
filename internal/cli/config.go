package cli

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/check"
)

// A config file (check.Config) sets flags: its keys are flag names with "_"
// for "-", [analysis] holds the shared analysis flags and [check] and
// [compare] the flags of those commands. A flag given on the command line
// wins over the file.

// config is a config file a command applies to its flags.
type config struct{ file *check.Config }

// loadConfig reads and parses the config file at path.
func loadConfig(path string) (*config, error) {
	c, err := check.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return &config{c}, nil
}

// findConfig loads the config file a command reads: the one --config names
// (explicit), else the first tracegap.toml, or pyproject.toml with a
// [tool.tracegap] table, from the working directory up; nil when there is
// none.
func findConfig(explicit string) (*config, error) {
	if explicit != "" {
		return loadConfig(explicit)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding %s: %w", check.ConfigName, err)
	}
	c, err := check.FindConfig(wd)
	if err != nil || c == nil {
		return nil, err
	}
	return &config{c}, nil
}

// apply sets, from the given sections, the flags of fs that the command
// line left alone. allowed says which flags a section may set; the file's
// other sections are other commands'.
func (c *config) apply(fs *pflag.FlagSet, allowed map[string][]string) error {
	for _, section := range slices.Sorted(maps.Keys(allowed)) {
		keys := map[string]check.Kind{}
		for _, name := range allowed[section] {
			keys[strings.ReplaceAll(name, "-", "_")] = flagKind(fs.Lookup(name).Value)
		}
		settings, err := c.file.Section(section, keys)
		if err != nil {
			return err
		}
		for _, s := range settings {
			f := fs.Lookup(strings.ReplaceAll(s.Key, "_", "-"))
			if f.Changed {
				continue
			}
			if err := setFlag(f.Value, s.Values); err != nil {
				return s.Wrap(err)
			}
		}
	}
	return nil
}

// setFlag sets a flag once per value, as repeating it on the command line
// would; no values clear a list.
func setFlag(v pflag.Value, values []string) error {
	if sv, ok := v.(pflag.SliceValue); ok && len(values) == 0 {
		return sv.Replace(nil)
	}
	for _, s := range values {
		if err := v.Set(s); err != nil {
			return err
		}
	}
	return nil
}

// flagKind is the kind of config value a flag takes.
func flagKind(v pflag.Value) check.Kind {
	switch v.Type() {
	case "int", "int64":
		return check.Int
	case "bool":
		return check.Bool
	case "percent":
		return check.Percent
	case "duration":
		return check.Duration
	case "size":
		return check.Size
	case "stringArray", "verdicts":
		return check.Strings
	}
	return check.String
}

// flagNames lists the flags that add defines, for a config section.
func flagNames(add func(fs *pflag.FlagSet)) []string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	add(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// analysisKeys are the flags an [analysis] section may set: the shared
// analysis flags but those that choose the file.
var analysisKeys = slices.DeleteFunc(flagNames(func(fs *pflag.FlagSet) { addAnalysisFlags(fs) }),
	func(name string) bool { return name == "config" || name == "isolated" })

// configFile returns the config file the command reads (see findConfig),
// nil with --isolated or when there is none.
func (f *analysisFlags) configFile() (*config, error) {
	if f.isolated {
		if f.config != "" {
			return nil, errors.New("--config and --isolated contradict each other: give one")
		}
		return nil, nil
	}
	return findConfig(f.config)
}

// configure applies the config file to the flags of fs that the command
// line left alone: its [analysis] section, and the command's own sections
// (own: section name to the flags it may set). Every command reads the
// same file the same way, so that analyze and check agree on one trace.
func (f *analysisFlags) configure(fs *pflag.FlagSet, own map[string][]string) error {
	c, err := f.configFile()
	if err != nil || c == nil {
		return err
	}
	sections := map[string][]string{"analysis": analysisKeys}
	maps.Copy(sections, own)
	return c.apply(fs, sections)
}

package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// serveFlagSet returns serve's flags.
func serveFlagSet(t *testing.T) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addServeFlags(fs)
	return fs
}

// TestDeployArgs: the arguments the image and the manifests give the
// container are a serve command line that parses.
func TestDeployArgs(t *testing.T) {
	root := filepath.Join("..", "..")
	tests := []struct {
		file string
		args func(t *testing.T, text string) [][]string
	}{
		{"deploy/Dockerfile", dockerCmd},
		{"deploy/kubernetes.yaml", yamlArgs},
		{"deploy/check-store.yaml", yamlArgs},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			lists := tt.args(t, string(data))
			if len(lists) == 0 {
				t.Fatalf("%s: no arguments found", tt.file)
			}
			for _, args := range lists {
				if len(args) == 0 || args[0] != "serve" {
					t.Errorf("%s: arguments %q, expected serve and its flags", tt.file, args)
					continue
				}
				if err := serveFlagSet(t).Parse(args[1:]); err != nil {
					t.Errorf("%s: arguments %q: %v", tt.file, args, err)
				}
			}
		})
	}
}

// dockerCmd returns the Dockerfile's CMD, a JSON array.
func dockerCmd(t *testing.T, text string) [][]string {
	t.Helper()
	var lists [][]string
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "CMD ")
		if !ok {
			continue
		}
		var args []string
		if err := json.Unmarshal([]byte(rest), &args); err != nil {
			t.Errorf("Dockerfile: CMD %s: %v, expected a JSON array", rest, err)
		}
		lists = append(lists, args)
	}
	return lists
}

var (
	argsKey  = regexp.MustCompile(`^(\s*)args:\s*(.*)$`)
	listItem = regexp.MustCompile(`^(\s*)-\s+(.*)$`)
)

// yamlArgs returns each container's args in a manifest: a flow list
// (`args: [a, b]`) or a block list of plain or quoted scalars under it.
func yamlArgs(t *testing.T, text string) [][]string {
	t.Helper()
	lines := strings.Split(text, "\n")
	var lists [][]string
	for i, line := range lines {
		m := argsKey.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if flow, ok := strings.CutPrefix(m[2], "["); ok {
			var args []string
			for _, a := range strings.Split(strings.TrimSuffix(flow, "]"), ",") {
				args = append(args, unquote(strings.TrimSpace(a)))
			}
			lists = append(lists, args)
			continue
		}
		var args []string
		for _, item := range lines[i+1:] {
			trimmed := strings.TrimSpace(item)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			im := listItem.FindStringSubmatch(item)
			if im == nil || len(im[1]) < len(m[1]) {
				break
			}
			args = append(args, unquote(im[2]))
		}
		lists = append(lists, args)
	}
	return lists
}

// unquote strips a YAML scalar's double quotes.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

var (
	// inlineFlag is a code span that starts with a flag: `--max-memory`.
	inlineFlag = regexp.MustCompile("`--([a-z][a-z0-9-]*)")
	// serveLine is what follows serve on a command line, to the end of
	// its code span: `tracegap serve --check-store`.
	serveLine = regexp.MustCompile("(?:tracegap serve|`serve)( [^`#]*)")
	flagName  = regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
)

// TestServeDocsFlags: every flag the service's docs name is one of serve's.
func TestServeDocsFlags(t *testing.T) {
	fs := serveFlagSet(t)
	for _, file := range []string{"docs/serve.md", "docs/deploy.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range strings.Split(string(data), "\n") {
			var names []string
			for _, m := range inlineFlag.FindAllStringSubmatch(line, -1) {
				names = append(names, m[1])
			}
			for _, m := range serveLine.FindAllStringSubmatch(line, -1) {
				for _, f := range flagName.FindAllStringSubmatch(m[1], -1) {
					names = append(names, f[1])
				}
			}
			for _, name := range names {
				n++
				if fs.Lookup(name) == nil {
					t.Errorf("%s:%d: --%s is not a flag of tracegap serve", file, i+1, name)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no flags found", file)
		}
	}
}

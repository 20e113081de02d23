package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// adviceCommand matches a tracegap command named in prose: the command and
// the flags that follow it (FILE operands and prose after are not taken).
var adviceCommand = regexp.MustCompile(`tracegap ([a-z][a-z-]*)((?: --?[a-z][a-z-]*(?:=[^\s,;)]+)?)*)`)

// nsysCommand matches an nsys command line named in prose.
var nsysCommand = regexp.MustCompile(`nsys (--?[a-z-]+|[a-z]+)`)

// adviceTexts returns the string literals of every non-test Go file of
// the advice packages, by file: the findings and fixes the reports print.
func adviceTexts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../advice/*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../advice/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var lits []string
		ast.Inspect(file, func(n ast.Node) bool {
			if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
				lits = append(lits, l.Value)
			}
			return true
		})
		texts[f] = strings.Join(lits, "\n")
	}
	if len(texts) == 0 {
		t.Fatal("no advice sources found")
	}
	return texts
}

// docCommands returns the tracegap commands quoted in the docs' code spans
// (`tracegap ...`), by doc file.
func docCommands(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs found: %v", err)
	}
	span := regexp.MustCompile("`(tracegap [^`]*)`")
	texts := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var spans []string
		for _, m := range span.FindAllStringSubmatch(string(b), -1) {
			spans = append(spans, m[1])
		}
		texts[f] = strings.Join(spans, "\n")
	}
	return texts
}

// TestAdviceCommandsParse checks that every tracegap command the advice
// and the docs' code spans name is a command of this CLI (its --help exits
// 0) with the flags named (its help lists them), and that every nsys
// command in the advice names an nsys subcommand.
func TestAdviceCommandsParse(t *testing.T) {
	texts := adviceTexts(t)
	for f, s := range docCommands(t) {
		texts[f] = s
	}
	nsysSub := map[string]bool{"profile": true, "export": true, "stats": true, "analyze": true, "launch": true, "start": true, "stop": true, "recipe": true}
	named := 0
	for f, text := range texts {
		for _, m := range adviceCommand.FindAllStringSubmatch(text, -1) {
			named++
			code, help, stderr := tg(m[1], "--help")
			if m[1] == "help" {
				code, help, stderr = tg("help", "analyze")
			}
			help += stderr + "\n--help"
			if code != 0 {
				t.Errorf("%s: %q: no command %q: exit %d: %s", f, m[0], m[1], code, stderr)
				continue
			}
			for _, flag := range strings.Fields(m[2]) {
				name, _, _ := strings.Cut(flag, "=")
				if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(name) + `\b`).MatchString(help) {
					t.Errorf("%s: %q: %s names no flag %s", f, m[0], m[1], name)
				}
			}
		}
		if !strings.Contains(f, "advice") {
			continue
		}
		for _, m := range nsysCommand.FindAllStringSubmatch(text, -1) {
			if !nsysSub[m[1]] {
				t.Errorf("%s: %q: expected an nsys subcommand (nsys profile ...)", f, m[0])
			}
		}
	}
	if named == 0 {
		t.Error("no tracegap command found in the advice or docs: the pattern is wrong")
	}
}

package render

import (
	"cmp"
	"io"
	"path/filepath"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// writeMarkdown renders results in GitHub-flavoured Markdown, short enough
// for a pull-request comment: the steps and gaps are capped and the long
// tables fold away in <details>.
func writeMarkdown(w io.Writer, results []*analyze.Result, opt Options) error {
	for i, res := range results {
		if i > 0 {
			if _, err := io.WriteString(w, "\n---\n\n"); err != nil {
				return err
			}
		}
		t := &textWriter{w: w, opt: Options{Top: opt.Top, MaxSteps: opt.MaxSteps, AllSteps: opt.AllSteps, job: opt.job}}
		t.markdown(res)
		if t.err != nil {
			return t.err
		}
	}
	return nil
}

func (t *textWriter) mdTable(tb *table) {
	if t.err == nil {
		t.err = tb.renderMarkdown(t.w)
	}
}

func (t *textWriter) markdown(res *analyze.Result) {
	s := &res.Source
	name := filepath.Base(s.Path)
	if s.Path == "" {
		name = "(stdin)"
	}
	fw := ""
	if res.Framework != analyze.UnknownFramework {
		fw = " (" + string(res.Framework) + " trace)"
	}
	t.printf("### tracegap: %s is **%s**%s\n\n", untrusted.MarkdownCode(name), res.Verdict, fw)
	line := summarize(res)
	t.printf("%s\n\n", mdEscape(line.String()))
	if len(res.Secondary) > 0 {
		s := make([]string, len(res.Secondary))
		for i, v := range res.Secondary {
			s[i] = "`" + string(v) + "`"
		}
		t.printf("Also over its threshold: %s.\n\n", strings.Join(s, ", "))
	}
	reasons := otherReasons(res, line)
	for _, r := range reasons {
		t.printf("- %s\n", mdEscape(r))
	}
	if len(reasons) > 0 {
		t.printf("\n")
	}
	if res.Verdict != analyze.NoDevice && len(res.Devices) > 0 {
		t.mdFigures(res)
	}
	t.mdFindings(res.Findings)
	t.printf("<sub>%s %s. Thresholds: %s.</sub>\n", mdEscape(name), mdEscape(sourceFacts(s, res.Framework)), mdEscape(thresholdsLine(&res.Options)))
	if n := len(s.Warnings); n > 0 {
		t.printf("\n<details><summary>%d warning(s) while reading</summary>\n\n", n)
		for i, w := range s.Warnings {
			if i == maxWarnings {
				t.printf("- ... %d more\n", n-maxWarnings)
				break
			}
			t.printf("- %s\n", mdEscape(w))
		}
		t.printf("\n</details>\n")
	}
}

func (t *textWriter) mdFigures(res *analyze.Result) {
	t.printf("**Idle in the window** (%s):\n\n%s.\n\n", mdEscape(windowLine(res.Window)), mdEscape(figuresLine(res)))
	if line := stabilityLine(res); line != "" {
		t.printf("%s.\n\n", mdEscape(line))
	}
	t.mdTable(breakdownTable(res, t.opt.job))
	t.printf("\n%s\n\n", mdEscape(thresholdCheck(res)))
	n := t.opt.stepRows(textMaxSteps)
	t.mdTable(devicesTable(res, n, t.opt.job))
	if more := len(res.Devices) - n; more > 0 {
		t.printf("\n%d more devices: all of them with --all-steps.\n", more)
	}
	top := t.opt.Top
	if top <= 0 {
		top = markdownMaxGaps
	}
	if gs := topGaps(res, top); len(gs) > 0 {
		t.printf("\n<details><summary>Longest gaps (%d of %s)</summary>\n\n", len(gs), count(len(res.Gaps)))
		t.mdTable(gapsTable(res, gs, 30, 90))
		t.printf("\n</details>\n")
	}
	if len(res.Steps) > 0 {
		tb, more := stepsTable(res, t.opt.stepRows(markdownMaxSteps), t.opt.job)
		t.printf("\n<details><summary>Steps (%d)</summary>\n\n", len(res.Steps))
		t.mdTable(tb)
		if more > 0 {
			t.printf("\n%d more steps: all of them with --all-steps.\n", more)
		}
		t.printf("\n</details>\n")
	}
	t.mdInsights(res, cmp.Or(max(t.opt.MaxSteps, 0), markdownMaxSteps))
	t.printf("\n")
}

func (t *textWriter) mdFindings(fs []analyze.Finding) {
	if len(fs) == 0 {
		return
	}
	t.printf("**Findings**\n\n")
	for _, f := range fs {
		t.printf("- **%s** `%s`: %s", f.Severity, f.ID, mdEscape(f.Message))
		if f.Fix != "" {
			t.printf(" *Fix:* %s", mdEscape(f.Fix))
		}
		t.printf("\n")
	}
	t.printf("\n")
}

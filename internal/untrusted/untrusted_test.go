package untrusted

import (
	"strings"
	"testing"
)

// hostile are names a trace or a file system can hold, each against what
// every channel must make of it.
var hostile = []struct {
	name, in                                   string
	terminal, message, property, markdown, tsv string
}{
	{"plain", "aten::mm", "aten::mm", "aten::mm", "aten%3A%3Amm", "aten::mm", "aten::mm"},
	{"osc title", "\x1b]0;pwned\a", `\x1b]0;pwned\a`, `\x1b]0;pwned\a`, `\x1b]0;pwned\a`, `\\x1b\]0;pwned\\a`, `\x1b]0;pwned\a`},
	{"csi clear", "\x1b[2J", `\x1b[2J`, `\x1b[2J`, `\x1b[2J`, `\\x1b\[2J`, `\x1b[2J`},
	{"cr", "ok\rFAIL", `ok\rFAIL`, `ok\rFAIL`, `ok\rFAIL`, `ok\\rFAIL`, `ok\rFAIL`},
	{"workflow command", "x\n::error ::owned\n::add-mask::y", `x\n::error ::owned\n::add-mask::y`, `x\n::error ::owned\n::add-mask::y`, `x\n%3A%3Aerror %3A%3Aowned\n%3A%3Aadd-mask%3A%3Ay`, `x\\n::error ::owned\\n::add-mask::y`, `x\n::error ::owned\n::add-mask::y`},
	{"nul", "a\x00b", `a\x00b`, `a\x00b`, `a\x00b`, `a\\x00b`, `a\x00b`},
	{"bidi override", "abc\u202etxt.exe", `abc\u202etxt.exe`, `abc\u202etxt.exe`, `abc\u202etxt.exe`, `abc\\u202etxt.exe`, `abc\u202etxt.exe`},
	{"c1 csi", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`, `a\u009b31mb`, `a\\u009b31mb`, `a\u009b31mb`},
	{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`, `a\u2028b`, `a\\u2028b`, `a\u2028b`},
	{"not utf-8", "a\xffb", `a\xffb`, `a\xffb`, `a\xffb`, `a\\xffb`, `a\xffb`},
	{"percent", "100%0A", "100%0A", "100%250A", "100%250A", "100%0A", "100%0A"},
	{"comma", "a,b", "a,b", "a,b", "a%2Cb", "a,b", "a,b"},
	{"link", "[l](javascript:alert(1))", "[l](javascript:alert(1))", "[l](javascript:alert(1))", "[l](javascript%3Aalert(1))", `\[l\](javascript:alert(1))`, "[l](javascript:alert(1))"},
	{"image", "![](https://evil.example/x.png)", "![](https://evil.example/x.png)", "![](https://evil.example/x.png)", "![](https%3A//evil.example/x.png)", `!\[\](https://evil.example/x.png)`, "![](https://evil.example/x.png)"},
	{"mention", "@here", "@here", "@here", "@here", "@\u2060here", "'@here"},
	{"html", "<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;", "<img src=x onerror=alert(1)>"},
	{"code and pipe", "`a|b`", "`a|b`", "`a|b`", "`a|b`", "\\`a\\|b\\`", "`a|b`"},
	{"entity", "&lt;b&gt;", "&lt;b&gt;", "&lt;b&gt;", "&lt;b&gt;", "&amp;lt;b&amp;gt;", "&lt;b&gt;"},
	{"formula", "=HYPERLINK(\"http://x\")", "=HYPERLINK(\"http://x\")", "=HYPERLINK(\"http://x\")", "=HYPERLINK(\"http%3A//x\")", "=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
	{"plus minus", "-1+1", "-1+1", "-1+1", "-1+1", "-1+1", "'-1+1"},
	{"tab", "a\tb", `a\tb`, `a\tb`, `a\tb`, `a\\tb`, `a\tb`},
	{"backslash", `C:\x1b`, `C:\x1b`, `C:\x1b`, `C%3A\x1b`, `C:\\x1b`, `C:\\x1b`},
	{"leading workflow command", "::error::x", `\x3a:error::x`, `\x3a:error::x`, `\x3a%3Aerror%3A%3Ax`, `\\x3a:error::x`, `\x3a:error::x`},
	{"indented workflow command", "  ::warning::y", `  \x3a:warning::y`, `  \x3a:warning::y`, `  \x3a%3Awarning%3A%3Ay`, `  \\x3a:warning::y`, `  \x3a:warning::y`},
	{"azure anywhere", "a ##vso[task.setvariable variable=x]1", `a ##vso\x5btask.setvariable variable=x]1`, `a ##vso\x5btask.setvariable variable=x]1`, `a ##vso\x5btask.setvariable variable=x]1`, `a ##vso\\x5btask.setvariable variable=x\]1`, `a ##vso\x5btask.setvariable variable=x]1`},
	{"azure any case", "###VSO[x", `###VSO\x5bx`, `###VSO\x5bx`, `###VSO\x5bx`, `###VSO\\x5bx`, `###VSO\x5bx`},
	{"formatting command", "x##[group]y", `x##\x5bgroup]y`, `x##\x5bgroup]y`, `x##\x5bgroup]y`, `x##\\x5bgroup\]y`, `x##\x5bgroup]y`},
	{"unicode kept", "résumé 計算", "résumé 計算", "résumé 計算", "résumé 計算", "résumé 計算", "résumé 計算"},
}

func TestChannels(t *testing.T) {
	for _, c := range hostile {
		for _, ch := range []struct {
			channel string
			f       func(string) string
			want    string
		}{
			{"Terminal", Terminal, c.terminal},
			{"Log", Log, c.terminal},
			{"AnnotationMessage", AnnotationMessage, c.message},
			{"AnnotationProperty", AnnotationProperty, c.property},
			{"Markdown", Markdown, c.markdown},
			{"TSV", TSV, c.tsv},
		} {
			if got := ch.f(c.in); got != ch.want {
				t.Errorf("%s(%s %q) = %q, want %q", ch.channel, c.name, c.in, got, ch.want)
			}
		}
	}
}

// TestTerminalLeavesNothingLive checks every rune below U+3000 and each
// byte: what Terminal returns holds no control or format character.
func TestTerminalLeavesNothingLive(t *testing.T) {
	var all []byte
	for r := rune(0); r < 0x3000; r++ {
		all = append(all, string(r)...)
	}
	for c := 0x80; c < 0x100; c++ {
		all = append(all, byte(c))
	}
	out := Terminal(string(all))
	for i, r := range out {
		if unsafeRune(r) || r == 0xfffd {
			t.Fatalf("Terminal left %U at byte %d", r, i)
		}
	}
}

// TestClip cuts escaped names: the width holds for the escaped text, and
// the cut falls between whole escapes and whole runes.
func TestClip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		esc  func(string) string
		want string
	}{
		{"fits", "aten::mm", 8, Terminal, "aten::mm"},
		{"plain cut", "abcdefghij", 8, Terminal, "abcde..."},
		// Escaped, "ab\x1b[2J" is 9 runes: the cut at 5 of them would
		// fall inside `\x1b`, which is dropped whole.
		{"escape not split", "ab\x1b[2J", 8, Terminal, "ab..."},
		{"escape kept whole", "a\x1bbcdefgh", 8, Terminal, `a\x1b...`},
		{"escaped longer than n", "\x1b\x1b\x1b", 10, Terminal, `\x1b...`},
		{"escape fits exactly", "\x1b\x1b", 8, Terminal, `\x1b\x1b`},
		{"not utf-8", "\xff\xfe\xfd", 9, Terminal, `\xff...`},
		// Wide runes take two columns each: 2 of the 5 before the
		// marker hold one of them.
		{"wide runes", "計算計算計算", 5, Terminal, "計..."},
		{"wide runes mixed", "ab計算cd", 6, Terminal, "ab..."},
		{"wide runes fit", "計算", 4, Terminal, "計算"},
		{"markdown", "a*b*c*d", 8, Markdown, `a\*b...`},
		{"markdown entity", "a&b", 6, Markdown, `a...`},
		{"no escape", "a\x1bbcdef", 5, nil, "a\x1b..."},
		{"tiny width", "abcdef", 3, Terminal, "abcdef"},
	}
	for _, tt := range tests {
		got := Clip(tt.in, tt.n, tt.esc)
		if got != tt.want {
			t.Errorf("%s: Clip(%q, %d) = %q, want %q", tt.name, tt.in, tt.n, got, tt.want)
		}
		if tt.n > 3 && Width(got) > tt.n {
			t.Errorf("%s: Clip(%q, %d) = %q, wider than %d columns", tt.name, tt.in, tt.n, got, tt.n)
		}
	}
}

// TestClipStart: the cut falls at the start, on whole escapes and runes,
// and what is kept is the end.
func TestClipStart(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		esc  func(string) string
		want string
	}{
		{"fits", "a > b > c", 9, Terminal, "a > b > c"},
		{"plain cut", "outer > mid > inner", 12, Terminal, "...d > inner"},
		// Escaped, "\x1bcdefg" is 9 columns: the cut falls before the
		// escape, which goes whole.
		{"escape not split", "\x1bcdefg", 8, Terminal, "...cdefg"},
		{"escape kept whole", "abcd\x1be", 8, Terminal, `...\x1be`},
		{"wide runes", "計算計算計算", 5, Terminal, "...算"},
		{"markdown", "a*b*c*d", 8, Markdown, `...c\*d`},
		{"tiny width", "abcdef", 3, Terminal, "abcdef"},
		// A tail that starts with "::" (a C++ name) is mid-line after the
		// ellipsis: it gets no CI escape, which would widen it.
		{"tail starts with ::", "at::native::conv", 9, Terminal, "...::conv"},
	}
	for _, tt := range tests {
		got := ClipStart(tt.in, tt.n, tt.esc)
		if got != tt.want {
			t.Errorf("%s: ClipStart(%q, %d) = %q, want %q", tt.name, tt.in, tt.n, got, tt.want)
		}
		if tt.n > 3 && Width(got) > tt.n {
			t.Errorf("%s: ClipStart(%q, %d) = %q, wider than %d columns", tt.name, tt.in, tt.n, got, tt.n)
		}
	}
}

func TestPad(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"ab", 4, "ab  "},
		{"計", 4, "計  "}, // two columns
		{"計算計", 4, "計算計"},
		{"", 2, "  "},
	}
	for _, tt := range tests {
		if got := Pad(tt.in, tt.n); got != tt.want {
			t.Errorf("Pad(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestClipMiddle: the cut falls in the middle, on whole escapes and
// runes; the start and the end show, the end getting the larger half
// when the room is odd.
func TestClipMiddle(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"fits", "ProfilerStep#12", 15, "ProfilerStep#12"},
		{"step names stay apart", "ProfilerStep#12", 9, "Pro...#12"},
		{"odd room: the end gets more", "ProfilerStep#12", 10, "Pro...p#12"},
		// Escaped, "ab\x1bcdefgh" is 12 columns: the escape goes whole.
		{"escape not split", "ab\x1bcdefgh", 11, "ab...efgh"},
		{"wide runes", "計算計算計算", 7, "計...算"},
		{"tiny width", "abcdef", 3, "abcdef"},
	}
	for _, tt := range tests {
		got := ClipMiddle(tt.in, tt.n, Terminal)
		if got != tt.want {
			t.Errorf("%s: ClipMiddle(%q, %d) = %q, want %q", tt.name, tt.in, tt.n, got, tt.want)
		}
		if tt.n > 3 && Width(got) > tt.n {
			t.Errorf("%s: ClipMiddle(%q, %d) = %q, wider than %d columns", tt.name, tt.in, tt.n, got, tt.n)
		}
	}
}

// TestClipKeepsCICommandsInert: a name cut by Clip or ClipStart to any
// width holds no CI log command, whichever runes the cut keeps.
func TestClipKeepsCICommandsInert(t *testing.T) {
	for _, in := range []string{"::error::" + strings.Repeat("x", 40), strings.Repeat("y", 30) + "##vso[task.complete result=Failed]" + strings.Repeat("z", 30)} {
		for n := 4; n < len(in)+4; n++ {
			for _, got := range []string{Clip(in, n, Terminal), ClipStart(in, n, Terminal), ClipMiddle(in, n, Terminal), Clip(in, n, Markdown)} {
				if strings.HasPrefix(got, "::") || strings.Contains(strings.ToLower(got), "##vso[") {
					t.Fatalf("cut of %q to %d columns = %q: a live command", in, n, got)
				}
			}
		}
	}
}

// FuzzCICommands: whatever a name holds, what Terminal, Markdown, TSV and
// an annotation's message make of it, and Clip of it, starts no GitHub
// workflow command and holds no Azure Pipelines one, placed alone on a
// line or after another.
func FuzzCICommands(f *testing.F) {
	for _, s := range []string{"::error::x", " \t::warning::y", "a##vso[task.complete]", "###[group]", "##VsO[x", "at::native::add"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Terminal(s), Markdown(s), TSV(s), AnnotationMessage(s), Clip(s, 12, Terminal), ClipStart(s, 12, Terminal)} {
			for _, line := range []string{out, "x" + out} {
				lead := strings.TrimLeft(line, " \t\v\f")
				if strings.HasPrefix(lead, "::") || strings.Contains(strings.ToLower(line), "##vso[") || strings.Contains(line, "##[") {
					t.Fatalf("%q escaped to %q: a live CI command", s, out)
				}
			}
		}
	})
}

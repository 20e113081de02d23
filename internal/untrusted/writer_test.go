package untrusted

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJSON(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", `{"a": "aten::mm"}` + "\n", `{"a": "aten::mm"}` + "\n"},
		{"c1 csi", "[\"a\u009b31mb\"]", `["a\u009b31mb"]`},
		{"c1 range", "[\"\u0080\u009f\"]", `["\u0080\u009f"]`},
		{"del", "[\"a\x7fb\"]", `["a\u007fb"]`},
		{"separators", "[\"\u2028\u2029\"]", `["\u2028\u2029"]`},
		{"bidi override", "[\"abc\u202etxt\"]", `["abc\u202etxt"]`},
		{"beyond the BMP", "[\"\U000e0001\"]", `["\udb40\udc01"]`},
		{"not utf-8", "[\"a\xffb\"]", `["a\ufffdb"]`},
		{"white space kept", "[\r\n\t\"x\"]", "[\r\n\t\"x\"]"},
		{"unicode kept", `["résumé 計算 �"]`, `["résumé 計算 �"]`},
		{"azure command", `["a ##vso[task.setvariable variable=x]1"]`, `["a ##vso\u005btask.setvariable variable=x]1"]`},
		{"formatting command", `["###[group]", "##VsO[x"]`, `["###\u005bgroup]", "##VsO\u005bx"]`},
		{"github command kept", `["::error::x"]`, `["::error::x"]`},
	} {
		var buf bytes.Buffer
		if _, err := JSONWriter(&buf).Write([]byte(c.in)); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != c.want || string(JSON([]byte(c.in))) != c.want {
			t.Errorf("%s: JSONWriter(%q) wrote %q, want %q", c.name, c.in, got, c.want)
		}
		var in, out any
		if err := json.Unmarshal([]byte(c.in), &in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
			t.Fatalf("%s: escaped JSON does not decode: %v", c.name, err)
		}
		if b1, b2 := mustMarshal(t, in), mustMarshal(t, out); !bytes.Equal(b1, b2) {
			t.Errorf("%s: decodes to %s, want %s", c.name, b2, b1)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMarkup(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"markup kept", "<td>\n\ta &amp; b</td>", "<td>\n\ta &amp; b</td>"},
		{"esc", "<text>good\x1b[31m\nname</text>", "<text>good\\x1b[31m\nname</text>"},
		{"cr", "<p>ok\rFAIL</p>", `<p>ok\rFAIL</p>`},
		{"c1 csi", "<p>a\u009b31m</p>", `<p>a\u009b31m</p>`},
		{"bidi override", "<p>abc\u202etxt</p>", `<p>abc\u202etxt</p>`},
		{"not utf-8", "<p>a\xffb</p>", `<p>a\xffb</p>`},
		{"unicode kept", "<p>résumé 計算</p>", "<p>résumé 計算</p>"},
		{"azure command", "<p>a ##vso[task.complete]</p>", "<p>a ##vso&#91;task.complete]</p>"},
		{"command on a line", "::warning::x\n<p>y\n  ::error::z a::b</p>", "&#58;:warning::x\n<p>y\n  &#58;:error::z a::b</p>"},
	} {
		var buf bytes.Buffer
		if _, err := MarkupWriter(&buf).Write([]byte(c.in)); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != c.want || string(Markup([]byte(c.in))) != c.want {
			t.Errorf("%s: MarkupWriter(%q) wrote %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestMarkupWriterLines: a line that starts "::" is found across writes.
func TestMarkupWriterLines(t *testing.T) {
	var buf bytes.Buffer
	w := MarkupWriter(&buf)
	for _, p := range []string{"<p>a\n", "  ", "::error::x", " ::b</p>"} {
		w.Write([]byte(p))
	}
	if want := "<p>a\n  &#58;:error::x ::b</p>"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}

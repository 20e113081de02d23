package formats

import "testing"

func TestOrList(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := OrList(tt.words); got != tt.want {
			t.Errorf("OrList(%q) = %q, want %q", tt.words, got, tt.want)
		}
	}
}

package analyze

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 blocking calls", 1: "1 blocking call", 2: "2 blocking calls"} {
		if got := plural(n, "blocking call"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

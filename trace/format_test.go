package trace

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/formats"
)

// stubFormat is a format for registry tests: it claims heads that start
// with claim.
func stubFormat(name string, order int, claim string) Format {
	return Format{
		Name:  name,
		Order: order,
		Sniff: func(head []byte) bool { return bytes.HasPrefix(head, []byte(claim)) },
		Read:  func(io.Reader, Options) (*Trace, error) { return &Trace{}, nil },
	}
}

// TestRegistryOrder registers the same formats in every order: the list,
// and so which of two formats claiming the same head wins, must not
// depend on it.
func TestRegistryOrder(t *testing.T) {
	a := stubFormat("a", 20, "{")
	b := stubFormat("b", 10, "{") // claims what a claims, and comes first
	c := stubFormat("c", 20, "x") // same order as a: after it by name
	for _, tt := range []struct {
		name  string
		order []Format
	}{
		{"a b c", []Format{a, b, c}},
		{"c b a", []Format{c, b, a}},
		{"b c a", []Format{b, c, a}},
		{"c a b", []Format{c, a, b}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := registry{new(formats.Registry)}
			for _, f := range tt.order {
				r.register(f)
			}
			fs := r.list()
			var names []string
			for _, f := range fs {
				names = append(names, f.Name)
			}
			if want := []string{"b", "a", "c"}; !slices.Equal(names, want) {
				t.Errorf("formats %q, want %q", names, want)
			}
			if f, ok := sniffHead(fs, []byte("{}")); !ok || f.Name != "b" {
				t.Errorf("sniffing {} gave %q, %v; want b", f.Name, ok)
			}
		})
	}
}

// TestRegisterRefuses checks that Register panics on a format it could not
// use or that would shadow another.
func TestRegisterRefuses(t *testing.T) {
	noSniff := stubFormat("n", 0, "")
	noSniff.Sniff = nil
	for _, tt := range []struct {
		name string
		f    Format
		want string
	}{
		{"taken name", stubFormat("a", 99, "y"), `Register called twice for format "a"`},
		{"no name", stubFormat("", 0, "z"), "without a name, Sniff or Read"},
		{"no sniffer", noSniff, "without a name, Sniff or Read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := registry{new(formats.Registry)}
			r.register(stubFormat("a", 1, "x"))
			defer func() {
				if v := recover(); v == nil || !strings.Contains(v.(string), tt.want) {
					t.Errorf("panic %v, want one containing %q", v, tt.want)
				}
			}()
			r.register(tt.f)
		})
	}
}

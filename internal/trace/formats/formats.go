// Package formats keeps the trace formats that package trace registers,
// in sniffing order, and words what messages say of them: their names,
// titles and file names. It is trace's registry, kept here so that
// tracegap's own packages can word those messages while package trace
// lists only what a program outside tracegap needs (trace.Formats). Package
// trace imports it, so it imports nothing of tracegap's.
package formats

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tracegap/tracegap/internal/human"
)

// Entry is what the registry knows of a format: what orders it and what
// messages say of it (the trace.Format fields of the same names), and the
// trace.Format itself.
type Entry struct {
	Name     string
	Title    string
	Order    int
	Suffixes []string
	Hidden   bool
	Format   any
}

// Registry holds formats in sniffing order: by Order, then by Name.
type Registry struct {
	mu      sync.Mutex
	entries []Entry
}

// Registered is the registry of package trace (trace.Register).
var Registered Registry

// Add adds e in its place, unless its name is taken: then it reports
// false and adds nothing.
func (r *Registry) Add(e Entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.ContainsFunc(r.entries, func(g Entry) bool { return g.Name == e.Name }) {
		return false
	}
	i, _ := slices.BinarySearchFunc(r.entries, e, compareEntries)
	r.entries = slices.Insert(r.entries, i, e)
	return true
}

func compareEntries(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
}

// Remove removes the format called name, for a test that registers one
// for a while.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = slices.DeleteFunc(r.entries, func(e Entry) bool { return e.Name == name })
}

// List returns the formats in sniffing order.
func (r *Registry) List() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.entries)
}

// Names returns the registered formats' names in sniffing order,
// hidden ones left out.
func Names() []string {
	var names []string
	for _, f := range Registered.List() {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	return names
}

// Titles joins the registered formats' titles for a message that says
// what input was expected: "Chrome trace-event JSON or XPlane protobuf".
func Titles() string {
	var titles []string
	for _, f := range Registered.List() {
		if !f.Hidden {
			titles = append(titles, cmp.Or(f.Title, f.Name))
		}
	}
	return human.OrList(titles)
}

// FilePatterns lists the registered formats' file names for a message:
// "*.pt.trace.json, *.trace.json, *.json (Chrome trace-event JSON) or
// *.xplane.pb (XPlane protobuf)".
func FilePatterns() string {
	var each []string
	for _, f := range Registered.List() {
		if len(f.Suffixes) == 0 {
			continue
		}
		globs := make([]string, len(f.Suffixes))
		for i, s := range f.Suffixes {
			globs[i] = "*" + s
		}
		each = append(each, fmt.Sprintf("%s (%s)", strings.Join(globs, ", "), cmp.Or(f.Title, f.Name)))
	}
	return human.OrList(each)
}

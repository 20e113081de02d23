package analyze

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// Every distinct name of a trace is held against the name patterns, and a
// hostile trace can hold a million long distinct names: an unanchored
// regular expression is tried at every byte of each. Most patterns need a
// literal in any name they match ("cudaStreamSynchronize", "__next__"), so
// a name holding none of a pattern's literals is rejected by strings.Index
// alone, and only the rest reach the regular expression.

// filter is what a name must hold to match a pattern: one of lits, each
// at its start where prefix is set; no filter when lits is nil.
type filter struct {
	lits []lit
}

// lit is a literal a match holds, at the start of the name when prefix.
type lit struct {
	s      string
	prefix bool
}

// rejects reports whether s holds none of the filter's literals.
func (f *filter) rejects(s string) bool {
	if f.lits == nil {
		return false
	}
	for _, l := range f.lits {
		if l.prefix && strings.HasPrefix(s, l.s) || !l.prefix && strings.Contains(s, l.s) {
			return false
		}
	}
	return true
}

// matcher is a name pattern and its filter.
type matcher struct {
	re *regexp.Regexp
	filter
}

// newMatcher returns re with its filter.
func newMatcher(re *regexp.Regexp) matcher {
	return matcher{re, filter{literalsOf(re.String())}}
}

// mustMatcher compiles a built-in pattern.
func mustMatcher(expr string) matcher { return newMatcher(regexp.MustCompile(expr)) }

// match reports whether the pattern matches s, rejecting through its
// literals first.
func (m *matcher) match(s string) bool { return !m.rejects(s) && m.re.MatchString(s) }

// literalsOf returns literals one of which every match of the expression
// expr contains, nil when that cannot be told (a case-insensitive or a
// purely class-based part of an alternative).
func literalsOf(expr string) []lit {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := required(re.Simplify())
	if !ok || slices.ContainsFunc(lits, func(l lit) bool { return l.s == "" }) {
		return nil
	}
	return lits
}

// required returns the literals one of which every match of re holds.
func required(re *syntax.Regexp) ([]lit, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []lit{{s: string(re.Rune)}}, true
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		var all []lit
		for _, sub := range re.Sub {
			lits, ok := required(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, true
	case syntax.OpConcat:
		// A literal right after the start of the text is a prefix,
		// checked at the start alone; else the child with the longest
		// shortest literal rejects most.
		if len(re.Sub) > 1 && re.Sub[0].Op == syntax.OpBeginText {
			if lits, ok := required(re.Sub[1]); ok && re.Sub[1].Op == syntax.OpLiteral {
				lits[0].prefix = true
				return lits, true
			}
		}
		var best []lit
		for _, sub := range re.Sub {
			if lits, ok := required(sub); ok && shortest(lits) > shortest(best) {
				best = lits
			}
		}
		return best, best != nil
	}
	return nil, false
}

// shortest returns the length of the shortest of lits, 0 for none.
func shortest(lits []lit) int {
	if len(lits) == 0 {
		return 0
	}
	n := len(lits[0].s)
	for _, l := range lits[1:] {
		n = min(n, len(l.s))
	}
	return n
}

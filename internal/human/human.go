// Package human writes figures for people, the one way every report,
// finding and message of tracegap writes them.
package human

import (
	"math"
	"strconv"
	"strings"
)

// Duration writes ns with three significant figures and the largest unit
// that keeps the number at 1 or more, rounding up into the next unit where
// three figures would not hold it: "850 ns", "12.4 us", "1.00 ms" (for
// 999.6 us), "3.20 s". Minutes are written as seconds, and 0 as "0".
func Duration(ns int64) string {
	if ns == 0 {
		return "0"
	}
	if ns < 0 {
		if ns == math.MinInt64 {
			ns++
		}
		return "-" + Duration(-ns)
	}
	return scaled(ns, [4]string{"ns", "us", "ms", "s"})
}

// scaled writes n, counted in units[0], in the largest of units (each a
// thousand of the one before) that keeps the number at 1 or more, with
// three significant figures, rounding up into the next unit where three
// would not hold it.
func scaled(n int64, units [4]string) string {
	v := float64(n)
	switch {
	case v < 999.5:
		return strconv.FormatInt(n, 10) + " " + units[0]
	case v < 999_500:
		return sig3(v/1e3) + " " + units[1]
	case v < 999_500_000:
		return sig3(v/1e6) + " " + units[2]
	}
	return sig3(v/1e9) + " " + units[3]
}

// sig3 writes v, at least 0.9995, with three significant figures (all its
// whole digits from 1000 on).
func sig3(v float64) string {
	prec := 0
	switch {
	case v < 9.995:
		prec = 2
	case v < 99.95:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Share writes a fraction as a percentage with one decimal: "28.4%"; "-"
// for a fraction that is not a number.
func Share(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// Bytes writes a byte count in decimal units with three significant
// figures, as Duration rounds: "812 B", "12.3 MB", "1.00 MB" (for 999,999
// bytes), "1.05 GB".
func Bytes(n int64) string { return scaled(n, [4]string{"B", "kB", "MB", "GB"}) }

// OrList joins words as a sentence lists alternatives: "a, b or c".
func OrList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Count writes n and noun, the noun in the plural unless n is 1: "1 step",
// "0 steps", "12 host events", "3 copies". n is written as strconv does,
// so that a figure reads the same as elsewhere in a line.
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun)
}

// Plural returns noun as n of it read: itself for 1, else its plural, a
// consonant's y becoming ies ("copies", "days").
func Plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && stem != "" && !strings.ContainsRune("aeiou", rune(stem[len(stem)-1])) {
		return stem + "ies"
	}
	return noun + "s"
}

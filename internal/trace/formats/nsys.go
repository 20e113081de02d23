package formats

import (
	"path"
	"strings"
)

// NsysReportSuffixes are the file-name endings of Nsight Systems reports
// (.qdrep before 2021), which only nsys reads.
var NsysReportSuffixes = []string{".nsys-rep", ".qdrep"}

// IsNsysReport reports whether name ends as an Nsight Systems report's
// file does.
func IsNsysReport(name string) bool {
	lower := strings.ToLower(name)
	for _, s := range NsysReportSuffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	return false
}

// NsysReport says what an Nsight Systems report is and how to make the
// SQLite export tracegap reads, for the report file name (a path or a
// URL: its last element is used; "" for one whose name is not known). The
// name is untrusted: it is quoted for a shell where it needs to be, and
// the caller escapes the line for where it is written.
func NsysReport(name string) string {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "" || base == "." || base == "/" {
		base = "report.nsys-rep"
	}
	stem := base
	for _, s := range NsysReportSuffixes {
		if strings.HasSuffix(strings.ToLower(stem), s) {
			stem = stem[:len(stem)-len(s)]
			break
		}
	}
	out := stem + ".sqlite"
	return "an Nsight Systems report (.nsys-rep), which only nsys reads: make a SQLite export with `nsys export --type sqlite --output " +
		shellQuote(out) + " " + shellQuote(base) + "` and analyse " + out
}

// shellQuote returns s as one shell word: as it is when it holds only
// characters a shell leaves alone, else in single quotes.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+/@%=:,", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

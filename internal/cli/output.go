package cli

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/render"
)

// Every command's -o follows one rule: the name's ending, after an
// optional ".gz" that gzips what is written, picks the format; a format
// given too (--format) must agree with it; an ending the command cannot
// write is refused, naming those it can. A name without any ending ("-o
// report", "-o /dev/stdout") takes --format.

// writeOutput writes the output -o names with write, gzip-compressed when
// the name ends in ".gz": a URL (internal/objects) as an object committed
// only once written whole, a path as a file written atomically
// (render.WriteFile). A failed write leaves nothing behind either way.
func writeOutput(out string, write func(io.Writer) error) error {
	if _, gz := splitGzip(out); gz {
		plain := write
		write = func(w io.Writer) error {
			zw := gzip.NewWriter(w)
			if err := plain(zw); err != nil {
				return err
			}
			return zw.Close()
		}
	}
	if objects.IsURL(out) {
		return objects.WriteFile(context.Background(), out, write)
	}
	return render.WriteFile(out, write)
}

// outputName is the name of the output -o names whose ending picks its
// format: a URL's without its query (?endpoint=...).
func outputName(out string) string {
	if objects.IsURL(out) {
		out, _, _ = strings.Cut(out, "?")
	}
	return out
}

// splitGzip returns -o out's name, lowercased and without a final ".gz",
// and whether it had one.
func splitGzip(out string) (name string, gz bool) {
	name = strings.ToLower(outputName(out))
	if out == "-" {
		return name, false
	}
	trimmed := strings.TrimSuffix(name, ".gz")
	return trimmed, trimmed != name
}

// outputEnding is a file-name ending a command writes and the format it
// names.
type outputEnding struct {
	suffix, format string
}

// endingFormat returns the format out's ending names among endings (after
// an optional ".gz"); "" with no error for a name without an ending, or
// for "-"; an error naming the endings the command writes for another.
func endingFormat(cmd, out string, endings []outputEnding) (string, error) {
	name, gz := splitGzip(out)
	if out == "" || out == "-" {
		return "", nil
	}
	for _, e := range endings {
		if strings.HasSuffix(name, e.suffix) {
			return e.format, nil
		}
	}
	if !gz && !strings.Contains(path.Base(strings.ReplaceAll(name, `\`, "/")), ".") {
		return "", nil
	}
	names := make([]string, len(endings))
	for i, e := range endings {
		names[i] = e.suffix
	}
	return "", fmt.Errorf("-o %s: %s cannot write that: expected a name ending in %s (each may be followed by .gz to gzip it)", out, cmd, human.OrList(names))
}

// agreeFormat returns the format of a command with a --format flag
// (value) and the format byName that -o's ending names ("" for none): the
// ending's when --format is left alone, else the two must agree.
func agreeFormat(fs *pflag.FlagSet, value, byName, out string) (string, error) {
	switch {
	case byName == "":
		return value, nil
	case !fs.Changed("format"):
		return byName, nil
	case byName != value:
		return "", fmt.Errorf("--format %s and -o %s disagree: the file's ending names %s; give one or make them agree", value, out, byName)
	}
	return value, nil
}

// reportEndings returns the endings of the report formats that can write
// o, every name of each (".md" and ".markdown").
func reportEndings(o render.Of) []outputEnding {
	var out []outputEnding
	for _, f := range render.Formats(o) {
		for _, s := range f.Suffixes() {
			out = append(out, outputEnding{s, string(f)})
		}
	}
	return out
}

package cli

import (
	"context"
	"io"
	"strings"

	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/render"
)

// writeOutput writes the output -o names with write: a URL
// (internal/objects) as an object committed only once written whole, a
// path as a file written atomically (render.WriteFile). A failed write
// leaves nothing behind either way.
func writeOutput(path string, write func(io.Writer) error) error {
	if objects.IsURL(path) {
		return objects.WriteFile(context.Background(), path, write)
	}
	return render.WriteFile(path, write)
}

// outputName is the name of the output -o names whose ending picks its
// format: a URL's without its query (?endpoint=...).
func outputName(out string) string {
	if objects.IsURL(out) {
		out, _, _ = strings.Cut(out, "?")
	}
	return out
}

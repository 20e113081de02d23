// Command gzbomb writes a gzip bomb for measuring tracegap's limits: a file
// of about a thousandth of its expanded size, one gzip member with a valid
// trailer, expanding to a prefix followed by one byte repeated.
//
//	go run ./internal/tools/gzbomb -size 10G -o zeros.json.gz
//	go run ./internal/tools/gzbomb -size 10G -prefix '{"traceEvents":[' -fill ' ' -o spaces.json.gz
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

func main() {
	size := flag.String("size", "10G", "expanded size: bytes, or with a K, M or G suffix (powers of 1000)")
	prefix := flag.String("prefix", "", "text the expanded file starts with")
	fill := flag.String("fill", "\x00", "the byte that follows the prefix (one character)")
	out := flag.String("o", "bomb.json.gz", "output file")
	flag.Parse()
	if err := run(*size, *prefix, *fill, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gzbomb:", err)
		os.Exit(2)
	}
}

func run(size, prefix, fill, out string) error {
	n, err := parseSize(size)
	if err != nil {
		return err
	}
	if len(fill) != 1 {
		return fmt.Errorf("-fill %q: expected one byte", fill)
	}
	r, err := tracetest.GzipBomb([]byte(prefix), fill[0], n)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	written, err := io.Copy(w, r)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes expanding to %d\n", out, written, n)
	return nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1e3
	case strings.HasSuffix(s, "M"):
		mult = 1e6
	case strings.HasSuffix(s, "G"):
		mult = 1e9
	}
	n, err := strconv.ParseInt(strings.TrimRight(s, "KMG"), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("-size %q: expected a positive number of bytes, like 10G", s)
	}
	return n * mult, nil
}

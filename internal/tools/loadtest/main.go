// Command loadtest uploads trace files to a running tracegap serve from
// several concurrent clients, reports throughput and latency, and then checks
// that nothing was lost or corrupted: every accepted upload's report can be
// fetched and its raw bytes hash to what was sent.
//
// Usage:
//
//	go run ./internal/tools/loadtest -addr 127.0.0.1:8080 -n 200 -c 8 ../shared/traces/*.gz ../shared/traces/*.pb
//
// With -unique each upload is made distinct (an empty gzip member with a
// numbered comment is appended; readers decode the same trace), so that every
// upload is analysed instead of answered from the store. It exits 1 when an
// upload was lost, corrupted or failed unexpectedly.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type config struct {
	addr, token string
	n, c        int
	unique      bool
	retries     int
	timeout     time.Duration
}

// file is one input trace.
type file struct {
	name string
	data []byte
	gz   []byte // data as a gzip stream, for -unique
}

// outcome is what happened to one upload.
type outcome struct {
	file     int
	sha      string
	code     int
	id       string
	dup      bool
	err      string
	latency  time.Duration // of the answered attempt
	retries  int           // 503 answers before it
	sentSize int
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "server address (host:port)")
	flag.IntVar(&cfg.n, "n", 200, "number of uploads")
	flag.IntVar(&cfg.c, "c", 8, "concurrent clients")
	flag.BoolVar(&cfg.unique, "unique", false, "make every upload distinct so each is analysed")
	flag.IntVar(&cfg.retries, "retries", 100, "how many 503 answers one upload may get before it counts as failed")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "per-request timeout")
	flag.StringVar(&cfg.token, "token", os.Getenv("TRACEGAP_TOKEN"), "bearer token for uploads")
	flag.Parse()
	if flag.NArg() == 0 || cfg.n < 1 || cfg.c < 1 {
		fmt.Fprintln(os.Stderr, "usage: loadtest [-addr host:port] [-n 200] [-c 8] [-unique] FILE...")
		os.Exit(2)
	}
	files, err := readFiles(flag.Args(), cfg.unique)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(2)
	}
	client := &http.Client{Timeout: cfg.timeout}
	start := time.Now()
	outs := run(client, cfg, files)
	wall := time.Since(start)
	summarize(os.Stdout, outs, files, wall, cfg)
	if problems := verify(client, cfg, outs, files); len(problems) > 0 {
		for _, p := range problems {
			fmt.Println("FAIL:", p)
		}
		os.Exit(1)
	}
	fmt.Println("verified: every accepted upload's report fetched, raw bytes match (SHA-256), list complete")
}

func readFiles(paths []string, unique bool) ([]file, error) {
	var files []file
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f := file{name: filepath.Base(p), data: b}
		if unique {
			f.gz = b
			if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write(b)
				zw.Close()
				f.gz = buf.Bytes()
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// payload returns upload i's bytes.
func payload(files []file, i int, unique bool) (int, []byte) {
	k := i % len(files)
	if !unique {
		return k, files[k].data
	}
	var tail bytes.Buffer
	zw := gzip.NewWriter(&tail)
	zw.Comment = "tracegap-loadtest " + strconv.Itoa(i)
	zw.Close() // an empty member: the same trace, different bytes
	return k, append(slices.Clip(files[k].gz), tail.Bytes()...)
}

func run(client *http.Client, cfg config, files []file) []outcome {
	outs := make([]outcome, cfg.n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range cfg.c {
		wg.Go(func() {
			for i := range jobs {
				k, data := payload(files, i, cfg.unique)
				outs[i] = upload(client, cfg, files[k].name, data)
				outs[i].file = k
			}
		})
	}
	for i := range cfg.n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return outs
}

// upload posts one file, waiting as told by Retry-After when the server is
// full.
func upload(client *http.Client, cfg config, name string, data []byte) outcome {
	sum := sha256.Sum256(data)
	o := outcome{sha: hex.EncodeToString(sum[:]), sentSize: len(data)}
	for {
		req, _ := http.NewRequest("POST", "http://"+cfg.addr+"/api/v1/traces?name="+url.QueryEscape(name), bytes.NewReader(data))
		if cfg.token != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.token)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			o.err = err.Error()
			return o
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		o.latency, o.code = time.Since(t0), resp.StatusCode
		if err != nil {
			o.err = err.Error()
			return o
		}
		if resp.StatusCode == http.StatusServiceUnavailable && o.retries < cfg.retries {
			o.retries++
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(secs, 1)) * time.Second)
			continue
		}
		var a struct {
			ID        string `json:"id"`
			Duplicate bool   `json:"duplicate"`
			Error     string `json:"error"`
		}
		json.Unmarshal(body, &a)
		o.id, o.dup, o.err = a.ID, a.Duplicate, a.Error
		return o
	}
}

func summarize(w io.Writer, outs []outcome, files []file, wall time.Duration, cfg config) {
	var lat []time.Duration
	var sent int64
	codes := map[int]int{}
	retries := 0
	for _, o := range outs {
		codes[o.code]++
		retries += o.retries
		sent += int64(o.sentSize)
		if o.code == 200 || o.code == 201 {
			lat = append(lat, o.latency)
		}
	}
	slices.Sort(lat)
	fmt.Fprintf(w, "uploads: %d from %d clients, %d files, unique=%v\n", cfg.n, cfg.c, len(files), cfg.unique)
	fmt.Fprintf(w, "answers: %s (503 retries: %d)\n", codeList(codes), retries)
	fmt.Fprintf(w, "wall: %.2fs  throughput: %.1f uploads/s, %.1f MB/s sent\n", wall.Seconds(), float64(cfg.n)/wall.Seconds(), float64(sent)/1e6/wall.Seconds())
	if len(lat) > 0 {
		fmt.Fprintf(w, "latency of accepted uploads: p50 %v  p90 %v  p99 %v  max %v\n",
			pct(lat, 50), pct(lat, 90), pct(lat, 99), lat[len(lat)-1].Round(time.Millisecond))
	}
	rejected := map[string]string{}
	for _, o := range outs {
		if o.code >= 400 && o.code != 503 {
			rejected[files[o.file].name] = fmt.Sprintf("%d %s", o.code, o.err)
		}
	}
	for name, why := range rejected {
		fmt.Fprintf(w, "rejected: %s: %s\n", name, why)
	}
}

func codeList(codes map[int]int) string {
	keys := make([]int, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", codes[k], k))
	}
	return strings.Join(parts, ", ")
}

// pct returns the p-th percentile of sorted (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)].Round(time.Millisecond)
}

// verify checks every accepted upload against the server and returns the
// problems found.
func verify(client *http.Client, cfg config, outs []outcome, files []file) []string {
	var problems []string
	accepted := map[int]bool{}
	ids := map[string]string{} // id -> sha
	for i, o := range outs {
		switch {
		case o.code == 200 || o.code == 201:
			accepted[o.file] = true
			if o.id != o.sha[:16] {
				problems = append(problems, fmt.Sprintf("upload %d (%s): id %q, want %q", i, files[o.file].name, o.id, o.sha[:16]))
			}
			ids[o.id] = o.sha
		case o.code >= 400 && o.code < 500 && o.code != 503:
		default:
			problems = append(problems, fmt.Sprintf("upload %d (%s): status %d %s", i, files[o.file].name, o.code, o.err))
		}
	}
	for _, o := range outs { // a file is accepted always or never
		if o.code >= 400 && o.code < 500 && accepted[o.file] {
			problems = append(problems, fmt.Sprintf("%s: accepted once and refused once (%d %s)", files[o.file].name, o.code, o.err))
		}
	}
	for id, sum := range ids {
		problems = append(problems, check(client, cfg, id, sum)...)
	}
	var list struct {
		Total int `json:"total"`
	}
	if err := getJSON(client, "http://"+cfg.addr+"/api/v1/traces?limit=1", &list); err != nil || list.Total < len(ids) {
		problems = append(problems, fmt.Sprintf("list: total %d (%v), want at least %d", list.Total, err, len(ids)))
	}
	fmt.Printf("distinct traces stored: %d; checked %d reports and raw files\n", len(ids), len(ids))
	return problems
}

func check(client *http.Client, cfg config, id, sum string) []string {
	base := "http://" + cfg.addr + "/api/v1/traces/" + id
	var rep struct {
		Schema  string `json:"schema"`
		Verdict string `json:"verdict"`
	}
	if err := getJSON(client, base, &rep); err != nil || rep.Schema != "tracegap/report/v1" || rep.Verdict == "" {
		return []string{fmt.Sprintf("%s: report %+v, %v", id, rep, err)}
	}
	resp, err := client.Get(base + "/raw")
	if err != nil {
		return []string{fmt.Sprintf("%s: raw: %v", id, err)}
	}
	defer resp.Body.Close()
	h := sha256.New()
	io.Copy(h, resp.Body)
	if got := hex.EncodeToString(h.Sum(nil)); resp.StatusCode != 200 || got != sum {
		return []string{fmt.Sprintf("%s: raw: status %d, SHA-256 %s, want %s", id, resp.StatusCode, got, sum)}
	}
	return nil
}

func getJSON(client *http.Client, u string, v any) error {
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

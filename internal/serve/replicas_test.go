package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/testservers"
)

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) != "" {
		os.Exit(replicaMain())
	}
	code := m.Run()
	testservers.Stop()
	os.Exit(code)
}

// sharedEnv, set to "shared", runs every test server of the package on
// PostgreSQL and an S3 bucket (real servers, see internal/testservers)
// instead of SQLite and a directory: .ci/run runs the package's tests
// both ways.
const sharedEnv = "TRACEGAP_SERVE_STORE"

var storage struct {
	sync.Mutex
	byDir map[string][2]string // a data directory's database and blobs, kept across restarts
	peers map[string]string    // a data directory's second replica's
}

// sharedStorage returns a new PostgreSQL database and a new directory in
// an S3 bucket, on real servers, for servers to share.
func sharedStorage(t *testing.T) (database, blobs string) { return testservers.Storage(t) }

// sharedFor gives a test server of data directory dir the shared storage
// under sharedEnv, the same at each restart on dir, and reports whether
// it did.
func sharedFor(t *testing.T, cfg *Config) bool {
	t.Helper()
	if os.Getenv(sharedEnv) != "shared" || cfg.Store != nil || cfg.Database != "" || cfg.Blobs != "" {
		return false
	}
	storage.Lock()
	got, ok := storage.byDir[cfg.DataDir]
	storage.Unlock()
	if !ok {
		got[0], got[1] = sharedStorage(t)
		storage.Lock()
		if storage.byDir == nil {
			storage.byDir = map[string][2]string{}
		}
		storage.byDir[cfg.DataDir] = got
		storage.Unlock()
	} else {
		s3 := testservers.S3(t)
		testservers.UseS3Env(t, s3.Endpoint, testservers.S3AccessKey, testservers.S3SecretKey)
	}
	cfg.Database, cfg.Blobs = got[0], got[1]
	return true
}

// peerDir returns the data directory of the second replica beside the
// one on dir: the same at each restart on dir.
func peerDir(t *testing.T, dir string) string {
	storage.Lock()
	defer storage.Unlock()
	if storage.peers == nil {
		storage.peers = map[string]string{}
	}
	if p, ok := storage.peers[dir]; ok {
		return p
	}
	p := t.TempDir()
	storage.peers[dir] = p
	return p
}

// post uploads data through the server at base and returns the status and
// body; err is a failed exchange (the server gone).
func post(base, name string, data []byte) (int, []byte, error) {
	resp, err := http.Post(base+"/api/v1/traces?name="+name, "application/octet-stream", bytes.NewReader(data))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// uploads is a set of distinct contents, some uploaded twice.
type uploads struct {
	data [][]byte // by upload
	ids  []string // by upload, once answered
}

// newUploads makes n uploads of n-dup distinct contents, the last dup
// repeating the first ones; every eighth is padded to a few hundred
// kilobytes, so that it is still arriving when others are stored.
func newUploads(n, dup int) *uploads {
	u := &uploads{data: make([][]byte, n), ids: make([]string, n)}
	for i := range n {
		c := i
		if i >= n-dup {
			c = i - (n - dup)
		}
		var v map[string]any
		json.Unmarshal(fakeReport("parallel", c, int64(c+1)*1e6), &v)
		if c%8 == 0 {
			v["pad"] = strings.Repeat("p", 100_000*(1+c%5))
		}
		u.data[i], _ = json.Marshal(v)
	}
	return u
}

// distinct returns the number of distinct contents.
func (u *uploads) distinct() int {
	seen := map[string]bool{}
	for _, d := range u.data {
		seen[sha(d)] = true
	}
	return len(seen)
}

// TestReplicas runs two servers on one PostgreSQL database and one bucket:
// 400 concurrent uploads through both, 20 of them a content uploaded
// through the other at the same time, are each stored once, analysed once
// across the two, listed and fetched byte-identical through the other,
// and deleted through the other.
func TestReplicas(t *testing.T) {
	db, blobs := sharedStorage(t)
	fas := []*fakeAnalyzer{{}, {}}
	var servers []*testServer
	for _, fa := range fas {
		servers = append(servers, start(t, Config{Analyze: fa.analyze, Database: db, Blobs: blobs, MaxAnalyses: 4, MaxQueue: 1000}))
	}
	u := newUploads(400, 20)
	var wg sync.WaitGroup
	errs := make([]error, len(u.data))
	for i := range u.data {
		wg.Go(func() {
			code, body, err := post(servers[i%2].URL, fmt.Sprintf("u%d", i), u.data[i])
			var a uploadAnswer
			if err == nil && (code != http.StatusCreated && code != http.StatusOK || json.Unmarshal(body, &a) != nil) {
				err = fmt.Errorf("status %d: %s", code, body)
			}
			u.ids[i], errs[i] = a.ID, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
	}
	if got := fas[0].calls.Load() + fas[1].calls.Load(); got != int64(u.distinct()) {
		t.Errorf("%d analyses across the two servers, want %d: one per content", got, u.distinct())
	}
	checkServed(t, u, servers...)

	// Deleted through the other server: gone from both, blob included.
	victim := u.ids[3]
	if r := do(t, "DELETE", servers[0].URL+"/api/v1/traces/"+victim, nil, nil); r.code != http.StatusNoContent {
		t.Fatalf("DELETE through the other server = %d: %s", r.code, r.body)
	}
	for _, ts := range servers {
		if r := get(t, ts.URL+"/api/v1/traces/"+victim); r.code != http.StatusNotFound {
			t.Errorf("GET of a deleted trace = %d, want 404", r.code)
		}
	}
	for _, ts := range servers {
		ts.settle()
	}
	if ok, err := servers[0].blobs.keep.exists(context.Background(), sha(u.data[3])); ok || err != nil {
		t.Errorf("deleted trace's blob still stored (%v)", err)
	}
	assertConsistent(t, Config{Database: db, Blobs: blobs})
}

// checkServed checks that every upload of u is listed by each server and
// its raw file fetched byte-identical through each.
func checkServed(t *testing.T, u *uploads, servers ...*testServer) {
	t.Helper()
	var urls []string
	for _, ts := range servers {
		urls = append(urls, ts.URL)
	}
	checkServedAt(t, u, urls...)
}

func checkServedAt(t *testing.T, u *uploads, urls ...string) {
	t.Helper()
	want := u.distinct()
	for k, url := range urls {
		listed, total := listAll(t, url)
		if total != want || len(listed) != want {
			t.Errorf("server %d lists %d traces (total %d), want %d", k, len(listed), total, want)
		}
		for i, id := range u.ids {
			if !listed[id] {
				t.Errorf("server %d does not list upload %d (%s)", k, i, id)
				continue
			}
			if r := get(t, url+"/api/v1/traces/"+id+"/raw"); r.code != 200 || !bytes.Equal(r.body, u.data[i]) {
				t.Errorf("raw of upload %d through server %d: %d, %d bytes, want the %d uploaded", i, k, r.code, len(r.body), len(u.data[i]))
			}
		}
	}
}

// listAll lists every record through the server at url, a page (of the
// most the API gives) at a time by cursor, and returns their ids and the
// total the first page gave.
func listAll(t *testing.T, url string) (map[string]bool, int) {
	t.Helper()
	listed := map[string]bool{}
	var total int
	for cursor := ""; ; {
		var l listAnswer
		get(t, url+"/api/v1/traces?limit=200"+cursor).json(t, &l)
		if cursor == "" {
			total = l.Total
		}
		for _, tr := range l.Traces {
			listed[tr.ID] = true
		}
		if l.NextCursor == "" {
			return listed, total
		}
		cursor = "&cursor=" + l.NextCursor
	}
}

// assertConsistent checks that CheckStore finds every record's blobs and a
// record for every blob.
func assertConsistent(t *testing.T, cfg Config) {
	t.Helper()
	problems, err := CheckStore(context.Background(), cfg)
	if err != nil || len(problems) != 0 {
		t.Errorf("CheckStore = %v, %v; want consistent", problems, err)
	}
}

// TestReplicasRealTraces analyses real traces on two servers sharing
// storage: one uploaded through each is compared through either, and its
// HTML report, rendered from the bucket's copy on first view, is the same
// through both.
func TestReplicasRealTraces(t *testing.T) {
	db, blobs := sharedStorage(t)
	var servers []*testServer
	for range 2 {
		cfg := Config{Database: db, Blobs: blobs}
		cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
		servers = append(servers, start(t, cfg))
	}
	base := servers[0].mustUpload(t, "workers0", realTrace(t, "kineto-resnet50-workers0.pt.trace.json.gz"))
	next := servers[1].mustUpload(t, "workers4", realTrace(t, "kineto-resnet50-workers4.pt.trace.json.gz"))
	query := "/api/v1/compare?base=" + base.ID + "&new=" + next.ID
	a, b := get(t, servers[0].URL+query), get(t, servers[1].URL+query)
	if a.code != 200 || !bytes.Equal(a.body, b.body) || !bytes.Contains(a.body, []byte(`"verdict": "parallel"`)) {
		t.Errorf("compare through the two servers: %d and %d, want 200 and the same document:\n%s\n%s", a.code, b.code, a.body, b.body)
	}
	pa := get(t, servers[1].URL+"/traces/"+base.ID)
	pb := get(t, servers[0].URL+"/traces/"+base.ID)
	if pa.code != 200 || !bytes.Equal(pa.body, pb.body) || !bytes.Contains(pa.body, []byte("workers0")) {
		t.Errorf("report page through the two servers: %d and %d, want 200 and the same page", pa.code, pb.code)
	}
	for _, ts := range servers {
		if tmp := ts.blobs.temps(); len(tmp) != 0 {
			t.Errorf("temporary files left after rendering: %v", tmp)
		}
	}
	assertConsistent(t, Config{Database: db, Blobs: blobs})
}

// TestSweepKeepsWhatIsBeingStored leaves a blob with no record, as a
// server killed between storing an upload's file and its record does:
// the next server to start removes it, unless another server holds the
// content's lock (it is storing that upload now).
func TestSweepKeepsWhatIsBeingStored(t *testing.T) {
	db, blobs := sharedStorage(t)
	fa := &fakeAnalyzer{}
	a := start(t, Config{Analyze: fa.analyze, Database: db, Blobs: blobs})
	a.sweptAll()
	ctx := context.Background()
	orphan := func(n int) string {
		f, err := a.receive(bytes.NewReader(fakeReport("parallel", n)), fmt.Sprintf("orphan%d", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.blobs.commit(ctx, f.tmp, f.sha); err != nil {
			t.Fatal(err)
		}
		return f.sha
	}
	kept, gone := orphan(1), orphan(2)
	unlock, err := a.lockContent(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := CheckStore(ctx, Config{Database: db, Blobs: blobs})
	if err != nil || len(problems) != 1 || problems[0] != (Problem{SHA256: gone, Orphan: true}) {
		t.Errorf("CheckStore = %v, %v; want the one unlocked orphan", problems, err)
	}
	b := start(t, Config{Analyze: fa.analyze, Database: db, Blobs: blobs})
	<-b.swept
	for sha, want := range map[string]bool{kept: true, gone: false} {
		if ok, err := b.blobs.keep.exists(ctx, sha); ok != want || err != nil {
			t.Errorf("blob %s… after a server started: stored %v (%v), want %v", sha[:8], ok, err, want)
		}
	}
	unlock()
	a.stop(t)
	<-start(t, Config{Analyze: fa.analyze, Database: db, Blobs: blobs}).swept
	assertConsistent(t, Config{Database: db, Blobs: blobs})
}

// replicaEnv, in a child process of the test binary, makes it a server
// (replicaMain) rather than run tests: TestReplicaKilled kills one.
const replicaEnv = "TRACEGAP_TEST_REPLICA"

// replicaMain is a server in a child process, over the data directory,
// database and blobs that the environment names, with the fake analyzer:
// once its start's sweep has ended, it prints the address it listens on,
// then serves until it is killed.
func replicaMain() int {
	fa := &fakeAnalyzer{}
	s, err := New(Config{Analyze: fa.analyze, DataDir: os.Getenv(replicaEnv), Database: os.Getenv(replicaEnv + "_DATABASE"),
		Blobs: os.Getenv(replicaEnv + "_BLOBS"), MaxAnalyses: 2, MaxQueue: 1000, Log: log.New(os.Stderr, "replica: ", 0)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	<-s.swept // so that the test sees what the start cleaned up
	fmt.Printf("http://%s\n", ln.Addr())
	fmt.Fprintln(os.Stderr, s.HTTPServer("").Serve(ln))
	return 1
}

// replica is a server running in a child process.
type replica struct {
	cmd *exec.Cmd
	url string
	log *bytes.Buffer
}

// startReplica starts a server in a child process, on the data directory
// dir and the shared database and blobs, and waits until it listens.
func startReplica(t *testing.T, dir, db, blobs string) *replica {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+dir, replicaEnv+"_DATABASE="+db, replicaEnv+"_BLOBS="+blobs)
	r := &replica{cmd: cmd, log: &bytes.Buffer{}}
	cmd.Stderr = r.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Wait()
		t.Fatalf("replica did not start: %v; its log:\n%s", err, r.log)
	}
	r.url = strings.TrimSpace(line)
	return r
}

// TestReplicaKilled runs two servers as processes on one database and one
// bucket, kills one with SIGKILL while uploads are arriving through both,
// and sends what it did not answer through the other, as a load balancer
// does: no upload is lost, each is fetched byte-identical through either
// once the killed one is back, and the store is consistent, what the
// killed one was storing cleaned up when it started again.
func TestReplicaKilled(t *testing.T) {
	db, blobs := sharedStorage(t)
	dirA := t.TempDir()
	a := startReplica(t, dirA, db, blobs)
	b := startReplica(t, t.TempDir(), db, blobs)
	u := newUploads(200, 10)
	var answeredA, retried atomic.Int64
	var once sync.Once
	kill := func() {
		once.Do(func() {
			a.cmd.Process.Kill()
			a.cmd.Wait()
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(u.data))
	for i := range u.data {
		wg.Go(func() {
			name := fmt.Sprintf("u%d", i)
			target := []*replica{a, b}[i%2]
			code, body, err := post(target.url, name, u.data[i])
			if target == a && err == nil && code < 300 && answeredA.Add(1) == 25 {
				kill()
			}
			if err != nil || code >= 500 { // the killed server's: again through the other
				retried.Add(1)
				code, body, err = post(b.url, name, u.data[i])
			}
			var ans uploadAnswer
			if err == nil && (code >= 300 || json.Unmarshal(body, &ans) != nil) {
				err = fmt.Errorf("status %d: %s", code, body)
			}
			u.ids[i], errs[i] = ans.ID, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("upload %d: %v\nreplica b's log:\n%s", i, err, b.log)
		}
	}
	if retried.Load() == 0 {
		t.Fatalf("the kill cut no upload short: all %d answered", len(u.data))
	}
	t.Logf("%d uploads cut short by the kill, sent again through the other server", retried.Load())
	a = startReplica(t, dirA, db, blobs)
	checkServedAt(t, u, a.url, b.url)
	if tmp, _ := os.ReadDir(filepath.Join(dirA, "tmp")); len(tmp) != 0 {
		t.Errorf("the killed server's temporary files are left after its restart: %d", len(tmp))
	}
	assertConsistent(t, Config{Database: db, Blobs: blobs})
}

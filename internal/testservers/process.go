package testservers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// process is a server process a test binary started, with its temporary
// directory (its data and log).
type process struct {
	cmd    *exec.Cmd
	dir    string
	log    string
	logf   *os.File
	exited chan struct{} // closed once the process has exited
}

// startProcess starts bin with args in a new temporary directory named
// after name, its output in name.log there; the kernel kills it should
// the test binary die without calling Stop (Linux).
func startProcess(name, bin string, args ...string) (*process, error) {
	dir, err := os.MkdirTemp("", "tracegap-"+name+"-*")
	if err != nil {
		return nil, err
	}
	return startIn(dir, name, bin, args...)
}

// startIn starts bin with args as startProcess does, in dir.
func startIn(dir, name, bin string, args ...string) (*process, error) {
	p := &process{dir: dir, log: filepath.Join(dir, name+".log"), exited: make(chan struct{})}
	var err error
	if p.logf, err = os.Create(p.log); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.logf, p.logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{}
	dieWithParent(p.cmd.SysProcAttr, syscall.SIGKILL) // it may not stop on SIGTERM
	if err := p.cmd.Start(); err != nil {
		p.logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// stop kills the process, waits for it and removes its directory.
func (p *process) stop() {
	p.cmd.Process.Kill()
	<-p.exited
	p.logf.Close()
	os.RemoveAll(p.dir)
}

// waitReady waits, a minute at most, until ready succeeds, polling it
// every 200ms; it fails early should the process exit. On failure it
// stops the process and the error ends with its log.
func (p *process) waitReady(ready func(context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var err error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = ready(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			err = fmt.Errorf("not ready after a minute: %w", err)
			break
		}
		select {
		case <-p.exited:
			err = fmt.Errorf("exited (%v) before it was ready: %w", p.cmd.ProcessState, err)
		case <-tick.C:
			continue
		}
		break
	}
	log := tail(p.log, 2000)
	p.stop()
	return fmt.Errorf("%w; its log ends:\n%s", err, log)
}

// freePorts returns n distinct ports free on 127.0.0.1 now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// lazy is a server started once per test binary, on first use, from the
// binary an environment variable names.
type lazy[S any] struct {
	once sync.Once
	s    S
	err  error
	stop func()
}

// get returns the server, started by start from the binary that env
// names, else skips the test (fails it under CI) saying absent, a format
// given env's name.
func (l *lazy[S]) get(t testing.TB, env, name string, start func(bin string) (S, func(), error), absent string) S {
	t.Helper()
	short(t, name)
	bin := os.Getenv(env)
	if bin == "" {
		missing(t, absent, env)
	}
	l.once.Do(func() { l.s, l.stop, l.err = start(bin) })
	if l.err != nil {
		t.Fatalf("starting %s: %v", name, l.err)
	}
	return l.s
}

// close stops the server, if started.
func (l *lazy[S]) close() {
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

// uploadFile opens the local file path and puts it with put, failing the
// test, which url names the target of, where it cannot.
func uploadFile(t testing.TB, url, path string, put func(context.Context, *os.File) error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := put(context.Background(), f); err != nil {
		t.Fatalf("uploading %s to %s: %v", path, url, err)
	}
}

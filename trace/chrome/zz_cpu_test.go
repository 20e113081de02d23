package chrome

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracegap/tracegap/trace"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	path := os.Getenv("TRACEGAP_BENCH_JSON")
	if path == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(path)
	for r := 0; r < 3; r++ {
		c0, w0 := cpuNow(), time.Now()
		d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		for {
			if _, err := d.ReadToken(); err != nil {
				break
			}
		}
		c1, w1 := cpuNow(), time.Now()
		tr, err := trace.Read(bytes.NewReader(data), int64(len(data)), trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c2, w2 := cpuNow(), time.Now()
		mb := float64(len(data)) / 1e6
		fmt.Printf("tokenwalk cpu %.0f MB/s wall %.0f MB/s | Read cpu %.0f MB/s wall %.0f MB/s (%d events)\n",
			mb/(c1-c0).Seconds(), mb/w1.Sub(w0).Seconds(), mb/(c2-c1).Seconds(), mb/w2.Sub(w1).Seconds(), len(tr.Events))
	}
}

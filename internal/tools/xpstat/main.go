package main

import (
	"fmt"
	"os"
	"time"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

func main() {
	t0 := time.Now()
	t, err := trace.Open(os.Args[1], trace.Options{})
	if err != nil {
		panic(err)
	}
	t1 := time.Now()
	_, err = analyze.Analyze(t, analyze.DefaultOptions())
	if err != nil {
		panic(err)
	}
	t2 := time.Now()
	fmt.Println("read", t1.Sub(t0), "analyze", t2.Sub(t1))
	if len(os.Args) > 2 {
		for i, tr := range t.Tracks {
			fmt.Printf("%d\t%v\t%v\t%q\t%d\n", i, tr.Kind, tr.Derived, tr.Name, len(t.TrackEvents(i)))
		}
	}
}

package tracefile

import (
	"os"
	"sync"
)

// Temporary copies of inputs (a stream saved for SQLite, a trace saved to
// be read twice) can be gigabytes: CreateTemp records each one so that a
// command interrupted while it writes one (Ctrl-C) can remove them all
// (RemoveTemps) before it exits, which deferred removals do not do.
var temps struct {
	sync.Mutex
	names map[string]bool
}

// CreateTemp is os.CreateTemp, the file recorded until RemoveTemp removes
// it.
func CreateTemp(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	temps.Lock()
	defer temps.Unlock()
	if temps.names == nil {
		temps.names = map[string]bool{}
	}
	temps.names[f.Name()] = true
	return f, nil
}

// RemoveTemp closes and removes f, a file CreateTemp made, and forgets it.
func RemoveTemp(f *os.File) {
	f.Close()
	temps.Lock()
	defer temps.Unlock()
	os.Remove(f.Name())
	delete(temps.names, f.Name())
}

// ForgetTemp forgets name, a file CreateTemp made that was renamed to a
// file meant to stay (an output written atomically).
func ForgetTemp(name string) {
	temps.Lock()
	defer temps.Unlock()
	delete(temps.names, name)
}

// RemoveTemps removes every file CreateTemp made that is still recorded,
// for a process about to exit on a signal. Files still open are removed
// too: their writes go on to no name.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	for name := range temps.names {
		os.Remove(name)
		delete(temps.names, name)
	}
}

package chrome

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func BenchmarkZZValueWalk(b *testing.B) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		d.ReadToken()
		for d.PeekKind() != '}' {
			d.ReadValue()
			if d.PeekKind() == '[' {
				d.ReadToken()
				n := 0
				for d.PeekKind() != ']' {
					v, _ := d.ReadValue()
					n += len(v)
				}
				d.ReadToken()
			} else {
				d.SkipValue()
			}
		}
	}
}

func BenchmarkZZTokenWalk(b *testing.B) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		for {
			_, err := d.ReadToken()
			if err != nil {
				break
			}
		}
	}
}

package analysis

import (
	"strings"
	"testing"
)

// FuzzParseHeads is --ablate on arbitrary strings for a 2-layer, 2-head
// model: no panic, one-line errors, only heads the model has, and the
// names HeadNames writes read back as the same heads. Seed corpus in
// testdata/fuzz/FuzzParseHeads.
func FuzzParseHeads(f *testing.F) {
	const layers, heads = 2, 2
	f.Fuzz(func(t *testing.T, s string) {
		off, err := ParseHeads(s, layers, heads)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if len(off) != layers {
			t.Fatalf("%q: %d layers", s, len(off))
		}
		for _, row := range off {
			if len(row) != heads {
				t.Fatalf("%q: a layer of %d heads", s, len(row))
			}
		}
		again, err := ParseHeads(strings.Join(HeadNames(off), ","), layers, heads)
		if err != nil {
			t.Fatalf("%q: read back: %v", s, err)
		}
		for l := range off {
			for h := range off[l] {
				if off[l][h] != again[l][h] {
					t.Fatalf("%q: %s read back differently", s, HeadName(l, h))
				}
			}
		}
	})
}

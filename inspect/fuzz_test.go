package inspect

import (
	"strings"
	"testing"

	"headlab/graph"
)

// FuzzParseHeads is --ablate on arbitrary strings for a 2-layer, 2-head
// model: no panic, one-line errors, only heads the model has, and the
// names HeadNames writes read back as the same heads. Seed corpus in
// testdata/fuzz/FuzzParseHeads.
func FuzzParseHeads(f *testing.F) {
	c := graph.Config{Vocab: 16, SeqLen: 16, Layers: 2, Heads: 2, DModel: 16, DFF: 16}
	f.Fuzz(func(t *testing.T, s string) {
		off, err := ParseHeads(s, c)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if len(off) != c.Layers {
			t.Fatalf("%q: %d layers", s, len(off))
		}
		for _, row := range off {
			if len(row) != c.Heads {
				t.Fatalf("%q: a layer of %d heads", s, len(row))
			}
		}
		again, err := ParseHeads(strings.Join(HeadNames(off), ","), c)
		if err != nil {
			t.Fatalf("%q: read back: %v", s, err)
		}
		for l := range off {
			for h := range off[l] {
				if off[l][h] != again[l][h] {
					t.Fatalf("%q: L%dH%d read back differently", s, l, h)
				}
			}
		}
	})
}

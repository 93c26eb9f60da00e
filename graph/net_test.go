package graph

import (
	"math"
	"testing"

	"headlab/backend/cpu"
)

// group builds a Net of one model per seed (weights InitWeights(c, seed),
// inputs randomBatch(c, batch, seed)) and runs it once.
func group(t *testing.T, c Config, seeds []uint64, batch int, train bool) *Net {
	t.Helper()
	b, err := NewBlock(cpu.New(), c, len(seeds))
	if err != nil {
		t.Fatal(err)
	}
	var ws []*Weights
	for _, s := range seeds {
		ws = append(ws, InitWeights(c, s))
	}
	if err := b.Upload(ws); err != nil {
		t.Fatal(err)
	}
	net, err := Build(b, batch, train)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	for i, s := range seeds {
		tok, tgt := randomBatch(c, batch, s)
		if err := net.SetInputs(i, tok, tgt); err != nil {
			t.Fatal(err)
		}
	}
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	return net
}

func sameFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestGroupReadsEachModel: what a Net reads back per model (the gate
// gradients, and the attention of the whole batch or of its first
// sequences) is, bit for bit, what that model gives alone; Probs takes 0
// to Batch sequences and refuses more or fewer.
func TestGroupReadsEachModel(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 3
	seeds := []uint64{21, 22, 23}
	net := group(t, c, seeds, batch, true)
	gates, err := net.GateGrads()
	if err != nil {
		t.Fatal(err)
	}
	per := c.Heads * c.SeqLen * c.SeqLen // one sequence's attention in a layer
	for i, s := range seeds {
		alone := group(t, c, []uint64{s}, batch, true)
		ga, err := alone.GateGrads()
		if err != nil {
			t.Fatal(err)
		}
		for l := range ga[0] {
			for h := range ga[0][l] {
				if gates[i][l][h] != ga[0][l][h] {
					t.Errorf("model %d L%dH%d: gate gradient %v in the group, %v alone", i, l, h, gates[i][l][h], ga[0][l][h])
				}
			}
		}
		for l := 0; l < c.Layers; l++ {
			for _, k := range []int{1, batch} {
				all := read(t, func() ([]float32, error) { return net.Probs(l, k) })
				one := read(t, func() ([]float32, error) { return alone.Probs(l, k) })
				if len(all) != len(seeds)*k*per || len(one) != k*per {
					t.Fatalf("Probs(%d, %d): %d and %d floats, want %d and %d", l, k, len(all), len(one), len(seeds)*k*per, k*per)
				}
				if !sameFloats(all[i*k*per:(i+1)*k*per], one) {
					t.Errorf("model %d layer %d, %d sequences: attention differs from the model alone", i, l, k)
				}
				if k == 1 {
					whole := read(t, func() ([]float32, error) { return alone.Probs(l, batch) })
					if !sameFloats(one, whole[:per]) {
						t.Errorf("layer %d: the first sequence read alone differs from the batch's first", l)
					}
				}
			}
		}
	}
	for _, k := range []int{-1, batch + 1} {
		if _, err := net.Probs(0, k); err == nil {
			t.Errorf("Probs(0, %d) of a batch of %d read", k, batch)
		}
	}
	if p, err := net.Probs(0, 0); err != nil || len(p) != 0 {
		t.Errorf("Probs(0, 0) = %d floats, %v", len(p), err)
	}
}

// TestCorrectCountsHits: an evaluating Net's hit count is, per model, the
// number of answer positions (target >= 0) whose logits' first maximum is
// the target, counted here from the logits it returns.
func TestCorrectCountsHits(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 4
	seeds := []uint64{31, 32}
	net := group(t, c, seeds, batch, false)
	logits := read(t, net.Logits)
	hits := read(t, net.Correct)
	rows := batch * c.SeqLen
	answers := 0
	for i, s := range seeds {
		_, tgt := randomBatch(c, batch, s)
		want := 0
		for r, target := range tgt {
			if target < 0 {
				continue
			}
			answers++
			row := logits[(i*rows+r)*c.Vocab : (i*rows+r+1)*c.Vocab]
			best := 0
			for j, x := range row {
				if x > row[best] {
					best = j
				}
			}
			if best == target {
				want++
			}
		}
		if hits[i] != float32(want) {
			t.Errorf("model %d: %v hits, the logits give %d", i, hits[i], want)
		}
	}
	if answers == 0 {
		t.Fatal("no answer positions")
	}
	if _, err := group(t, c, seeds[:1], batch, true).Correct(); err == nil {
		t.Error("a training Net counted hits")
	}
}

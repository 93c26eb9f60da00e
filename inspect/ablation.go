package inspect

import (
	"fmt"
	"slices"
	"strings"

	"headlab/analysis"
	"headlab/graph"
	"headlab/tasks"
	"headlab/train"
)

// Ablation is how a switched-off head's output (before the output
// projection) is replaced: docs/causal.md.
type Ablation string

const (
	// AblateZero zeroes it (docs/head-patterns.md): the default.
	AblateZero Ablation = "zero"
	// AblateMean replaces it, at each position, by its mean over the
	// examples measured, in the intact model.
	AblateMean Ablation = "mean"
	// AblateResample replaces it by its output, in the intact model, on
	// another of the examples measured: example i takes example
	// Derangement(i, N)'s.
	AblateResample Ablation = "resample"
)

// Ablations lists every method, the default first.
var Ablations = []Ablation{AblateZero, AblateMean, AblateResample}

// ParseAblation reads a method's name.
func ParseAblation(s string) (Ablation, error) {
	for _, a := range Ablations {
		if string(a) == s {
			return a, nil
		}
	}
	names := make([]string, len(Ablations))
	for i, a := range Ablations {
		names[i] = string(a)
	}
	return "", fmt.Errorf("unknown ablation %q (known: %s)", s, strings.Join(names, ", "))
}

// MinExamples is the fewest examples the method can measure on:
// resampling needs another example.
func (a Ablation) MinExamples() int {
	if a == AblateResample {
		return 2
	}
	return 1
}

// Derangement is the example whose activations example i of n takes in
// resample ablation and in patching's "other" corruption: the next one,
// (i+1) mod n. Never i itself when n > 1, and fixed, so results are
// deterministic; the examples are independent draws, so the next one is
// as good a partner as a random one.
func Derangement(i, n int) int { return (i + 1) % n }

// Ablator switches heads off by one method for every model of an
// Evaluator, on fixed batches (one per model, all of one size). For mean
// and resample ablation it first runs the intact models over the batches
// once and keeps what every head output at every position (the mean
// over the batch, or each example's); every Snapshot then replaces the
// heads switched off by it. Zero ablation needs nothing kept: its
// Snapshots are the Evaluator's own.
type Ablator struct {
	Method Ablation

	e      *train.Evaluator
	tokens [][]int // each model's batch's tokens
	// kept[s][l] is model s's block-l head outputs: [T][D], the mean over
	// the batch (mean), or [N][T][D], every example's (resample).
	kept [][][]float32
}

// NewAblator readies method on the models of e and their batches held.
func NewAblator(e *train.Evaluator, held []*tasks.Batch, method Ablation) (*Ablator, error) {
	a := &Ablator{Method: method, e: e}
	for _, b := range held {
		a.tokens = append(a.tokens, b.Tokens)
	}
	switch method {
	case AblateZero:
		return a, nil
	case AblateMean, AblateResample:
	default:
		return nil, fmt.Errorf("inspect: unknown ablation %q", method)
	}
	c := e.Models[0].Shape
	N, T, D := held[0].N, c.SeqLen, c.DModel
	if N < method.MinExamples() {
		return nil, fmt.Errorf("inspect: %s ablation needs at least %d examples, got %d", method, method.MinExamples(), N)
	}
	size := T * D // one example's head outputs in one block
	sums := make([][][]float64, len(held))
	a.kept = make([][][]float32, len(held))
	for s := range held {
		sums[s], a.kept[s] = make([][]float64, c.Layers), make([][]float32, c.Layers)
		for l := range c.Layers {
			if method == AblateMean {
				sums[s][l] = make([]float64, size)
			} else {
				a.kept[s][l] = make([]float32, N*size)
			}
		}
	}
	read := func(net *graph.Net, first, n int) error {
		for l := range c.Layers {
			o, err := net.Capture(graph.HeadOut, l) // [S][EvalChunk*T*D]
			if err != nil {
				return err
			}
			for s := range held {
				mine := o[s*train.EvalChunk*size : s*train.EvalChunk*size+n*size]
				if method == AblateResample {
					copy(a.kept[s][l][first*size:], mine)
					continue
				}
				for i, v := range mine {
					sums[s][l][i%size] += float64(v)
				}
			}
		}
		return nil
	}
	if _, err := e.Snapshot(held, train.SnapshotOptions{Probe: &train.Probe{Read: read}}); err != nil {
		return nil, err
	}
	if method == AblateMean {
		for s := range sums {
			for l, sum := range sums[s] {
				a.kept[s][l] = make([]float32, size)
				for i, v := range sum {
					a.kept[s][l][i] = float32(v / float64(N))
				}
			}
		}
	}
	return a, nil
}

// Snapshot is the Evaluator's Snapshot of bs with the heads in o.Off
// switched off by the method. bs must hold the tokens of the batches the
// Ablator was made with (their targets may differ: accuracy by kind
// masks answers).
func (a *Ablator) Snapshot(bs []*tasks.Batch, o train.SnapshotOptions) ([]train.Snapshot, error) {
	if len(bs) != len(a.tokens) {
		return nil, fmt.Errorf("inspect: %d batches for an ablator of %d models", len(bs), len(a.tokens))
	}
	for s, b := range bs {
		if !slices.Equal(b.Tokens, a.tokens[s]) {
			return nil, fmt.Errorf("inspect: model %d's batch is not the one its ablator measured", s)
		}
	}
	if a.Method == AblateZero || len(o.Off) == 0 {
		return a.e.Snapshot(bs, o)
	}
	c := a.e.Models[0].Shape
	T, D, dh := c.SeqLen, c.DModel, c.HeadDim()
	N := bs[0].N
	o.Probe = &train.Probe{Stage: func(net *graph.Net, first, n int) error {
		for s := range bs {
			off := o.Off[min(s, len(o.Off)-1)]
			for l := range min(len(off), c.Layers) {
				_, repl, err := net.Intervention(s, graph.HeadOut, l)
				if err != nil {
					return err
				}
				for h, isOff := range off[l] {
					if !isOff {
						continue
					}
					for b := range n {
						src := a.kept[s][l] // mean: [T][D]
						if a.Method == AblateResample {
							j := Derangement(first+b, N)
							src = src[j*T*D : (j+1)*T*D]
						}
						for t := range T {
							row := (b*T + t) * D
							copy(repl[row+h*dh:row+(h+1)*dh], src[t*D+h*dh:t*D+(h+1)*dh])
						}
					}
				}
			}
		}
		return nil
	}}
	return a.e.Snapshot(bs, o)
}

// eachHead is the Snapshot of bs with each head switched off in turn on
// top of all (layer by layer, head by head), accuracy and loss alone.
// Zero ablation reruns only the blocks a head changes (EachOff).
func (a *Ablator) eachHead(bs []*tasks.Batch, all analysis.Mask) ([][]train.Snapshot, error) {
	c := a.e.Models[0].Shape
	var offs [][][]bool
	for l := range c.Layers {
		for h := range c.Heads {
			offs = append(offs, all.With(l, h))
		}
	}
	if a.Method == AblateZero {
		return a.e.EachOff(bs, offs)
	}
	out := make([][]train.Snapshot, len(offs))
	for i, off := range offs {
		s, err := a.Snapshot(bs, train.SnapshotOptions{Off: [][][]bool{off}})
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

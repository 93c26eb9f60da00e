package inspect

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"headlab/analysis"
	"headlab/graph"
	"headlab/tasks"
	"headlab/train"
)

// Corruptions of a clean example for activation patching
// (docs/causal.md).
const (
	// CorruptFirstHalf (induction tasks) replaces every first-half token
	// by a token the example does not hold, so that no second-half token
	// has an earlier copy for induction to find: example n's position i <
	// N takes u[(i+n) mod len(u)], u the ids of the trained vocabulary
	// absent from the example, ascending.
	CorruptFirstHalf = "first-half"
	// CorruptOther (every task) runs another held-out example instead:
	// clean example i's corrupted run is example Derangement(i, N).
	CorruptOther = "other"
)

// Corruptions lists the corruptions task t has, its default first.
func Corruptions(t tasks.Task) []string {
	if _, ok := t.(tasks.Induction); ok {
		return []string{CorruptFirstHalf, CorruptOther}
	}
	return []string{CorruptOther}
}

// CheckCorruption says why task t has no corruption named kind, naming
// the tasks that have it; nil when it has.
func CheckCorruption(t tasks.Task, kind string) error {
	if slices.Contains(Corruptions(t), kind) {
		return nil
	}
	var have []string
	for _, name := range tasks.Names() {
		o, _ := tasks.New(name)
		if slices.Contains(Corruptions(o), kind) {
			have = append(have, name)
		}
	}
	if len(have) == 0 {
		return fmt.Errorf("unknown corruption %q (known: %s, %s)", kind, CorruptFirstHalf, CorruptOther)
	}
	return fmt.Errorf("task %s has no %s corruption (tasks that have one: %s; every task has %s)", t.Name(), kind, strings.Join(have, ", "), CorruptOther)
}

// Corrupt is the corrupted run of every example of b under kind: the
// corrupted tokens, and b's own (clean) targets, which the metrics score.
func Corrupt(t tasks.Task, kind string, b *tasks.Batch) (*tasks.Batch, error) {
	if err := CheckCorruption(t, kind); err != nil {
		return nil, err
	}
	T := b.T
	out := &tasks.Batch{N: b.N, T: T, Tokens: make([]int, len(b.Tokens)), Targets: b.Targets}
	switch kind {
	case CorruptOther:
		if b.N < 2 {
			return nil, fmt.Errorf("the %s corruption needs at least 2 examples", kind)
		}
		for i := range b.N {
			j := Derangement(i, b.N)
			copy(out.Tokens[i*T:(i+1)*T], b.Tokens[j*T:(j+1)*T])
		}
	case CorruptFirstHalf:
		copy(out.Tokens, b.Tokens)
		vocab, half := trainedVocab(t), T/2
		for n := range b.N {
			ex := out.Tokens[n*T : (n+1)*T]
			var unused []int
			for v := range vocab {
				if !slices.Contains(b.Tokens[n*T:(n+1)*T], v) {
					unused = append(unused, v)
				}
			}
			if len(unused) == 0 {
				return nil, fmt.Errorf("example %d holds every token: nothing to replace its first half with", n)
			}
			for i := range half {
				ex[i] = unused[(i+n)%len(unused)]
			}
		}
	}
	return out, nil
}

// Score is a run's metrics over the answer positions of its examples:
// the answer's logit difference (its logit minus the mean logit over
// the vocabulary, in the clean example's answer) and accuracy (argmax on
// the clean answer).
type Score struct {
	LogitDiff float64 `json:"logit_diff"`
	Accuracy  float64 `json:"accuracy"`
}

// PatchLocated is the summed normalised logit difference (over the
// positions patched one at a time) at which patching locates a head: it
// restores at least a tenth of what the corruption took.
const PatchLocated = 0.1

// Patched is what patching one activation, at each position in turn,
// restores: (M - M_corrupt) / (M_clean - M_corrupt) for M the logit
// difference and the accuracy (0 where clean and corrupted score the
// same), per position patched (PatchReport.Positions), and the logit
// difference's sum over them.
type Patched struct {
	Name      string    `json:"name"`
	Layer     int       `json:"layer"`
	Head      int       `json:"head"` // -1 for the residual stream
	LogitDiff []float64 `json:"logit_diff"`
	Accuracy  []float64 `json:"accuracy"`
	Total     float64   `json:"total_logit_diff"`
	// examples[k][i] is example k's own normalised logit difference at
	// the i-th position patched, for the first PatchOptions.PerExample
	// examples.
	examples [][]float64
}

// PatchReport is activation patching of one model: every head's output
// and the residual stream entering every block, from clean runs into
// corrupted ones, one position at a time.
type PatchReport struct {
	Corruption string `json:"corruption"`
	Examples   int    `json:"examples"`
	// Positions are the positions patched, ascending.
	Positions []int     `json:"positions"`
	Clean     Score     `json:"clean"`
	Corrupted Score     `json:"corrupted"`
	Heads     []Patched `json:"heads"`
	Resid     []Patched `json:"resid_pre"`
	// Located are the heads whose total reaches PatchLocated, by total
	// (largest first).
	Located []string `json:"located"`
	// cleanEx and corruptEx are each example's own logit difference, for
	// the first PatchOptions.PerExample examples.
	cleanEx, corruptEx []float64
}

// PerExample is example k's own patching results (k < PatchOptions.
// PerExample): for each head, then each block's residual stream, the
// normalised logit difference per position, normalised by the example's
// own clean and corrupted runs (0 where they score the same).
func (r *PatchReport) PerExample(k int) (heads, resid [][]float64) {
	for _, p := range r.Heads {
		heads = append(heads, p.examples[k])
	}
	for _, p := range r.Resid {
		resid = append(resid, p.examples[k])
	}
	return heads, resid
}

// PatchOptions say what Patch runs.
type PatchOptions struct {
	// Examples is how many held-out examples (from the first) are the
	// clean runs.
	Examples int
	// Corruption names how each is corrupted ("": the task's default).
	Corruption string
	// PerExample keeps each of the first PerExample examples' own results
	// (PatchReport.PerExample).
	PerExample int
	// Layers and Positions restrict what is patched to those blocks and
	// positions (nil: all).
	Layers, Positions []int
	// Progress, when set, is told after each patched run how many of the
	// total are done: (Heads+1) x blocks x positions runs, each a pass
	// over the examples, long at large sizes.
	Progress func(done, total int)
}

// Patch patches every model of e: for each block, each head and each
// position, the head's output of the clean run written into the
// corrupted run at that position, and the same for the residual stream
// entering each block.
func Patch(e *train.Evaluator, o PatchOptions) ([]*PatchReport, error) {
	m := e.Models[0]
	if o.Corruption == "" {
		o.Corruption = Corruptions(m.Task)[0]
	}
	S := len(e.Models)
	clean, corrupt := make([]*tasks.Batch, S), make([]*tasks.Batch, S)
	for s, held := range e.HeldOutAll() {
		clean[s] = firstExamples(held, o.Examples)
		var err error
		if corrupt[s], err = Corrupt(m.Task, o.Corruption, clean[s]); err != nil {
			return nil, err
		}
	}
	layers, positions, err := patchSpan(m.Shape, o)
	if err != nil {
		return nil, err
	}
	pt := &patcher{e: e, o: o, c: m.Shape, clean: clean, corrupt: corrupt, N: clean[0].N, K: min(o.PerExample, clean[0].N),
		positions: positions, total: len(layers) * (m.Shape.Heads + 1) * len(positions)}
	if err := pt.runEnds(); err != nil {
		return nil, err
	}
	for _, l := range layers {
		for h := range m.Shape.Heads {
			ps, err := pt.measure(graph.HeadOut, l, h, analysis.HeadName(l, h))
			if err != nil {
				return nil, err
			}
			for s, r := range pt.reports {
				r.Heads = append(r.Heads, ps[s])
			}
		}
	}
	for _, l := range layers {
		ps, err := pt.measure(graph.ResidPre, l, -1, fmt.Sprintf("resid L%d", l))
		if err != nil {
			return nil, err
		}
		for s, r := range pt.reports {
			r.Resid = append(r.Resid, ps[s])
		}
	}
	for _, r := range pt.reports {
		r.locate()
	}
	return pt.reports, nil
}

// patchSpan is the blocks and positions o patches (every one where o
// names none), refused when one is out of c's range.
func patchSpan(c graph.Config, o PatchOptions) (layers, positions []int, err error) {
	L, T := c.Layers, c.SeqLen
	layers, positions = o.Layers, o.Positions
	if layers == nil {
		layers = span(L)
	}
	if positions == nil {
		positions = span(T)
	}
	for _, l := range layers {
		if l < 0 || l >= L {
			return nil, nil, fmt.Errorf("inspect: no block %d (the model has %d)", l, L)
		}
	}
	for _, p := range positions {
		if p < 0 || p >= T {
			return nil, nil, fmt.Errorf("inspect: no position %d (sequences have %d)", p, T)
		}
	}
	return layers, positions, nil
}

// patcher is what Patch's steps share: the clean and corrupted batches,
// the clean runs' activations kept to patch from, both runs' scores, and
// the progress over every patch.
type patcher struct {
	e                 *train.Evaluator
	o                 PatchOptions
	c                 graph.Config
	clean, corrupt    []*tasks.Batch
	N, K              int
	positions         []int
	kept              []map[graph.Site][][]float32 // [s][site][l][N*T*D]
	cleanRun, corrRun *scoredRun
	reports           []*PatchReport
	done, total       int
}

// patchSites are the activations a patch writes: the residual stream
// entering a block and the heads' outputs.
var patchSites = []graph.Site{graph.ResidPre, graph.HeadOut}

// runEnds runs the clean batches, keeping their activations, and the
// corrupted ones unpatched: the two ends every patch is measured
// between, and the reports they start.
func (pt *patcher) runEnds() error {
	S, L, T, D := len(pt.e.Models), pt.c.Layers, pt.c.SeqLen, pt.c.DModel
	pt.kept = make([]map[graph.Site][][]float32, S)
	for s := range pt.kept {
		pt.kept[s] = map[graph.Site][][]float32{}
		for _, site := range patchSites {
			for range L {
				pt.kept[s][site] = append(pt.kept[s][site], make([]float32, pt.N*T*D))
			}
		}
	}
	keep := func(net *graph.Net, first, n int) error {
		for _, site := range patchSites {
			for l := range L {
				a, err := net.Capture(site, l)
				if err != nil {
					return err
				}
				for s := range S {
					copy(pt.kept[s][site][l][first*T*D:], a[s*train.EvalChunk*T*D:s*train.EvalChunk*T*D+n*T*D])
				}
			}
		}
		return nil
	}
	var err error
	if pt.cleanRun, err = runScored(pt.e, pt.clean, pt.clean, pt.K, nil, keep); err != nil {
		return err
	}
	if pt.corrRun, err = runScored(pt.e, pt.corrupt, pt.clean, pt.K, nil, nil); err != nil {
		return err
	}
	pt.reports = make([]*PatchReport, S)
	for s := range pt.reports {
		pt.reports[s] = &PatchReport{Corruption: pt.o.Corruption, Examples: pt.N, Positions: pt.positions, Clean: pt.cleanRun.score[s], Corrupted: pt.corrRun.score[s],
			cleanEx: pt.cleanRun.examples[s], corruptEx: pt.corrRun.examples[s]}
	}
	return nil
}

// patchAt is one position's patch of site in block l: head h's
// columns of the head outputs, or every column of the residual.
func (pt *patcher) patchAt(site graph.Site, l, h, p int) func(net *graph.Net, first, n int) error {
	T, D := pt.c.SeqLen, pt.c.DModel
	dh := pt.c.HeadDim()
	lo, hi := 0, D
	if h >= 0 {
		lo, hi = h*dh, (h+1)*dh
	}
	return func(net *graph.Net, first, n int) error {
		if err := net.ClearInterventions(-1); err != nil {
			return err
		}
		for s := range pt.e.Models {
			gate, repl, err := net.Intervention(s, site, l)
			if err != nil {
				return err
			}
			src := pt.kept[s][site][l]
			for b := range n {
				row := (b*T + p) * D
				at := ((first+b)*T + p) * D
				clear(gate[row+lo : row+hi])
				copy(repl[row+lo:row+hi], src[at+lo:at+hi])
			}
		}
		return nil
	}
}

// measure patches site of block l (head h, or -1 for the residual) at
// each position, every model at once, scored between the two ends.
func (pt *patcher) measure(site graph.Site, l, h int, name string) ([]Patched, error) {
	K := pt.K
	out := make([]Patched, len(pt.e.Models))
	for s := range out {
		P := len(pt.positions)
		out[s] = Patched{Name: name, Layer: l, Head: h, LogitDiff: make([]float64, P), Accuracy: make([]float64, P)}
		out[s].examples = make([][]float64, K)
		for k := range K {
			out[s].examples[k] = make([]float64, P)
		}
	}
	for i, p := range pt.positions {
		run, err := runScored(pt.e, pt.corrupt, pt.clean, K, pt.patchAt(site, l, h, p), nil)
		if err != nil {
			return nil, err
		}
		if pt.done++; pt.o.Progress != nil {
			pt.o.Progress(pt.done, pt.total)
		}
		for s := range out {
			cl, co := pt.reports[s].Clean, pt.reports[s].Corrupted
			out[s].LogitDiff[i] = normalise(run.score[s].LogitDiff, co.LogitDiff, cl.LogitDiff)
			out[s].Accuracy[i] = normalise(run.score[s].Accuracy, co.Accuracy, cl.Accuracy)
			out[s].Total += out[s].LogitDiff[i]
			for k := range K {
				out[s].examples[k][i] = normalise(run.examples[s][k], pt.corrRun.examples[s][k], pt.cleanRun.examples[s][k])
			}
		}
	}
	return out, nil
}

// locate lists the heads whose patches restore at least PatchLocated of
// the logit difference in all, largest first.
func (r *PatchReport) locate() {
	byTotal := append([]Patched(nil), r.Heads...)
	sort.SliceStable(byTotal, func(i, j int) bool { return byTotal[i].Total > byTotal[j].Total })
	r.Located = []string{}
	for _, p := range byTotal {
		if p.Total >= PatchLocated {
			r.Located = append(r.Located, p.Name)
		}
	}
}

// span is 0 .. n-1.
func span(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// normalise is (x - lo) / (hi - lo), 0 when hi == lo.
func normalise(x, lo, hi float64) float64 {
	if hi == lo {
		return 0
	}
	return (x - lo) / (hi - lo)
}

// scoredRun is one run's Score per model, and each of its first K
// examples' own logit difference.
type scoredRun struct {
	score    []Score
	examples [][]float64
}

// runScored runs bs through the probed graph of e, with stage's
// interventions, and scores every answer of answers (the clean batches,
// whose targets the metrics score); read, when set, sees every pass too.
func runScored(e *train.Evaluator, bs, answers []*tasks.Batch, K int, stage, read func(*graph.Net, int, int) error) (*scoredRun, error) {
	c := e.Models[0].Shape
	T, V := c.SeqLen, c.Vocab
	S := len(bs)
	sum, count := make([]float64, S), make([]int, S)
	r := &scoredRun{score: make([]Score, S), examples: make([][]float64, S)}
	for s := range r.examples {
		r.examples[s] = make([]float64, K)
	}
	scoreLogits := func(net *graph.Net, first, n int) error {
		if read != nil {
			if err := read(net, first, n); err != nil {
				return err
			}
		}
		lg, err := net.Logits()
		if err != nil {
			return err
		}
		for s := range S {
			tg := answers[s].Targets
			for b := range n {
				var ex float64
				var exN int
				for t := range T {
					a := tg[(first+b)*T+t]
					if a < 0 {
						continue
					}
					row := lg[((s*train.EvalChunk+b)*T+t)*V:][:V]
					d := LogitDiff(row, a)
					sum[s] += d
					count[s]++
					ex += d
					exN++
				}
				if k := first + b; k < K && exN > 0 {
					r.examples[s][k] = ex / float64(exN)
				}
			}
		}
		return nil
	}
	// The targets are the clean ones: accuracy is on the clean answers.
	runs := make([]*tasks.Batch, S)
	for s, b := range bs {
		runs[s] = &tasks.Batch{N: b.N, T: b.T, Tokens: b.Tokens, Targets: answers[s].Targets}
	}
	sn, err := e.Snapshot(runs, train.SnapshotOptions{Probe: &train.Probe{Stage: stage, Read: scoreLogits}})
	if err != nil {
		return nil, err
	}
	for s := range S {
		r.score[s] = Score{Accuracy: sn[s].Accuracy}
		if count[s] > 0 {
			r.score[s].LogitDiff = sum[s] / float64(count[s])
		}
	}
	return r, nil
}

// LogitDiff is the answer's logit difference in one row of logits: its
// logit minus the mean logit over the vocabulary.
func LogitDiff(row []float32, answer int) float64 {
	var mean float64
	for _, v := range row {
		mean += float64(v)
	}
	return float64(row[answer]) - mean/float64(len(row))
}

package circuit

import (
	"fmt"
	"math"
	"sort"

	"headlab/kernels"
	"headlab/train"
)

// DefaultThreshold is the share of the metric a circuit keeps by default.
const DefaultThreshold = 0.9

// CheckThreshold says why t is not a share in (0, 1].
func CheckThreshold(t float64) error {
	if !(t > 0 && t <= 1) {
		return fmt.Errorf("threshold %g: want a share in (0, 1]", t)
	}
	return nil
}

// EdgeResult is one edge: its effect by path patching alone, its
// attribution patching estimate, its place in the ranking, and whether
// the circuit keeps it.
type EdgeResult struct {
	Edge        string  `json:"edge"`
	From        string  `json:"from"`
	To          string  `json:"to"`
	Effect      float64 `json:"effect"`
	Attribution float64 `json:"attribution"`
	Rank        int     `json:"rank"`
	InCircuit   bool    `json:"in_circuit"`
}

// Report is one model's circuit (docs/circuits.md).
type Report struct {
	Corruption string  `json:"corruption"`
	Direction  string  `json:"direction"`
	Examples   int     `json:"examples"`
	Threshold  float64 `json:"threshold"`
	// Clean and Corrupted are the intact runs' logit difference.
	Clean     float64 `json:"clean_logit_diff"`
	Corrupted float64 `json:"corrupted_logit_diff"`
	// Edges is every edge of the model, in Edges' order.
	Edges []EdgeResult `json:"edges"`
	// Circuit is the circuit's edges, by effect (largest first), and
	// Faithfulness the share of the metric it keeps with every other
	// edge patched.
	Circuit      []string `json:"circuit"`
	Faithfulness float64  `json:"faithfulness"`
	// Curve is the faithfulness curve: Curve[k] is the share kept by
	// the first k edges of the attribution ranking, k = 0 .. len(Edges)
	// (or up to the shortest prefix that keeps Threshold, when Find was
	// not asked for the whole curve).
	Curve []float64 `json:"faithfulness_curve"`
	// RankCorrelation is Spearman's correlation of attribution patching
	// with path patching over every edge.
	RankCorrelation float64 `json:"rank_correlation"`
}

// Faithfulness is the share of the metric that the edges of kept carry:
// the base run with every other edge patched (noising) or with kept's
// edges patched (denoising), normalised as (M - M_corrupted) / (M_clean -
// M_corrupted) in both.
func (r *Runner) Faithfulness(kept []bool) (float64, error) {
	var patched []Edge
	for i, e := range r.edges {
		if kept[i] == (r.Direction == Denoising) {
			patched = append(patched, e)
		}
	}
	m, err := r.Patched(patched)
	if err != nil {
		return 0, err
	}
	if r.Clean == r.Corrupted {
		return 0, nil
	}
	return (m - r.Corrupted) / (r.Clean - r.Corrupted), nil
}

// FindIn is Find on a runner of m on dev with o, closed after.
func FindIn(m *train.Model, dev kernels.Device, o Options, threshold float64, curve bool, progress func(done, total int)) (*Report, error) {
	r, err := NewRunner(m, dev, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return Find(r, threshold, curve, progress)
}

// Find finds r's circuit at threshold (CheckThreshold): every edge's
// attribution and path-patching effect; the edges ranked by attribution's
// magnitude; the faithfulness of each prefix of the ranking (the curve);
// the shortest prefix that keeps threshold; then, from its last-ranked
// edge to its first, each edge dropped whose dropping still keeps
// threshold. Without curve the curve stops at the shortest prefix.
// progress, when set, is told each faithfulness measured.
func Find(r *Runner, threshold float64, curve bool, progress func(done, total int)) (*Report, error) {
	if err := CheckThreshold(threshold); err != nil {
		return nil, err
	}
	eap, err := r.Attribute()
	if err != nil {
		return nil, err
	}
	exact, err := r.PathPatch()
	if err != nil {
		return nil, err
	}
	E := len(r.edges)
	rank := make([]int, E) // rank[k] is the edge ranked k-th
	for i := range rank {
		rank[i] = i
	}
	sort.SliceStable(rank, func(a, b int) bool { return math.Abs(eap[rank[a]]) > math.Abs(eap[rank[b]]) })
	rep := &Report{Corruption: r.Corruption, Direction: r.Direction, Examples: r.Examples, Threshold: threshold,
		Clean: r.Clean, Corrupted: r.Corrupted, RankCorrelation: spearman(eap, exact)}
	total, done := 2*E+1, 0
	tell := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	var short int
	if rep.Curve, short, err = faithCurve(r, rank, threshold, curve, tell); err != nil {
		return nil, err
	}
	kept, faith, err := prune(r, rank[:short], threshold, rep.Curve[short], tell)
	if err != nil {
		return nil, err
	}
	rep.Faithfulness = faith
	rep.listEdges(r, rank, eap, exact, kept)
	return rep, nil
}

// faithCurve is the faithfulness of each prefix of rank, from the empty
// one, and the length of the shortest prefix that keeps threshold (all of
// rank when none does); without curve it stops there.
func faithCurve(r *Runner, rank []int, threshold float64, curve bool, tell func()) ([]float64, int, error) {
	E := len(rank)
	out := make([]float64, E+1)
	kept := make([]bool, E)
	short := -1
	for k := 0; k <= E; k++ {
		if k > 0 {
			kept[rank[k-1]] = true
		}
		var err error
		if out[k], err = r.Faithfulness(kept); err != nil {
			return nil, 0, err
		}
		tell()
		if short < 0 && out[k] >= threshold {
			short = k
			if !curve {
				return out[:k+1], short, nil
			}
		}
	}
	if short < 0 {
		short = E
	}
	return out, short, nil
}

// prune drops from the prefix (of faithfulness faith), from its last
// edge to its first, each edge whose dropping still keeps threshold, and
// returns the circuit left (kept[i] for edge i) and its faithfulness.
func prune(r *Runner, prefix []int, threshold, faith float64, tell func()) ([]bool, float64, error) {
	kept := make([]bool, len(r.edges))
	for _, i := range prefix {
		kept[i] = true
	}
	for k := len(prefix) - 1; k >= 0; k-- {
		kept[prefix[k]] = false
		f, err := r.Faithfulness(kept)
		if err != nil {
			return nil, 0, err
		}
		tell()
		if f >= threshold {
			faith = f
		} else {
			kept[prefix[k]] = true
		}
	}
	return kept, faith, nil
}

// listEdges fills rep's edges (each with its rank, effect exact and
// attribution eap) and its circuit, the edges kept, by effect, largest
// first.
func (rep *Report) listEdges(r *Runner, rank []int, eap, exact []float64, kept []bool) {
	var in []int
	for i, e := range r.edges {
		rep.Edges = append(rep.Edges, EdgeResult{Edge: e.String(), From: e.From.String(), To: ReceiverName(e.To),
			Effect: exact[i], Attribution: eap[i], InCircuit: kept[i]})
		if kept[i] {
			in = append(in, i)
		}
	}
	for k, i := range rank {
		rep.Edges[i].Rank = k
	}
	sort.SliceStable(in, func(a, b int) bool { return exact[in[a]] > exact[in[b]] })
	rep.Circuit = []string{}
	for _, i := range in {
		rep.Circuit = append(rep.Circuit, rep.Edges[i].Edge)
	}
}

// spearman is the rank correlation of a and b (ties take their mean
// rank); 0 when either is constant.
func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= float64(len(ra))
	mb /= float64(len(rb))
	var sab, saa, sbb float64
	for i := range ra {
		sab += (ra[i] - ma) * (rb[i] - mb)
		saa += (ra[i] - ma) * (ra[i] - ma)
		sbb += (rb[i] - mb) * (rb[i] - mb)
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}

// ranks is each value's rank in x, ascending from 0, ties sharing their
// mean rank.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	out := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	return out
}

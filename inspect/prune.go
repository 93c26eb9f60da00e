package inspect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"headlab/graph"
	"headlab/kernels"
	"headlab/train"
)

// HeadImportance is Michel et al.'s (2019) importance of a head: the mean
// over examples of |d loss / d gate| for a gate scaling the head's output.
type HeadImportance struct {
	Name       string  `json:"name"`
	Layer      int     `json:"layer"`
	Head       int     `json:"head"`
	Importance float64 `json:"importance"`
}

// PruneStep is held-out accuracy with the first Removed heads of the
// importance order switched off, beside the mean over random orders.
type PruneStep struct {
	Removed        int     `json:"removed"`
	Fraction       float64 `json:"fraction"`
	Head           string  `json:"head,omitempty"`
	Accuracy       float64 `json:"accuracy"`
	RandomAccuracy float64 `json:"random_accuracy"`
}

// PruneReport is the whole pruning experiment.
type PruneReport struct {
	Importance   []HeadImportance `json:"importance"` // least important first
	Steps        []PruneStep      `json:"steps"`
	RandomOrders int              `json:"random_orders"`
}

// Importance measures every head's importance on the first `examples`
// held-out examples, one example at a time (the expectation is of the
// absolute gradient, so examples must not be averaged first).
func Importance(m *train.Model, dev kernels.Device, examples int) ([]HeadImportance, error) {
	b, err := graph.BlockOf(dev, m.Shape, []*graph.Weights{m.Weights})
	if err != nil {
		return nil, err
	}
	defer b.Free()
	net, err := graph.Build(b, 1, true)
	if err != nil {
		return nil, err
	}
	defer net.Close()
	held := firstExamples(train.HeldOut(m), examples)
	T := held.T
	sum := make([][]float64, m.Shape.Layers)
	for l := range sum {
		sum[l] = make([]float64, m.Shape.Heads)
	}
	for n := 0; n < held.N; n++ {
		if err := net.SetInputs(0, held.Tokens[n*T:(n+1)*T], held.Targets[n*T:(n+1)*T]); err != nil {
			return nil, err
		}
		if err := net.Run(); err != nil {
			return nil, err
		}
		all, err := net.GateGrads()
		if err != nil {
			return nil, err
		}
		g := all[0]
		for l := range g {
			for h, v := range g[l] {
				sum[l][h] += math.Abs(v)
			}
		}
	}
	var out []HeadImportance
	for l := range sum {
		for h := range sum[l] {
			out = append(out, HeadImportance{Name: fmt.Sprintf("L%dH%d", l, h), Layer: l, Head: h,
				Importance: sum[l][h] / float64(held.N)})
		}
	}
	return out, nil
}

// PruneOrder sorts heads by increasing importance, ties in head order.
func PruneOrder(imp []HeadImportance) []HeadImportance {
	out := append([]HeadImportance(nil), imp...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Importance < out[j].Importance })
	return out
}

// Prune removes m's heads one at a time in order of increasing importance
// and measures held-out accuracy after each removal, beside the mean
// accuracy over randomOrders random orders (seeded from the model's seed).
func Prune(m *train.Model, dev kernels.Device, examples, randomOrders int) (*PruneReport, error) {
	imp, err := Importance(m, dev, examples)
	if err != nil {
		return nil, err
	}
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	held := train.HeldOut(m)
	order := PruneOrder(imp)
	// Random orders revisit the same sets of heads: evaluate each set once.
	seen := map[string]float64{}
	curve := func(order []HeadImportance) ([]float64, error) {
		var off [][]bool
		accs := make([]float64, 0, len(order)+1)
		for k := 0; k <= len(order); k++ {
			if k > 0 {
				off = withHead(off, m.Shape, order[k-1].Layer, order[k-1].Head)
			}
			key := fmt.Sprint(HeadNames(off))
			acc, ok := seen[key]
			if !ok {
				var err error
				if acc, _, err = e.Accuracy(held, off); err != nil {
					return nil, err
				}
				seen[key] = acc
			}
			accs = append(accs, acc)
		}
		return accs, nil
	}
	byImportance, err := curve(order)
	if err != nil {
		return nil, err
	}
	random := make([]float64, len(byImportance))
	rng := rand.New(rand.NewPCG(m.Train.Seed, 0x9121e))
	for range randomOrders {
		shuffled := append([]HeadImportance(nil), imp...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		accs, err := curve(shuffled)
		if err != nil {
			return nil, err
		}
		for k, a := range accs {
			random[k] += a / float64(randomOrders)
		}
	}
	r := &PruneReport{Importance: order, RandomOrders: randomOrders}
	for k, acc := range byImportance {
		s := PruneStep{Removed: k, Fraction: float64(k) / float64(len(order)), Accuracy: acc, RandomAccuracy: random[k]}
		if k > 0 {
			s.Head = order[k-1].Name
		}
		r.Steps = append(r.Steps, s)
	}
	return r, nil
}

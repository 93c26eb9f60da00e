package inspect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"headlab/analysis"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// The pruning orders, in the order reports list them.
const (
	// OrderOneShot is Michel et al.'s (2019): heads by increasing
	// importance, measured once on the intact model.
	OrderOneShot = "oneshot"
	// OrderIterative measures importance again after each removal, with
	// the heads removed so far switched off, and removes the least
	// important of the rest.
	OrderIterative = "iterative"
	// OrderGreedy switches off, at each step, whichever remaining head
	// costs least now: the one whose removal leaves the highest accuracy.
	OrderGreedy = "greedy"
	// OrderRandom is the mean over random orders.
	OrderRandom = "random"
)

// Orders lists every pruning order.
var Orders = []string{OrderOneShot, OrderIterative, OrderGreedy, OrderRandom}

// ParseOrders reads a comma-separated list of orders ("greedy",
// "oneshot,random"); "all" or "" is every order.
func ParseOrders(list string) ([]string, error) {
	if list == "" || list == "all" {
		return Orders, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		known := false
		for _, k := range Orders {
			known = known || k == o
		}
		if !known {
			return nil, fmt.Errorf("unknown order %q (known: %s, or all)", o, strings.Join(Orders, ", "))
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out, nil
}

// CostTolerance is the cost in accuracy, 1 point, at which a report says
// how many heads can go.
const CostTolerance = 0.01

// HeadImportance is Michel et al.'s (2019) importance of a head: the mean
// over examples of |d loss / d gate| for a gate scaling the head's output.
type HeadImportance struct {
	Name       string  `json:"name"`
	Layer      int     `json:"layer"`
	Head       int     `json:"head"`
	Importance float64 `json:"importance"`
}

// PruneStep is held-out accuracy with the first Removed heads of an order
// switched off.
type PruneStep struct {
	Removed  int     `json:"removed"`
	Fraction float64 `json:"fraction"`
	// Head is the head removed at this step (none for a random order's mean
	// or the intact model); Importance its importance when the order chose
	// it (oneshot and iterative), SelectAccuracy the accuracy on the
	// selection examples that made greedy choose it.
	Head           string   `json:"head,omitempty"`
	Importance     *float64 `json:"importance,omitempty"`
	SelectAccuracy *float64 `json:"select_accuracy,omitempty"`
	Accuracy       float64  `json:"accuracy"`
}

// OrderCurve is one order's pruning curve.
type OrderCurve struct {
	Order string      `json:"order"`
	Steps []PruneStep `json:"steps"`
	// Removable is the largest number of heads whose removal (the first
	// Removable of the order) costs at most CostTolerance of held-out
	// accuracy; RemovableFraction is it over the number of heads.
	Removable         int     `json:"removable"`
	RemovableFraction float64 `json:"removable_fraction"`
}

// PruneReport is the whole pruning experiment.
type PruneReport struct {
	Heads    int     `json:"heads"`
	Intact   float64 `json:"intact_accuracy"`
	Examples int     `json:"examples"`
	// Ablation is how heads are switched off where accuracy is measured.
	Ablation Ablation `json:"ablation"`
	// Importance is the one-shot importance, least important first.
	Importance   []HeadImportance `json:"importance"`
	Orders       []OrderCurve     `json:"orders"`
	RandomOrders int              `json:"random_orders"`
	// Best names the orders that remove the most heads within 1 point.
	Best []string `json:"best_orders"`
	// Why says why the one-shot order does worse than random at half the
	// heads, when it does.
	Why string `json:"why,omitempty"`
}

// Curve returns the named order's curve, or nil.
func (r *PruneReport) Curve(order string) *OrderCurve {
	for i := range r.Orders {
		if r.Orders[i].Order == order {
			return &r.Orders[i]
		}
	}
	return nil
}

// importanceNet measures gate gradients of one model one example at a time.
type importanceNet struct {
	block *graph.Block
	net   *graph.Net
	held  *tasks.Batch
	shape graph.Config
}

func newImportanceNet(m *train.Model, dev kernels.Device, examples int) (*importanceNet, error) {
	b, err := graph.BlockOf(dev, m.Shape, []*graph.Weights{m.Weights})
	if err != nil {
		return nil, err
	}
	net, err := graph.Build(b, 1, true)
	if err != nil {
		b.Free()
		return nil, err
	}
	return &importanceNet{block: b, net: net, held: firstExamples(train.HeldOut(m), examples), shape: m.Shape}, nil
}

func (n *importanceNet) close() {
	n.net.Close()
	n.block.Free()
}

// importance is every head's importance with the heads in off switched
// off (the expectation is of the absolute gradient, so examples are not
// averaged first).
func (n *importanceNet) importance(off [][]bool) ([]HeadImportance, error) {
	T := n.held.T
	sum := make([][]float64, n.shape.Layers)
	for l := range sum {
		sum[l] = make([]float64, n.shape.Heads)
	}
	n.net.SetAblation(0, off)
	defer n.net.SetAblation(0, nil)
	for e := 0; e < n.held.N; e++ {
		if err := n.net.SetInputs(0, n.held.Tokens[e*T:(e+1)*T], n.held.Targets[e*T:(e+1)*T]); err != nil {
			return nil, err
		}
		if err := n.net.Run(); err != nil {
			return nil, err
		}
		all, err := n.net.GateGrads()
		if err != nil {
			return nil, err
		}
		for l, row := range all[0] {
			for h, v := range row {
				sum[l][h] += math.Abs(v)
			}
		}
	}
	var out []HeadImportance
	for l := range sum {
		for h := range sum[l] {
			out = append(out, HeadImportance{Name: analysis.HeadName(l, h), Layer: l, Head: h,
				Importance: sum[l][h] / float64(n.held.N)})
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

// Prune removes m's heads one at a time in each of the orders asked for
// and measures held-out accuracy after each removal, heads switched off
// by zero ablation. Every order chooses on the first `examples` held-out
// examples (importance gradients, or greedy's accuracies) and is measured
// on all of them; the random curve is the mean over randomOrders random
// orders seeded from the model's seed.
func Prune(m *train.Model, dev kernels.Device, examples, randomOrders int, orders []string) (*PruneReport, error) {
	return PruneBy(m, dev, AblateZero, examples, randomOrders, orders)
}

// PruneBy is Prune with heads switched off by method wherever accuracy is
// measured (every curve, and greedy's choices, whose mean and resampled
// outputs come from the examples they are measured on). Importance is
// always the gate gradient of Michel et al. (2019), which is defined for
// zero ablation: iterative importance is measured with the heads removed
// so far zeroed.
func PruneBy(m *train.Model, dev kernels.Device, method Ablation, examples, randomOrders int, orders []string) (*PruneReport, error) {
	in, err := newImportanceNet(m, dev, examples)
	if err != nil {
		return nil, err
	}
	defer in.close()
	imp, err := in.importance(nil)
	if err != nil {
		return nil, err
	}
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	held := train.HeldOut(m)
	pr := &pruner{m: m, in: in, held: held, sel: firstExamples(held, examples), ablators: map[*tasks.Batch]*Ablator{}, seen: map[string]float64{}}
	for _, b := range []*tasks.Batch{pr.held, pr.sel} {
		if pr.ablators[b], err = NewAblator(e, []*tasks.Batch{b}, method); err != nil {
			return nil, err
		}
	}
	r := &PruneReport{Heads: len(imp), Examples: pr.sel.N, Ablation: method, Importance: PruneOrder(imp), RandomOrders: randomOrders}
	if r.Intact, err = pr.accuracy(held, nil); err != nil {
		return nil, err
	}
	for _, o := range orders {
		steps, err := pr.steps(o, r.Importance, imp, randomOrders)
		if err != nil {
			return nil, err
		}
		c := OrderCurve{Order: o, Steps: steps}
		for k := range c.Steps {
			c.Steps[k].Fraction = float64(k) / float64(r.Heads)
			if c.Steps[k].Accuracy >= r.Intact-CostTolerance-1e-12 {
				c.Removable = k
			}
		}
		c.RemovableFraction = float64(c.Removable) / float64(r.Heads)
		r.Orders = append(r.Orders, c)
	}
	most := 0
	for _, c := range r.Orders {
		most = max(most, c.Removable)
	}
	for _, c := range r.Orders {
		if c.Removable == most {
			r.Best = append(r.Best, c.Order)
		}
	}
	r.Why = r.whyOneShot(func(l, h int) (float64, error) {
		return pr.accuracy(held, analysis.NewMask(m.Shape.Layers, m.Shape.Heads, nil).With(l, h))
	})
	return r, nil
}

// pruner is what PruneBy's orders share: the model, its held-out batch
// and the selection importance is measured on, an ablator of each, and
// the accuracy of every set of heads already switched off.
type pruner struct {
	m         *train.Model
	in        *importanceNet
	held, sel *tasks.Batch
	ablators  map[*tasks.Batch]*Ablator
	// Orders revisit the same sets of heads: evaluate each set once.
	seen map[string]float64
}

// accuracy is b's accuracy with the heads of off switched off.
func (pr *pruner) accuracy(b *tasks.Batch, off [][]bool) (float64, error) {
	key := fmt.Sprint(b.N, analysis.HeadNames(off))
	if acc, ok := pr.seen[key]; ok {
		return acc, nil
	}
	sn, err := pr.ablators[b].Snapshot([]*tasks.Batch{b}, train.SnapshotOptions{Off: [][][]bool{off}})
	if err != nil {
		return 0, err
	}
	pr.seen[key] = sn[0].Accuracy
	return sn[0].Accuracy, nil
}

// curve measures the prefixes of a fixed order.
func (pr *pruner) curve(order []HeadImportance) ([]PruneStep, error) {
	var off analysis.Mask
	var steps []PruneStep
	for k := 0; k <= len(order); k++ {
		s := PruneStep{Removed: k}
		if k > 0 {
			h := order[k-1]
			off = analysis.NewMask(pr.m.Shape.Layers, pr.m.Shape.Heads, off).With(h.Layer, h.Head)
			s.Head = h.Name
		}
		acc, err := pr.accuracy(pr.held, off)
		if err != nil {
			return nil, err
		}
		s.Accuracy = acc
		steps = append(steps, s)
	}
	return steps, nil
}

// steps is order o's curve: one-shot by importance (ranked, the heads'
// importance imp ranked), iterative, greedy, or the mean of
// randomOrders shuffles of imp.
func (pr *pruner) steps(o string, ranked, imp []HeadImportance, randomOrders int) ([]PruneStep, error) {
	switch o {
	case OrderOneShot:
		steps, err := pr.curve(ranked)
		if err != nil {
			return nil, err
		}
		for k := 1; k < len(steps); k++ {
			steps[k].Importance = &ranked[k-1].Importance
		}
		return steps, nil
	case OrderIterative, OrderGreedy:
		return adaptive(o, pr.in, pr.m, pr.held, pr.sel, pr.accuracy)
	case OrderRandom:
		return pr.randomCurve(imp, randomOrders)
	default:
		return nil, fmt.Errorf("prune: unknown order %q", o)
	}
}

// randomCurve is the mean curve of n random orders of imp, drawn from
// the model's seed.
func (pr *pruner) randomCurve(imp []HeadImportance, n int) ([]PruneStep, error) {
	var steps []PruneStep
	rng := rand.New(rand.NewPCG(pr.m.Train.Seed, 0x9121e))
	for range n {
		shuffled := append([]HeadImportance(nil), imp...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		one, err := pr.curve(shuffled)
		if err != nil {
			return nil, err
		}
		if steps == nil {
			steps = make([]PruneStep, len(one))
			for k := range steps {
				steps[k].Removed = k
			}
		}
		for k, s := range one {
			steps[k].Accuracy += s.Accuracy / float64(n)
		}
	}
	return steps, nil
}

// adaptive builds the iterative or the greedy order step by step: each
// step chooses among the heads still on, with those already removed off.
func adaptive(order string, in *importanceNet, m *train.Model, held, sel *tasks.Batch,
	accuracy func(*tasks.Batch, [][]bool) (float64, error)) ([]PruneStep, error) {
	c := m.Shape
	off := analysis.NewMask(c.Layers, c.Heads, nil)
	acc, err := accuracy(held, nil)
	if err != nil {
		return nil, err
	}
	steps := []PruneStep{{Accuracy: acc}}
	for k := 1; k <= c.Layers*c.Heads; k++ {
		bestL, bestH, best := -1, -1, 0.0
		var imp []HeadImportance
		if order == OrderIterative {
			if imp, err = in.importance(off); err != nil {
				return nil, err
			}
		}
		for l := 0; l < c.Layers; l++ {
			for h := 0; h < c.Heads; h++ {
				if off[l][h] {
					continue
				}
				// Iterative keeps the least important; greedy the highest
				// accuracy without the head. Ties go to head order.
				var v float64
				if order == OrderIterative {
					v = -imp[l*c.Heads+h].Importance
				} else if v, err = accuracy(sel, off.With(l, h)); err != nil {
					return nil, err
				}
				if bestL < 0 || v > best {
					bestL, bestH, best = l, h, v
				}
			}
		}
		off = off.With(bestL, bestH)
		s := PruneStep{Removed: k, Head: analysis.HeadName(bestL, bestH)}
		if order == OrderIterative {
			v := -best
			s.Importance = &v
		} else {
			v := best
			s.SelectAccuracy = &v
		}
		if s.Accuracy, err = accuracy(held, off); err != nil {
			return nil, err
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// whyOneShot explains, when the one-shot order is below the random order
// at half the heads, where it lost: the removal that cost most in the first
// half, beside what that head costs alone. One-shot importance is the
// gate gradient of the intact model. A head that costs little alone but
// much after others went had a duplicate still running; a head that is
// load-bearing alone (analysis.DropsEnough) had a small gradient because
// the converged model's loss is nearly flat to first order.
func (r *PruneReport) whyOneShot(alone func(l, h int) (float64, error)) string {
	one, rnd := r.Curve(OrderOneShot), r.Curve(OrderRandom)
	half := r.Heads / 2
	if one == nil || rnd == nil || half == 0 || one.Steps[half].Accuracy >= rnd.Steps[half].Accuracy {
		return ""
	}
	worst, drop := 1, -1.0
	for k := 1; k <= half; k++ {
		if d := one.Steps[k-1].Accuracy - one.Steps[k].Accuracy; d > drop {
			worst, drop = k, d
		}
	}
	h := r.Importance[worst-1]
	acc, err := alone(h.Layer, h.Head)
	if err != nil {
		return ""
	}
	before := "first"
	if worst > 1 {
		var names []string
		for _, p := range r.Importance[:worst-1] {
			names = append(names, p.Name)
		}
		before = "after " + strings.Join(names, ", ")
	}
	reason := "One-shot importance is the gate gradient of the intact model, where a head " +
		"whose duplicate is still running is nearly free to lose, so duplicates all rank least important and go together; " +
		"iterative importance and greedy ablation measure again after each removal and keep the last copy."
	if analysis.DropsEnough(r.Intact - acc) {
		reason = fmt.Sprintf("%s is load-bearing alone, yet one-shot importance, the gate gradient of the intact model, ranked it low: "+
			"where the model is confident its loss is nearly flat to first order, so the gradient does not see what removing the head costs; "+
			"greedy ablation measures the accuracy itself after each removal.", h.Name)
	}
	return fmt.Sprintf("at half the heads one-shot leaves %.1f%% against random's %.1f%%: it removed %s (importance %.4f) %s, "+
		"which cost %.1f points, while %s alone costs %.1f. %s",
		100*one.Steps[half].Accuracy, 100*rnd.Steps[half].Accuracy, h.Name, h.Importance, before,
		100*drop, h.Name, 100*(r.Intact-acc), reason)
}

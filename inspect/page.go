package inspect

import (
	"headlab/kernels"
	"headlab/train"
	"headlab/viz/htmlview"
)

// PageCausal is the HTML page's patching (the task's default corruption)
// and attribution of each of the first n held-out examples, the examples
// the page shows, on m's intact model on dev (an evaluator of its own, as
// Analyze).
func PageCausal(m *train.Model, dev kernels.Device, n int) (*htmlview.Causal, error) {
	ev, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer ev.Close()
	runs := max(n, 2) // patching's "other" corruption needs a second example
	pr, err := Patch(ev, PatchOptions{Examples: runs, PerExample: n})
	if err != nil {
		return nil, err
	}
	ar, err := Attribute(ev, runs, n)
	if err != nil {
		return nil, err
	}
	p, a := pr[0], ar[0]
	c := &htmlview.Causal{Corruption: p.Corruption, Positions: p.Positions}
	for _, x := range append(append([]Patched(nil), p.Heads...), p.Resid...) {
		c.Rows = append(c.Rows, x.Name)
	}
	for _, x := range a.Parts {
		c.Parts = append(c.Parts, x.Name)
	}
	for k := range n {
		heads, resid := p.PerExample(k)
		logit, parts := a.PerExample(k)
		c.Patch = append(c.Patch, append(heads, resid...))
		c.Attribution, c.Logit = append(c.Attribution, parts), append(c.Logit, logit)
	}
	return c, nil
}

package window

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"

	"headlab/circuit"
)

// circuitExamples is how many held-out examples the viewer's circuit is
// measured on: headlab circuit's default, so the two agree.
const circuitExamples = 250

// circuitPanel is the side panel's circuit: what the UI asked for, the
// worker's progress, and the last circuit it found, of the model at step.
type circuitPanel struct {
	asked, running bool
	done, total    int // edge sets measured while running
	found          bool
	step           int
	corruption     string
	threshold      float64
	faithfulness   float64
	edges          int           // edges in the model
	in             []circuitLine // the circuit's edges, largest effect first
	err            error
}

// circuitLine is one edge of the circuit with its path-patching effect.
type circuitLine struct {
	name   string
	effect float64
}

// askCircuit asks the worker for the model's circuit, unless it is
// finding one or has no model evaluated to find it in.
func (st *state) askCircuit() {
	if st.circ.running || st.snap == nil || st.err != nil {
		return
	}
	st.circ.asked, st.circ.running, st.circ.done, st.circ.total, st.circ.err = true, true, 0, 0, nil
	st.changed()
}

// circuitProgress records done of total edge sets measured.
func (st *state) circuitProgress(done, total int) {
	st.circ.done, st.circ.total = done, total
	st.dirty = true
}

// circuitFound shows rep, the circuit of the model at step, or err.
func (st *state) circuitFound(step int, rep *circuit.Report, err error) {
	st.circ.running, st.circ.err = false, err
	st.dirty = true
	if err != nil {
		return
	}
	c := &st.circ
	c.found, c.step, c.corruption, c.threshold, c.faithfulness, c.edges = true, step, rep.Corruption, rep.Threshold, rep.Faithfulness, len(rep.Edges)
	c.in = c.in[:0]
	for _, e := range rep.Edges {
		if e.InCircuit {
			c.in = append(c.in, circuitLine{e.Edge, e.Effect})
		}
	}
	slices.SortStableFunc(c.in, func(a, b circuitLine) int { return cmp.Compare(b.effect, a.effect) })
}

// findCircuit finds the model's circuit as headlab circuit does by
// default, on the worker: the trained weights synced from the device,
// progress and the result published to the side panel. Training waits
// meanwhile (the runner shares the device); a failure is the panel's,
// not training's.
func (w *worker) findCircuit() {
	v := w.v
	step := w.step()
	rep, err := func() (*circuit.Report, error) {
		if w.tr != nil {
			if err := w.tr.Sync(); err != nil {
				return nil, err
			}
		}
		return circuit.FindIn(w.model, v.opts.Kernels, circuit.Options{Examples: circuitExamples}, circuit.DefaultThreshold, false, func(done, total int) {
			v.mu.Lock()
			defer v.mu.Unlock()
			v.st.circuitProgress(done, total)
		})
	}()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.st.circuitFound(step, rep, err)
}

// panelLine is one line of the side panel: text on the left, value
// right-aligned.
type panelLine struct {
	text, value string
	col         color.RGBA
}

// circuitLines is the side panel's circuit in at most n lines: how to ask
// for it, the progress, or the circuit found with its step, its
// faithfulness and as many of its edges as fit.
func circuitLines(c *circuitPanel, n int) []panelLine {
	var out []panelLine
	add := func(s string, col color.RGBA) {
		for _, w := range wrap(s, sbW/glyphW) {
			out = append(out, panelLine{text: w, col: col})
		}
	}
	switch {
	case c.running:
		add(fmt.Sprintf("finding the circuit... %d/%d", c.done, c.total), colMuted)
	case c.err != nil:
		add("circuit: "+c.err.Error(), colError)
	case !c.found:
		add("c: find the model's circuit", colMuted)
	}
	if c.found && !c.running {
		out = append(out, panelLine{text: fmt.Sprintf("circuit at step %d", c.step), col: colText},
			panelLine{text: fmt.Sprintf("%d/%d edges keep %.1f%% (>= %.0f%%)", len(c.in), c.edges, 100*c.faithfulness, 100*c.threshold), col: colMuted})
		for k, e := range c.in {
			if len(out) == n-1 && k < len(c.in)-1 {
				out = append(out, panelLine{text: fmt.Sprintf("+ %d more edges", len(c.in)-k), col: colFaint})
				break
			}
			out = append(out, panelLine{text: fit(e.name, sbW-7*glyphW), value: fmt.Sprintf("%.2f", e.effect), col: colText})
		}
	}
	return out[:min(len(out), max(n, 0))]
}

// drawCircuit draws circuitLines from y down to bottom.
func drawCircuit(b *batch, c *circuitPanel, y, bottom int) {
	for _, l := range circuitLines(c, (bottom-y)/circuitPitch) {
		b.text(sbX, y, fit(l.text, sbW), l.col)
		if l.value != "" {
			b.textRight(sbX+sbW, y, l.value, colMuted)
		}
		y += circuitPitch
	}
}

// circuitPitch is the side panel's circuit's line pitch.
const circuitPitch = 15

package window

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/backend/cpu"
	"headlab/circuit"
	"headlab/train"
)

// panelText is the side panel's circuit as text, a line each, the value
// after a tab.
func panelText(c *circuitPanel, n int) string {
	var out []string
	for _, l := range circuitLines(c, n) {
		out = append(out, strings.TrimSuffix(l.text+"\t"+l.value, "\t"))
	}
	return strings.Join(out, "\n")
}

// TestStateCircuit: c asks the worker for the circuit once, only when
// there is an evaluated model and no search under way; the panel shows
// the progress, then the circuit's step, faithfulness and edges (as many
// as fit), an error as an error, and a new model clears it.
func TestStateCircuit(t *testing.T) {
	st := newState(t, 100)
	st.key(keyCircuit, false)
	if j := st.take(); j.circuit || st.circ.running {
		t.Fatal("c before the first evaluation asked for the circuit")
	}
	if got := panelText(&st.circ, 5); got != "c: find the model's circuit" {
		t.Errorf("before: %q", got)
	}
	st.published(&snapshot{step: 100, l: 2, h: 2, t: 16, n: 1}, 0)
	st.key(keyCircuit, false)
	st.key(keyCircuit, false) // a second press while it runs asks nothing more
	if j := st.take(); !j.circuit || !st.circ.running {
		t.Fatal("c did not ask for the circuit")
	}
	if j := st.take(); j.circuit {
		t.Fatal("the circuit was asked for twice")
	}
	st.circuitProgress(7, 40)
	if got := panelText(&st.circ, 5); got != "finding the circuit... 7/40" {
		t.Errorf("while running: %q", got)
	}
	rep := &circuit.Report{Corruption: "first-half", Threshold: 0.9, Faithfulness: 0.9312, Edges: []circuit.EdgeResult{
		{Edge: "L0H1->L1H1.k", Effect: 0.41, InCircuit: true}, {Edge: "embed->L0H0.q", Effect: 0.6},
		{Edge: "L1H1->logits", Effect: 0.87, InCircuit: true}, {Edge: "pos_embed->L0H1.q", Effect: 0.2, InCircuit: true}}}
	st.circuitFound(100, rep, nil)
	want := "circuit at step 100\n3/4 edges keep 93.1% (>= 90%)\nL1H1->logits\t0.87\nL0H1->L1H1.k\t0.41\npos_embed->L0H1.q\t0.20"
	if got := panelText(&st.circ, 10); got != want {
		t.Errorf("found:\n%s\nwant\n%s", got, want)
	}
	if got := panelText(&st.circ, 4); got != "circuit at step 100\n3/4 edges keep 93.1% (>= 90%)\nL1H1->logits\t0.87\n+ 2 more edges" {
		t.Errorf("in 4 lines:\n%s", got)
	}
	st.askCircuit()
	st.take()
	st.circuitFound(120, nil, errors.New("no luck"))
	if got := panelText(&st.circ, 10); !strings.HasPrefix(got, "circuit: no luck\ncircuit at step 100") {
		t.Errorf("after a failure:\n%s", got)
	}
	if st.err != nil || st.running != true {
		t.Error("a failed circuit stopped training")
	}
	st.rebuilt(&train.Model{Train: st.cfg, Shape: st.shape}, true, time.Now())
	if st.circ.found || panelText(&st.circ, 5) != "c: find the model's circuit" {
		t.Error("a new model keeps the old one's circuit")
	}
}

// TestViewerCircuit: c finds the circuit of the model as trained, on the
// worker, and the side panel shows it with the step it was found at.
func TestViewerCircuit(t *testing.T) {
	c := tiny(30)
	c.Heads = 1
	v := open(t, Options{Config: c, Steps: 30, Kernels: cpu.New()})
	v.mu.Lock()
	v.keyLocked(glfw.KeyC, 0, false)
	v.mu.Unlock()
	if err := v.WaitIdle(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	circ := v.st.circ
	v.mu.Unlock()
	if circ.err != nil || !circ.found || circ.running || circ.step != 30 || len(circ.in) == 0 || circ.edges <= len(circ.in) {
		t.Fatalf("after c: found %v at step %d, %d of %d edges, err %v", circ.found, circ.step, len(circ.in), circ.edges, circ.err)
	}
	if !strings.HasPrefix(panelText(&circ, 20), "circuit at step 30\n") {
		t.Errorf("the panel reads %q", panelText(&circ, 20))
	}
	if _, err := v.Frame(); err != nil {
		t.Fatal(err)
	}
}

// TestStateCircuitAtPause: with Options.Circuit, a worker about to idle
// with training paused asks for the circuit of the step it paused at,
// once; trained on and paused again, for the new step; a failure is not
// retried in a loop. Without it, it idles.
func TestStateCircuitAtPause(t *testing.T) {
	st := newState(t, 100)
	st.published(&snapshot{step: 100, l: 2, h: 2, t: 16, n: 1}, 0)
	st.step = 100
	if !st.settle(st.changes) || st.circ.asked {
		t.Fatal("without Options.Circuit the worker did not idle at the stop")
	}
	st.circuitAtPause, st.idle = true, false
	if st.settle(st.changes) || !st.take().circuit {
		t.Fatal("paused at the stop: no circuit asked for")
	}
	st.circuitFound(100, &circuit.Report{Threshold: 0.9}, nil)
	if !st.settle(st.changes) {
		t.Fatal("the circuit of step 100 found: still not idle")
	}
	st.step = 150 // trained on, paused again
	if st.settle(st.changes) || !st.take().circuit {
		t.Fatal("paused at step 150: no circuit asked for")
	}
	st.circuitFound(150, nil, errors.New("no luck"))
	if !st.settle(st.changes) {
		t.Fatal("a failed circuit is asked for again")
	}
	st.running = true
	st.stop = -1
	st.circ.err = nil
	if !st.settle(st.changes) || st.circ.asked {
		t.Fatal("asked for a circuit while training runs")
	}
}

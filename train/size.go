package train

import (
	"fmt"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/internal/memlimit"
	"headlab/kernels"
)

// MaxGroup is the documented cap on the models of one Group: about where
// a large GPU is busy (docs/performance.md), and a bound on what one
// group's failure can cost.
const MaxGroup = 1024

// counting is a device that records what is allocated on it. It embeds
// the interface, not the CPU device, so that it is no kernels.Host: a
// group's handle of the CPU device would allocate past the count.
type counting struct {
	kernels.Device
	largest, total int
}

func (c *counting) Alloc(n int) (kernels.Buffer, error) {
	c.largest, c.total = max(c.largest, n), c.total+n
	return c.Device.Alloc(n)
}

// Footprint measures, in floats, one model of c trained and evaluated as
// a sweep does: its largest tensor and all its tensors together. With
// probed, the evaluation's probed graph too (SnapshotOptions.Probe: what
// mean and resample ablation and direct logit attribution run on).
func Footprint(c Config, probed bool) (largest, total int, err error) {
	return footprint(cpu.New(), c, probed)
}

// footprint is Footprint counted on dev, the device the group will run
// on: the sizes are the model's, the same on every device.
func footprint(dev kernels.Device, c Config, probed bool) (largest, total int, err error) {
	d := &counting{Device: dev}
	g, err := NewGroup([]Config{c}, d)
	if err != nil {
		return 0, 0, err
	}
	defer g.Close()
	e, err := g.Evaluator()
	if err != nil {
		return 0, 0, err
	}
	defer e.Close()
	if probed {
		if _, err := e.probedNet(); err != nil {
			return 0, 0, err
		}
	}
	return d.largest, d.total, nil
}

// GroupLimit is the most models of configuration c that fit one Group on
// dev: MaxGroup, or fewer where the device's buffers or memory say so, or
// on such a device the host's memory (why names the bound, "" for
// MaxGroup). With probed, each model also has the probed evaluation graph
// (Footprint) and what its users keep on the host (EstimateHostBytes).
func GroupLimit(dev kernels.Device, c Config, probed bool) (n int, why string, err error) {
	largest, total, err := footprint(dev, c, probed)
	if err != nil {
		return 0, "", err
	}
	n = MaxGroup
	cp, ok := dev.(kernels.Capacity)
	if !ok {
		return n, "", nil
	}
	if b := cp.MaxBufferFloats() / largest; b < n {
		n, why = b, fmt.Sprintf("the device's largest buffer holds %d models' %.1f MiB tensors", b, float64(4*largest)/(1<<20))
	}
	if mem, ok := cp.MemoryBytes(); ok {
		// Leave a fifth for the driver and the viewer.
		if m := int(mem * 4 / 5 / int64(4*total)); m < n {
			n, why = m, fmt.Sprintf("%.1f GiB of device memory holds %d models of %.1f MiB", float64(mem)/(1<<30), m, float64(4*total)/(1<<20))
		}
	}
	if lim, per := memlimit.Read(), EstimateHostBytes(c, probed); lim.Known() {
		// A fifth for the rest of the process.
		if m := int(lim.Bytes * 4 / 5 / per); m < n {
			n, why = m, fmt.Sprintf("%s of host memory (%s) holds %d models' host copies and analysis of %.1f MiB", memlimit.GiB(lim.Bytes), lim.What, m, float64(per)/(1<<20))
		}
	}
	if n < 1 {
		return 0, "", fmt.Errorf("one model of this shape needs %.1f MiB buffers, more than the device allows", float64(4*largest)/(1<<20))
	}
	return n, why, nil
}

// EstimateBytes bounds from above, without allocating anything, the
// memory one model of c takes where Footprint measures it (weights,
// gradients, Adam's two moments, the training graph's activations at
// c.Batch and the evaluation graph's at EvalChunk, and with probed the
// probed evaluation graph's: its activations, every block's kept
// activations, gates and replacements with their host copies, the
// logit lens, and on the host every held-out example's head outputs,
// which resample ablation keeps), plus the host's copy of the weights. Footprint itself
// builds the model, which is what a shape too large for the machine
// cannot afford; TestEstimateBounds checks the bound against it (within
// 1x to 3.5x).
func EstimateBytes(c Config, probed bool) int64 {
	m, params, ok := shapeOf(c)
	if !ok {
		return 0
	}
	L, D, F, H, T, V := int64(m.Layers), int64(m.DModel), int64(m.DFF), int64(m.Heads), int64(m.SeqLen), int64(m.Vocab)
	// A block's activations of width D (and their gradients): its
	// LayerNorms, projections, residual adds; an attention-only block
	// has no second LayerNorm, MLP or second add (F is 0).
	blockD, sites := 12*D, int64(4)
	if m.NoMLP {
		blockD, sites = 8*D, 3
	}
	perPosition := L*(blockD+3*F+2*H*T) + 4*D + 2*V
	floats := 5*params + (int64(c.Batch)+EvalChunk)*T*perPosition
	if probed {
		// Four sites kept (three without an MLP), two gated with their
		// replacements, on the device and on the host, and the lens
		// logits, per block; the head outputs resample ablation keeps.
		floats += EvalChunk*T*(perPosition+L*(sites*D+8*D+V)) + HeldOutExamples*T*L*D
	}
	return 4 * floats
}

// EstimateHostBytes bounds from above what the host holds for each model
// of a group evaluated on a device with memory of its own (GL): the
// host's copy of its weights and, with probed, the probed graph's
// interventions staged on the host (a gate and a replacement at two
// sites of every block), the head outputs of every held-out example that
// resample ablation keeps, and a pass's activations and lens logits that
// direct logit attribution reads back.
func EstimateHostBytes(c Config, probed bool) int64 {
	m, params, ok := shapeOf(c)
	if !ok {
		return 0
	}
	L, D, T, V := int64(m.Layers), int64(m.DModel), int64(m.SeqLen), int64(m.Vocab)
	floats := params
	if probed {
		floats += EvalChunk*T*L*4*D + HeldOutExamples*T*L*D + EvalChunk*T*(2*L*D+(L+1)*V)
	}
	return 4 * floats
}

// shapeOf is c's model shape and parameter count; ok is false for an
// unknown task.
func shapeOf(c Config) (m graph.Config, params int64, ok bool) {
	t, err := c.NewTask()
	if err != nil {
		return m, 0, false
	}
	m = c.Model(t)
	for _, p := range graph.ParamShapes(m) {
		n := int64(1)
		for _, d := range p.Shape {
			n *= int64(d)
		}
		params += n
	}
	return m, params, true
}

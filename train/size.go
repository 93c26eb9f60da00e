package train

import (
	"fmt"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
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
// a sweep does: its largest tensor and all its tensors together.
func Footprint(c Config) (largest, total int, err error) {
	d := &counting{Device: cpu.New()}
	g, err := NewGroup([]Config{c}, d)
	if err != nil {
		return 0, 0, err
	}
	defer g.Close()
	e, err := g.Evaluator()
	if err != nil {
		return 0, 0, err
	}
	e.Close()
	return d.largest, d.total, nil
}

// GroupLimit is the most models of configuration c that fit one Group on
// dev: MaxGroup, or fewer where the device's buffers or memory say so
// (why names the bound, "" for MaxGroup).
func GroupLimit(dev kernels.Device, c Config) (n int, why string, err error) {
	largest, total, err := Footprint(c)
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
	if n < 1 {
		return 0, "", fmt.Errorf("one model of this shape needs %.1f MiB buffers, more than the device allows", float64(4*largest)/(1<<20))
	}
	return n, why, nil
}

// EstimateBytes bounds from above, without allocating anything, the
// memory one model of c takes where Footprint measures it (weights,
// gradients, Adam's two moments, the training graph's activations at
// c.Batch and the evaluation graph's at EvalChunk), plus the host's
// copy of the weights. Footprint itself builds the model, which is what a
// shape too large for the machine cannot afford; TestEstimateBounds
// checks the bound against it (within 1x to 3.5x).
func EstimateBytes(c Config) int64 {
	t, err := tasks.New(c.Task)
	if err != nil {
		return 0
	}
	m := c.Model(t)
	var params int64
	for _, p := range graph.ParamShapes(m) {
		n := int64(1)
		for _, d := range p.Shape {
			n *= int64(d)
		}
		params += n
	}
	L, D, F, H, T, V := int64(m.Layers), int64(m.DModel), int64(m.DFF), int64(m.Heads), int64(m.SeqLen), int64(m.Vocab)
	perPosition := L*(12*D+3*F+2*H*T) + 4*D + 2*V
	floats := 5*params + (int64(c.Batch)+EvalChunk)*T*perPosition
	return 4 * floats
}

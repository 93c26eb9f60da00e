//go:build cgo

package graph

import (
	"math"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// TestProbedGL: the GL device runs a probed Net, with a head patched and
// a residual row replaced, to the CPU's logits, captures, final scale and
// logit lens within the devices' tolerance (docs/model.md).
func TestProbedGL(t *testing.T) {
	d := glDevice(t)
	c := smallConfig(true, true)
	const batch = 3
	run := func(dev kernels.Device) [][]float32 {
		b, err := BlockOf(dev, c, []*Weights{InitWeights(c, 8), InitWeights(c, 9)})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		net, err := BuildProbed(b, batch)
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		for s := range 2 {
			tok, tgt := randomBatch(c, batch, uint64(s))
			if err := net.SetInputs(s, tok, tgt); err != nil {
				t.Fatal(err)
			}
		}
		g, r, _ := net.Intervention(1, HeadOut, 1)
		for j := range c.DModel / 2 {
			g[4*c.DModel+j], r[4*c.DModel+j] = 0, 0.25
		}
		g, r, _ = net.Intervention(0, ResidPre, 1)
		for j := range c.DModel {
			g[7*c.DModel+j], r[7*c.DModel+j] = 0.5, -0.5
		}
		out := outputs(t, net)
		for l := range c.Layers {
			for site := range sites {
				out = append(out, read(t, func() ([]float32, error) { return net.Capture(site, l) }))
			}
			out = append(out, read(t, func() ([]float32, error) { return net.LensLogits(l) }))
		}
		return append(out, read(t, net.FinalScale))
	}
	want, got := run(cpu.New()), run(d)
	for k := range want {
		for i, v := range want[k] {
			if diff := math.Abs(float64(got[k][i] - v)); diff > 1e-5 && diff > 1e-4*math.Abs(float64(v)) {
				t.Fatalf("output %d element %d: GL %v, CPU %v", k, i, got[k][i], v)
			}
		}
	}
}

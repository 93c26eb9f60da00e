package cpu_test

import (
	"math"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/train"
)

// eager hides *cpu.Device's type from train.NewGroup, so that a group on
// it runs each kernel at once over all its seeds, op by op.
type eager struct{ *cpu.Device }

// TestGroupDeviceKeepsBits: a group trained on the CPU device, whose
// kernels then run seed by seed (group.go), ends every step with the
// losses and weights of the same group run op by op, bit for bit, and
// they are not all the same (the seeds differ).
func TestGroupDeviceKeepsBits(t *testing.T) {
	var cs []train.Config
	for _, seed := range []uint64{3, 4, 5} {
		c := train.Defaults("induction")
		c.Seed, c.Batch, c.Steps = seed, 8, 6
		cs = append(cs, c)
	}
	run := func(dev kernels.Device) (losses [][]float64, weights [][]float32) {
		g, err := train.NewGroup(cs, dev)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		for range cs[0].Steps {
			if err := g.TrainStep(); err != nil {
				t.Fatal(err)
			}
			l, err := g.Losses()
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, l)
		}
		if err := g.Sync(); err != nil {
			t.Fatal(err)
		}
		for _, m := range g.Models {
			var w []float32
			for _, p := range m.Weights.Params {
				w = append(w, p.Data...)
			}
			weights = append(weights, w)
		}
		return losses, weights
	}
	ls, ws := run(cpu.New())
	le, we := run(eager{cpu.New()})
	for step := range ls {
		for s := range ls[step] {
			if math.Float64bits(ls[step][s]) != math.Float64bits(le[step][s]) {
				t.Fatalf("step %d, seed %d: loss %v seed by seed, %v op by op", step+1, s, ls[step][s], le[step][s])
			}
		}
	}
	for s := range ws {
		for i := range ws[s] {
			if math.Float32bits(ws[s][i]) != math.Float32bits(we[s][i]) {
				t.Fatalf("seed %d: weight %d is %v seed by seed, %v op by op", s, i, ws[s][i], we[s][i])
			}
		}
	}
	if ls[0][0] == ls[0][1] {
		t.Fatal("two seeds gave the same loss")
	}
}

// TestGroupDeviceQueues: a group's device holds kernels of several seeds
// until the host touches a tensor, runs them in order then, and returns
// a failing kernel's error from the next Sync; kernels of one seed run at
// once.
func TestGroupDeviceQueues(t *testing.T) {
	parent := cpu.New()
	d := parent.Group()
	const S, n = 3, 8
	alloc := func() kernels.Tensor {
		b, err := d.Alloc(S * n)
		if err != nil {
			t.Fatal(err)
		}
		return kernels.Dense(b, n)
	}
	a, b, out := alloc(), alloc(), alloc()
	src := make([]float32, S*n)
	for i := range src {
		src[i] = float32(i)
	}
	if err := d.Upload(a, S, src); err != nil {
		t.Fatal(err)
	}
	if err := d.Upload(b, S, src); err != nil {
		t.Fatal(err)
	}
	// out = a + b, then out = out * a: queued, so out is still zero.
	if err := d.Add(S, n, a, b, out); err != nil {
		t.Fatal(err)
	}
	if err := d.Mul(S, n, out, a, out); err != nil {
		t.Fatal(err)
	}
	raw := out.Buf.(*cpu.Buffer)
	if got := parent.Stats().Dispatches; got != 2 {
		t.Errorf("the parent counted %d dispatches, want 2", got)
	}
	got := make([]float32, S*n)
	if err := d.Download(got, out, S); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := 2 * src[i] * src[i]; v != want {
			t.Fatalf("out[%d] = %v, want %v", i, v, want)
		}
	}
	// A buffer's Data runs the queue too.
	if err := d.Add(S, n, a, a, out); err != nil {
		t.Fatal(err)
	}
	if v := raw.Data()[S*n-1]; v != 2*src[S*n-1] {
		t.Errorf("Data after a queued Add: %v, want %v", v, 2*src[S*n-1])
	}
	// One seed's kernel runs at once.
	if err := d.Add(1, n, b, b, out); err != nil {
		t.Fatal(err)
	}
	if v := raw.Data()[1]; v != 2*src[1] {
		t.Errorf("after a one-seed Add: %v, want %v", v, 2*src[1])
	}
	// An id out of range: the Embed is queued, its error comes from Sync.
	table := alloc()
	if err := d.Embed(S, 1, n, a, table, out); err != nil {
		t.Fatalf("queued Embed: %v", err)
	}
	if err := d.Sync(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("Sync after a bad Embed: %v, want the index error", err)
	}
	if err := d.Sync(); err != nil {
		t.Errorf("a second Sync: %v", err)
	}
}

// TestGroupScratchIsSeedSerial: a group's device is SeedSerial, so a
// scratch tensor is one buffer its seeds use in turn, and a step that
// writes one and reads it, through to Adam, gives each seed its own
// result, as dense tensors on a plain device do. Run op by op over all
// seeds, a shared buffer would hold the last seed's sum when the first
// seed reads it. Once Adam returns, the step has run: the parent device,
// which does not run the group's queue, reads its results.
func TestGroupScratchIsSeedSerial(t *testing.T) {
	const S, n = 3, 8
	if ss, ok := kernels.Device(cpu.New()).(kernels.SeedSerial); !ok || ss.SeedSerial() {
		t.Fatal("a plain CPU device should say it is not SeedSerial")
	}
	step := func(d, read kernels.Device) (sum, w []float32) {
		mem := kernels.Arena{Dev: d, S: S}
		defer mem.Free()
		dense := func(data []float32) kernels.Tensor {
			x, err := mem.Dense(n)
			if err != nil {
				t.Fatal(err)
			}
			if data != nil {
				if err := d.Upload(x, S, data); err != nil {
					t.Fatal(err)
				}
			}
			return x
		}
		src := make([]float32, S*n)
		for i := range src {
			src[i] = float32(i%5) - 2
		}
		a, out, wt, m, v := dense(src), dense(nil), dense(src), dense(nil), dense(nil)
		one := func(x float32) kernels.Tensor {
			t1, err := mem.Dense(1)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Upload(t1, S, []float32{x, x, x}); err != nil {
				t.Fatal(err)
			}
			return t1
		}
		negLR, decay, failed := one(-0.01), one(1), one(0)
		g, err := mem.Scratch(n)
		if err != nil {
			t.Fatal(err)
		}
		// g = a*a (scratch), out = g + a, then Adam on wt with gradient g.
		for _, err := range []error{
			d.Mul(S, n, a, a, g), d.Add(S, n, g, a, out),
			d.Adam(S, n, wt, g, m, v, negLR, decay, failed, 0.1, 0.001),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		sum, w = make([]float32, S*n), make([]float32, S*n)
		if err := read.Download(sum, out, S); err != nil {
			t.Fatal(err)
		}
		if err := read.Download(w, wt, S); err != nil {
			t.Fatal(err)
		}
		return sum, w
	}
	parent := cpu.New()
	g := parent.Group()
	if ss, ok := g.(kernels.SeedSerial); !ok || !ss.SeedSerial() {
		t.Fatal("a group's device should be SeedSerial")
	}
	mem := kernels.Arena{Dev: g, S: S}
	if x, err := mem.Scratch(n); err != nil || x.Stride != 0 {
		t.Fatalf("a group's scratch tensor: %+v, %v; want stride 0", x, err)
	}
	mem.Free()
	if x, err := (&kernels.Arena{Dev: cpu.New(), S: S}).Scratch(n); err != nil || x.Stride != n {
		t.Fatalf("a plain device's scratch tensor: %+v, %v; want dense", x, err)
	}
	sumG, wG := step(g, parent)
	plain := cpu.New()
	sumE, wE := step(plain, plain)
	for i := range sumE {
		if math.Float32bits(sumG[i]) != math.Float32bits(sumE[i]) || math.Float32bits(wG[i]) != math.Float32bits(wE[i]) {
			t.Fatalf("element %d (seed %d): sum %v and weight %v in a group, %v and %v alone", i, i/n, sumG[i], wG[i], sumE[i], wE[i])
		}
	}
	if wE[0] == wE[n] && sumE[1] == sumE[n+1] {
		t.Fatal("the seeds' results do not differ")
	}
}

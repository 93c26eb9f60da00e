package train

import (
	"math/rand/v2"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/memlimit"
	"headlab/kernels"
)

// TestEstimateBounds checks EstimateBytes against what Footprint measures
// by building the model, over random shapes of every task, with and
// without the probed evaluation graph: never below it, and at most 3.5
// times it; and the probed graph costs something.
func TestEstimateBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	names := []string{"induction", "majority", "reverse", "copy", "induction-unseen"}
	for i := 0; i < 40; i++ {
		c := Defaults(names[r.IntN(len(names))])
		c.Batch = 1 + r.IntN(128)
		c.Layers = 1 + r.IntN(4)
		c.Heads = []int{1, 2, 4}[r.IntN(3)]
		c.DModel = c.Heads * (4 + 4*r.IntN(10))
		c.DFF = 8 + 8*r.IntN(20)
		c.Positions = r.IntN(2) == 0
		if i%4 >= 2 { // attention-only: no MLP, no d-ff
			c.NoMLP, c.DFF = true, 0
		}
		probed := i%2 == 1
		_, total, err := Footprint(c, probed)
		if err != nil {
			t.Fatal(err)
		}
		// Footprint counts device floats; the estimate adds the host's
		// copy of the weights (and of the probed graph's interventions).
		ratio := float64(EstimateBytes(c, probed)) / float64(4*total)
		if ratio < 1 || ratio > 3.5 {
			t.Errorf("%+v, probed %v: estimate %d bytes, measured %d: ratio %.2f, want 1..3.5", c, probed, EstimateBytes(c, probed), 4*total, ratio)
		}
		if probed {
			_, plain, err := Footprint(c, false)
			if err != nil {
				t.Fatal(err)
			}
			if plain >= total || EstimateBytes(c, false) >= EstimateBytes(c, true) {
				t.Errorf("%+v: the probed graph costs nothing (%d against %d floats)", c, total, plain)
			}
		}
	}
}

// TestEstimateOfTheLargestShape is the shape that used to kill the Go
// runtime: its estimate is computed without allocating, and is huge.
func TestEstimateOfTheLargestShape(t *testing.T) {
	c := Defaults("induction")
	c.Layers, c.DModel, c.DFF, c.Heads = 64, 4096, 16384, 64
	if b := EstimateBytes(c, false); b < 12e9*4*5 {
		t.Fatalf("estimate %d bytes for 12.9e9 parameters", b)
	}
}

// bigDevice is a CPU device that says it has room for anything.
type bigDevice struct{ kernels.Device }

func (bigDevice) MaxBufferFloats() int       { return 1 << 40 }
func (bigDevice) MemoryBytes() (int64, bool) { return 1 << 50, true }

// TestGroupLimitCountsTheHost: on a device with room for anything, the
// host's memory bounds a group of models whose analysis keeps the probed
// graph's host copies, and what it holds per model is more with the
// probed graph than the host's copy of the weights alone.
func TestGroupLimitCountsTheHost(t *testing.T) {
	c := Defaults("induction")
	c.DModel, c.DFF = 128, 256
	_, params, _ := shapeOf(c)
	plain, probed := EstimateHostBytes(c, false), EstimateHostBytes(c, true)
	if plain != 4*params || probed <= plain {
		t.Errorf("host bytes %d without the probed graph (weights %d), %d with it", plain, 4*params, probed)
	}
	n, why, err := GroupLimit(bigDevice{cpu.New()}, c, true)
	if err != nil {
		t.Fatal(err)
	}
	want, wantHost := MaxGroup, false
	if lim := memlimit.Read(); lim.Known() && int(lim.Bytes*4/5/probed) < MaxGroup {
		want, wantHost = int(lim.Bytes*4/5/probed), true
	}
	if n != want || wantHost != strings.Contains(why, "of host memory") {
		t.Errorf("%d models (%q), want %d, bounded by the host: %v", n, why, want, wantHost)
	}
}

// TestGroupHandleOnAHostOnly: a group on a kernels.Host (the CPU device)
// runs on a handle of its own, and on a device that is none (Footprint's
// counting wrapper, which embeds the interface so that it is none) on the
// device itself, whose Alloc then sees every tensor.
func TestGroupHandleOnAHostOnly(t *testing.T) {
	c := Defaults("induction")
	dev := cpu.New()
	g, err := NewGroup([]Config{c, c}, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.dev == kernels.Device(dev) {
		t.Error("a group on the CPU device runs on the device, not on a handle of its own")
	}
	d := &counting{Device: cpu.New()}
	g1, err := NewGroup([]Config{c}, d)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	if g1.dev != kernels.Device(d) || d.total == 0 {
		t.Errorf("a group on the counting device runs on %T and allocated %d floats through it", g1.dev, d.total)
	}
}

// allocSeen is a device that notes that it was allocated on.
type allocSeen struct {
	kernels.Device
	floats int
}

func (a *allocSeen) Alloc(n int) (kernels.Buffer, error) {
	a.floats += n
	return a.Device.Alloc(n)
}

// TestFootprintOnTheGivenDevice: GroupLimit counts on the device it is
// given, not on a CPU device of its own, and the count is the model's:
// the same as Footprint's.
func TestFootprintOnTheGivenDevice(t *testing.T) {
	c := Defaults("induction")
	want, wantTotal, err := Footprint(c, true)
	if err != nil {
		t.Fatal(err)
	}
	dev := &allocSeen{Device: cpu.New()}
	largest, total, err := footprint(dev, c, true)
	if err != nil {
		t.Fatal(err)
	}
	if largest != want || total != wantTotal || dev.floats != total {
		t.Errorf("on the given device: largest %d, total %d, %d floats allocated there; Footprint says %d, %d", largest, total, dev.floats, want, wantTotal)
	}
	dev.floats = 0
	if _, _, err := GroupLimit(dev, c, true); err != nil || dev.floats != total {
		t.Errorf("GroupLimit allocated %d floats on its device (err %v), want %d", dev.floats, err, total)
	}
}

package gl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// A kernel case is one kernel call on host-generated arguments, run on the
// GL and the CPU devices in several layouts and groupings of seeds.

// role says how an argument is laid out and whether it is compared.
type role int

const (
	act   role = iota // an activation: dense, or a slice of an arena
	param             // a parameter: strided, or shared (stride 0)
	out               // an output: poisoned before, compared after
	inout             // updated in place (Adam's w, m, v): compared after
)

// arg is one argument: its per-seed length, role and generator (nil for
// outputs). gen fills x for seed id (id -1: the constant all seeds share).
type arg struct {
	n    int
	role role
	gen  func(r *rand.Rand, id int, x []float32)
}

type kcase struct {
	kernel, name string
	args         []arg
	call         func(dv kernels.Device, S int, t []kernels.Tensor) error
	// dispatches is what the call costs on GL.
	dispatches int
}

// The layouts a case runs in.
const (
	dense  = iota // every argument its own dense buffer
	arena         // all arguments in one buffer, [S][P] blocks with gaps
	shared        // parameters shared (stride 0), the rest dense
	numLayouts
)

var layoutNames = [numLayouts]string{"dense", "arena", "shared"}

// poison marks output elements a kernel has not written.
var poison = math.Float32frombits(0x7fc0dead)

// hostData generates every argument's data for the seeds ids (shared
// parameters once, for id -1).
func (c *kcase) hostData(ids []int, layout int) [][]float32 {
	data := make([][]float32, len(c.args))
	for i, a := range c.args {
		sh := layout == shared && a.role == param
		seeds := ids
		if sh {
			seeds = []int{-1}
		}
		x := make([]float32, 0, len(seeds)*a.n)
		for _, id := range seeds {
			part := make([]float32, a.n)
			if a.gen == nil {
				for j := range part {
					part[j] = poison
				}
			} else {
				r := rand.New(rand.NewPCG(uint64(id+1000)*7919+uint64(i), uint64(len(c.name))*31+uint64(c.name[0])))
				a.gen(r, id, part)
			}
			x = append(x, part...)
		}
		data[i] = x
	}
	return data
}

// placed is a case's arguments on one device.
type placed struct {
	ts   []kernels.Tensor
	bufs []kernels.Buffer
}

// place allocates and uploads the case's arguments on dv for S seeds.
func (c *kcase) place(t *testing.T, dv kernels.Device, S, layout int, data [][]float32) placed {
	t.Helper()
	var p placed
	alloc := func(n int) kernels.Buffer {
		b, err := dv.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		p.bufs = append(p.bufs, b)
		return b
	}
	p.ts = make([]kernels.Tensor, len(c.args))
	switch layout {
	case arena:
		// A parameter-block layout: each seed's block holds every
		// argument, with gaps of 1-3 floats that must stay 0.
		offs := make([]int, len(c.args))
		P := 0
		for i, a := range c.args {
			P += 1 + i%3
			offs[i] = P
			P += a.n
		}
		b := alloc(2 + S*P + 3)
		for i, a := range c.args {
			p.ts[i] = kernels.Tensor{Buf: b, Off: 2 + offs[i], Len: a.n, Stride: P}
		}
	default:
		for i, a := range c.args {
			if layout == shared && a.role == param {
				p.ts[i] = kernels.Tensor{Buf: alloc(a.n + 1), Off: 1, Len: a.n, Stride: 0}
			} else {
				p.ts[i] = kernels.Dense(alloc(S*a.n), a.n)
			}
		}
	}
	for i, x := range data {
		seeds := S
		if p.ts[i].Stride == 0 {
			seeds = 1
		}
		if len(x) == 0 {
			continue
		}
		if err := dv.Upload(p.ts[i], seeds, x); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p placed) free(dv kernels.Device) {
	for _, b := range p.bufs {
		dv.Free(b)
	}
}

// results downloads the case's outputs (and in the arena layout the whole
// buffer, gaps included).
func (c *kcase) results(t *testing.T, dv kernels.Device, S, layout int, p placed) [][]float32 {
	t.Helper()
	var res [][]float32
	for i, a := range c.args {
		if a.role != out && a.role != inout {
			continue
		}
		x := make([]float32, S*a.n)
		if err := dv.Download(x, p.ts[i], S); err != nil {
			t.Fatalf("%s: Download: %v", c.name, err)
		}
		res = append(res, x)
	}
	if layout == arena {
		b := p.bufs[0]
		x := make([]float32, b.Len())
		if err := dv.Download(x, kernels.Dense(b, b.Len()), 1); err != nil {
			t.Fatal(err)
		}
		res = append(res, x)
	}
	return res
}

// runOn runs the case on dv for seeds ids in a layout and returns its
// results.
func (c *kcase) runOn(t *testing.T, dv kernels.Device, ids []int, layout int) [][]float32 {
	t.Helper()
	S := len(ids)
	data := c.hostData(ids, layout)
	p := c.place(t, dv, S, layout, data)
	defer p.free(dv)
	if err := c.call(dv, S, p.ts); err != nil {
		t.Fatalf("%s on %s: %v", c.name, dv.Name(), err)
	}
	return c.results(t, dv, S, layout, p)
}

// outNames names the results of runOn.
func (c *kcase) outNames(layout int) []string {
	var n []string
	for i, a := range c.args {
		if a.role == out || a.role == inout {
			n = append(n, fmt.Sprintf("arg %d", i))
		}
	}
	if layout == arena {
		n = append(n, "arena buffer")
	}
	return n
}

// TestParity runs every case on GL and CPU, for one seed and for three,
// in every layout, and compares.
func TestParity(t *testing.T) {
	g := needGL(t)
	c := cpu.New()
	for _, kc := range allCases() {
		for layout := range numLayouts {
			for _, ids := range [][]int{{4}, {0, 1, 2}} {
				name := fmt.Sprintf("%s/%s/S%d", kc.name, layoutNames[layout], len(ids))
				t.Run(name, func(t *testing.T) {
					want := kc.runOn(t, c, ids, layout)
					got := kc.runOn(t, g, ids, layout)
					for i, what := range kc.outNames(layout) {
						compare(t, kc.kernel, name+" "+what, got[i], want[i])
					}
				})
			}
		}
	}
}

// TestBatchInvariance wants seed 8's results to be the same bits alone, in
// a group of three (in the arena layout) and in a group of four with other
// seeds, and on a second run (determinism).
func TestBatchInvariance(t *testing.T) {
	g := needGL(t)
	for _, kc := range allCases() {
		t.Run(kc.name, func(t *testing.T) {
			alone := kc.runOn(t, g, []int{8}, dense)
			groups := []struct {
				ids    []int
				at     int
				layout int
			}{
				{[]int{7, 8, 9}, 1, arena},
				{[]int{1, 2, 8, 3}, 2, dense},
				{[]int{8}, 0, dense},
			}
			for _, gr := range groups {
				res := kc.runOn(t, g, gr.ids, gr.layout)
				for i, a := range kc.outputs() {
					seed := res[i][gr.at*a.n : (gr.at+1)*a.n]
					if j := sameBits(seed, alone[i]); j >= 0 {
						t.Errorf("output %d of seed 8 at %d of %v (%s): element %d is %g, alone %g",
							i, gr.at, gr.ids, layoutNames[gr.layout], j, seed[j], alone[i][j])
					}
				}
			}
		})
	}
}

func (c *kcase) outputs() []arg {
	var o []arg
	for _, a := range c.args {
		if a.role == out || a.role == inout {
			o = append(o, a)
		}
	}
	return o
}

// TestDispatchCounts checks each kernel's GL dispatch count.
func TestDispatchCounts(t *testing.T) {
	g := needGL(t)
	for _, kc := range allCases() {
		data := kc.hostData([]int{0, 1}, dense)
		p := kc.place(t, g, 2, dense, data)
		before := g.Stats().Dispatches
		if err := kc.call(g, 2, p.ts); err != nil {
			t.Fatal(err)
		}
		if n := g.Stats().Dispatches - before; n != int64(kc.dispatches) {
			t.Errorf("%s: %d dispatches, want %d", kc.name, n, kc.dispatches)
		}
		p.free(g)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestFusedMatchSeparate: the fused kernels give, bit for bit, what the
// kernels they replace give on this device (any NaN for a NaN: the
// hardware picks NaNs' payloads).
func TestFusedMatchSeparate(t *testing.T) {
	g := needGL(t)
	sep := kernels.Apart(g)
	for _, kc := range allCases() {
		if !fusedKernels[kc.kernel] {
			continue
		}
		t.Run(kc.name, func(t *testing.T) {
			for layout := range numLayouts {
				ids := []int{3, 0, 5}
				fused := kc.runOn(t, g, ids, layout)
				two := kc.runOn(t, sep, ids, layout)
				for i, what := range kc.outNames(layout) {
					if j := sameBits(quietNaNs(fused[i]), quietNaNs(two[i])); j >= 0 {
						t.Errorf("%s %s: element %d is %g fused, %g apart", layoutNames[layout], what, j, fused[i][j], two[i][j])
					}
				}
			}
		})
	}
}

// quietNaNs is x with every NaN made the one quiet NaN.
func quietNaNs(x []float32) []float32 {
	out := append([]float32(nil), x...)
	for i, v := range out {
		if v != v {
			out[i] = float32(math.NaN())
		}
	}
	return out
}

// TestVariantsAgree: the staged kernels (GPUs) and the direct ones
// (llvmpipe) give every case the same bits (any NaN for a NaN), so the
// variant a machine runs never changes a result.
func TestVariantsAgree(t *testing.T) {
	g := needGL(t)
	other := "staged"
	if g.Staged() {
		other = "direct"
	}
	t.Setenv("HEADLAB_GL_KERNELS", other)
	o, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Staged() == g.Staged() {
		t.Fatalf("both devices staged %v", g.Staged())
	}
	for _, kc := range allCases() {
		t.Run(kc.name, func(t *testing.T) {
			for layout := range numLayouts {
				ids := []int{2, 7, 1}
				a := kc.runOn(t, g, ids, layout)
				b := kc.runOn(t, o, ids, layout)
				for i, what := range kc.outNames(layout) {
					if j := sameBits(quietNaNs(a[i]), quietNaNs(b[i])); j >= 0 {
						t.Errorf("%s %s: element %d is %g staged=%v, %g staged=%v", layoutNames[layout], what, j, a[i][j], g.Staged(), b[i][j], o.Staged())
					}
				}
			}
		})
	}
}

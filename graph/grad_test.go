package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// gradCheck compares the symbolic gradient of sum(f(inputs) * R) (or f
// itself when it is a scalar) with central finite differences, for every
// element of every input listed in diff. Gorgonia's TapeMachine runs the
// ops, on the CPU device.
func gradCheck(t *testing.T, name string, shapes [][]int, diff []bool, f func(in []*G.Node) *G.Node) {
	t.Helper()
	tapeDevice = cpu.New()
	rng := rand.New(rand.NewPCG(7, uint64(len(name))))
	g := G.NewGraph()
	var in, wrt []*G.Node
	var data [][]float32
	for i, s := range shapes {
		n := 1
		for _, d := range s {
			n *= d
		}
		d := make([]float32, n)
		for j := range d {
			d[j] = float32(rng.NormFloat64())
		}
		data = append(data, d)
		val := tensor.New(tensor.WithShape(s...), tensor.WithBacking(d))
		node := G.NewTensor(g, G.Float32, len(s), G.WithShape(s...), G.WithName(fmt.Sprint("in", i)), G.WithValue(val))
		in = append(in, node)
		if diff[i] {
			wrt = append(wrt, node)
		}
	}
	out := f(in)
	loss := out
	if !out.IsScalar() {
		r := make([]float32, out.Shape().TotalSize())
		for j := range r {
			r[j] = float32(rng.NormFloat64())
		}
		rn := G.NewTensor(g, G.Float32, out.Dims(), G.WithShape(out.Shape()...), G.WithName("R"),
			G.WithValue(tensor.New(tensor.WithShape(out.Shape()...), tensor.WithBacking(r))))
		loss = G.Must(G.Sum(G.Must(G.HadamardProd(out, rn))))
	}
	if _, err := G.Grad(loss, wrt...); err != nil {
		t.Fatalf("%s: Grad: %v", name, err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(wrt...))
	defer vm.Close()
	run := func() float64 {
		if err := vm.RunAll(); err != nil {
			t.Fatalf("%s: run: %v", name, err)
		}
		v := float64(loss.Value().Data().(float32))
		vm.Reset()
		return v
	}
	if err := vm.RunAll(); err != nil {
		t.Fatalf("%s: run: %v", name, err)
	}
	var grads [][]float32
	for _, n := range wrt {
		gv, err := n.Grad()
		if err != nil {
			t.Fatalf("%s: grad of %s: %v", name, n.Name(), err)
		}
		grads = append(grads, append([]float32(nil), gv.Data().([]float32)...))
	}
	vm.Reset()
	const eps = 1e-2
	k := 0
	for i := range in {
		if !diff[i] {
			continue
		}
		for j := range data[i] {
			orig := data[i][j]
			data[i][j] = orig + eps
			up := run()
			data[i][j] = orig - eps
			down := run()
			data[i][j] = orig
			fd := (up - down) / (2 * eps)
			an := float64(grads[k][j])
			if math.Abs(fd-an) > 3e-3+3e-2*math.Abs(fd) {
				t.Errorf("%s: d/d in%d[%d]: symbolic %.6f, finite difference %.6f", name, i, j, an, fd)
			}
		}
		k++
	}
}

func TestOpGradients(t *testing.T) {
	gradCheck(t, "linear", [][]int{{5, 4}, {4, 3}, {3}}, []bool{true, true, true},
		func(in []*G.Node) *G.Node { return linear(in[0], in[1], in[2]) })
	gradCheck(t, "linear-nobias", [][]int{{5, 4}, {4, 3}}, []bool{true, true},
		func(in []*G.Node) *G.Node { return linear(in[0], in[1], nil) })
	gradCheck(t, "linear-transposed", [][]int{{5, 4}, {3, 4}, {3}}, []bool{true, true, true},
		func(in []*G.Node) *G.Node { return linearT(in[0], in[1], in[2]) })
	gradCheck(t, "layernorm", [][]int{{4, 6}, {6}, {6}}, []bool{true, true, true},
		func(in []*G.Node) *G.Node { return layerNorm(in[0], in[1], in[2]) })
	gradCheck(t, "gelu", [][]int{{3, 5}}, []bool{true},
		func(in []*G.Node) *G.Node { return gelu(in[0]) })
	gradCheck(t, "colscale", [][]int{{4, 6}, {6}}, []bool{true, true},
		func(in []*G.Node) *G.Node { return colScale(in[0], in[1]) })
	ids := []float32{2, 0, 2, 1, 2}
	gradCheck(t, "embed", [][]int{{3, 4}}, []bool{true}, func(in []*G.Node) *G.Node {
		iv := G.NewVector(in[0].Graph(), G.Float32, G.WithShape(5), G.WithName("ids"),
			G.WithValue(tensor.New(tensor.WithShape(5), tensor.WithBacking(ids))))
		return embed(iv, in[0])
	})
}

func TestSoftmaxCrossEntropyGradient(t *testing.T) {
	// Target ids: rows 0 and 2 are answers, row 1 is not.
	y := []float32{1, -1, 3}
	gradCheck(t, "softmax-xent", [][]int{{3, 4}}, []bool{true}, func(in []*G.Node) *G.Node {
		yv := G.NewVector(in[0].Graph(), G.Float32, G.WithShape(3), G.WithName("y"),
			G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking(y))))
		return softmaxXent(in[0], yv)
	})
}

func TestAttentionGradients(t *testing.T) {
	for _, causal := range []bool{true, false} {
		s := kernels.Shape{B: 2, T: 4, H: 2, Dh: 3, Causal: causal}
		qkv := []int{s.B * s.T, s.H * s.Dh}
		gradCheck(t, fmt.Sprint("attention causal=", causal), [][]int{qkv, qkv, qkv}, []bool{true, true, true},
			func(in []*G.Node) *G.Node {
				return attentionMix(s, attentionProbs(s, in[0], in[1]), in[2])
			})
	}
}

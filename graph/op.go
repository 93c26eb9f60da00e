package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/kernels"
)

// op is the one shape every custom Gorgonia op in headlab takes: a named
// kernel launch on a device with a static output shape, and a symbolic
// gradient built from further ops. Shapes are known when the graph is
// built, so InferShape just returns the stored one. Shapes are those of
// one model; the executor runs every op for S models at once.
type op struct {
	// name identifies the op and every parameter it depends on; it is hashed,
	// so two ops with the same name and inputs are the same node.
	name   string
	inDims []int
	out    tensor.Shape
	// run launches the op's kernel; it overwrites c.out.
	run func(c *call) error
	// grad returns one gradient node per input (nil where diff is false).
	grad func(in G.Nodes, out, dOut *G.Node) (G.Nodes, error)
	diff []bool
	// aux are the lengths of the tensors a forward keeps for its gradient
	// (LayerNorm's normalised rows, GELU's derivative); a gradient op
	// names its forward in auxOf and reads those.
	aux   []int
	auxOf *op
	// fuse is what the executor needs to run the op in a fused kernel
	// with its neighbours (fused.go).
	fuse fusible

	// For Gorgonia's own machines (Do): the output in host memory, and
	// the aux tensors on tapeDevice, made on first use.
	val    *tensor.Dense
	scalar *G.F32
	buf    []float32
	auxT   []kernels.Tensor
}

// fusible says what an op is, for the executor's fused kernels
// (fused.go): its kind and the sizes its kernel takes. Ops of no kind
// there run alone.
type fusible struct {
	kind opKind
	// m, n, k: a product's op(a) m x k by op(b) k x n (tA, tB: its
	// transposes); a row op's k rows of n.
	m, n, k int
	tA, tB  bool
	shape   kernels.Shape // the attention ops'
}

// opKind is what an op computes, as the fused kernels see it.
type opKind int

const (
	kindNone           opKind = iota
	kindLinear                // x w + b (linear)
	kindMatMul                // op(a) op(b), a gradient's product (matmulOp)
	kindGELU                  // GELU, its derivative kept (gelu)
	kindGELUGrad              // dy times the derivative its GELU kept
	kindAdd                   // a + b (add, and Gorgonia's sums of gradients)
	kindColSum                // the column sums of its input
	kindColDot                // the column dot products of its input and another (or its forward's aux)
	kindColScale              // its input times a gate per column
	kindEmbed                 // rows of a table looked up
	kindLayerNormGradX        // LayerNorm's input gradient
	kindProbs                 // attention's probabilities
	kindMix                   // attention's output
	kindMixGradP              // the gradient of the probabilities from the output's
	kindMixGradV              // the values' gradient
	kindProbsGradQ            // the queries' gradient
	kindProbsGradK            // the keys' gradient
)

// call is one launch of an op: its inputs, output and aux tensors, for S
// models on device d.
type call struct {
	d   kernels.Device
	S   int
	in  []kernels.Tensor
	out kernels.Tensor
	aux []kernels.Tensor
}

// auxOwner is the op whose aux tensors o reads.
func (o *op) auxOwner() *op {
	if o.auxOf != nil {
		return o.auxOf
	}
	return o
}

// tapeDevice runs the ops for Do, Gorgonia's own machines (the gradient
// tests' TapeMachine). graph chooses no backend: the tests that run a
// TapeMachine set it. Nets never call Do; their executor runs every op.
var tapeDevice kernels.Device

// output returns the op's persistent host output for Do.
func (o *op) output() (G.Value, []float32) {
	if o.buf == nil {
		if o.out.IsScalar() {
			o.scalar, o.buf = G.NewF32(0), make([]float32, 1)
		} else {
			o.val = tensor.New(tensor.WithShape(o.out.Clone()...), tensor.Of(tensor.Float32))
			o.buf = o.val.Data().([]float32)
		}
	}
	if o.scalar != nil {
		return o.scalar, o.buf
	}
	return o.val, o.buf
}

func (o *op) Arity() int { return len(o.inDims) }

func typeOf(dims int) hm.Type {
	if dims == 0 {
		return hm.TypeVariable('a')
	}
	return G.TensorType{Dims: dims, Of: hm.TypeVariable('a')}
}

func (o *op) Type() hm.Type {
	ts := make([]hm.Type, 0, len(o.inDims)+1)
	for _, d := range o.inDims {
		ts = append(ts, typeOf(d))
	}
	ts = append(ts, typeOf(o.out.Dims()))
	return hm.NewFnType(ts...)
}

func (o *op) InferShape(...G.DimSizer) (tensor.Shape, error) { return o.out.Clone(), nil }

// floats returns the float32 data of a value without copying.
func floats(v G.Value) ([]float32, error) {
	switch v := v.(type) {
	case *G.F32:
		return []float32{float32(*v)}, nil
	case *tensor.Dense:
		if v.IsMaterializable() {
			v = v.Materialize().(*tensor.Dense)
		}
		if f, ok := v.Data().([]float32); ok {
			return f, nil
		}
		if f, ok := v.Data().(float32); ok {
			return []float32{f}, nil
		}
	}
	return nil, fmt.Errorf("graph: want float32 values, got %T", v)
}

// Do runs the op for Gorgonia's own machines, one model on tapeDevice:
// Gorgonia holds values in host memory, so the inputs are uploaded and
// the output read back into the op's own value. The aux tensors a
// forward keeps for its gradient op stay on the device.
func (o *op) Do(vals ...G.Value) (_ G.Value, err error) {
	d := tapeDevice
	if d == nil {
		return nil, fmt.Errorf("%s: no device for Gorgonia's machines (a Net runs ops on its own)", o.name)
	}
	if len(vals) != len(o.inDims) {
		return nil, fmt.Errorf("%s: %d inputs, want %d", o.name, len(vals), len(o.inDims))
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: %w", o.name, err)
		}
	}()
	mem := kernels.Arena{Dev: d, S: 1}
	defer mem.Free()
	c := &call{d: d, S: 1}
	for i, v := range vals {
		f, err := floats(v)
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		t, err := mem.Dense(len(f))
		if err != nil {
			return nil, err
		}
		if err := d.Upload(t, 1, f); err != nil {
			return nil, err
		}
		c.in = append(c.in, t)
	}
	own := o.auxOwner()
	if own.auxT == nil {
		kept := kernels.Arena{Dev: d, S: 1} // as long as the op: never freed
		var aux []kernels.Tensor
		for _, n := range own.aux {
			t, err := kept.Dense(n)
			if err != nil {
				kept.Free()
				return nil, err
			}
			aux = append(aux, t)
		}
		own.auxT = aux
	}
	c.aux = own.auxT
	v, buf := o.output()
	if c.out, err = mem.Dense(len(buf)); err != nil {
		return nil, err
	}
	if err := o.run(c); err != nil {
		return nil, err
	}
	if err := d.Download(buf, c.out, 1); err != nil {
		return nil, err
	}
	if o.scalar != nil {
		*o.scalar = G.F32(buf[0])
	}
	return v, nil
}

func (o *op) ReturnsPtr() bool      { return false }
func (o *op) CallsExtern() bool     { return false }
func (o *op) OverwritesInput() int  { return -1 }
func (o *op) WriteHash(h hash.Hash) { fmt.Fprint(h, o.name, o.out) }
func (o *op) String() string        { return o.name }

func (o *op) Hashcode() uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}

func (o *op) DiffWRT(int) []bool { return o.diff }

func (o *op) SymDiff(in G.Nodes, out, dOut *G.Node) (G.Nodes, error) {
	if o.grad == nil {
		return nil, fmt.Errorf("%s is not differentiable", o.name)
	}
	return o.grad(in, out, dOut)
}

// apply adds o to the graph.
func apply(o *op, in ...*G.Node) *G.Node {
	n, err := G.ApplyOp(o, in...)
	if err != nil {
		panic(fmt.Sprintf("graph: building %s: %v", o.name, err))
	}
	return n
}

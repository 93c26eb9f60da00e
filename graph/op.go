package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// op is the one shape every custom Gorgonia op in headlab takes: a named
// float32 function of its inputs with a static output shape, and a
// symbolic gradient built from further ops. Shapes are known when the
// graph is built, so InferShape just returns the stored one.
type op struct {
	// name identifies the op and every parameter it depends on; it is hashed,
	// so two ops with the same name and inputs are the same node.
	name   string
	inDims []int
	out    tensor.Shape
	// fwd overwrites out (len = out.TotalSize(), or 1 for a scalar).
	fwd func(out []float32, in [][]float32) error
	// grad returns one gradient node per input (nil where diff is false).
	grad func(in G.Nodes, out, dOut *G.Node) (G.Nodes, error)
	diff []bool

	// The output lives as long as the op: every run overwrites the same
	// tensor (or scalar), so a step allocates nothing. in is Do's scratch.
	val    *tensor.Dense
	scalar *G.F32
	buf    []float32
	in     [][]float32
}

// setBuffer makes buf (of the output's size) the op's output storage:
// the executor's memory plan shares buffers between ops whose values are
// never alive at the same time.
func (o *op) setBuffer(buf []float32) {
	o.buf = buf
	if o.out.IsScalar() {
		o.scalar = G.NewF32(0)
		return
	}
	o.val = tensor.New(tensor.WithShape(o.out.Clone()...), tensor.WithBacking(buf))
}

// output returns the op's persistent output value and its float32 data,
// allocating them on first use unless the executor gave a buffer.
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

// run computes the op into its persistent output.
func (o *op) run(in [][]float32) error {
	if err := o.fwd(o.buf, in); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if o.scalar != nil {
		*o.scalar = G.F32(o.buf[0])
	}
	return nil
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

// Do runs the op for Gorgonia's own machines (the tests' TapeMachine);
// Net runs ops through its executor instead. Both write the same
// persistent output.
func (o *op) Do(vals ...G.Value) (G.Value, error) {
	if len(vals) != len(o.inDims) {
		return nil, fmt.Errorf("%s: %d inputs, want %d", o.name, len(vals), len(o.inDims))
	}
	o.in = o.in[:0]
	for i, v := range vals {
		f, err := floats(v)
		if err != nil {
			return nil, fmt.Errorf("%s: input %d: %w", o.name, i, err)
		}
		o.in = append(o.in, f)
	}
	v, _ := o.output()
	if err := o.run(o.in); err != nil {
		return nil, err
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

package kernels

import "fmt"

// Kernels a device may add to Device: each computes what several of
// Device's kernels compute, reading their shared inputs once and storing
// no intermediate result the graph does not need, with the same bits.
// graph's executor uses them where a device has them (the GL device) and
// the graph shows the group; elsewhere it calls the kernels one by one.
// Separately (below) runs each with Device's own kernels, for devices
// without it (the recorder of bench's cost model, tests).

// WeightGrader computes a linear layer's weight and bias gradients in one
// pass over its rows.
type WeightGrader interface {
	// WeightGrad: dW = x^T dy (MatMul with tA, x k x m, dy k x n) and
	// db = the column sums of dy (ColSum of k rows of n).
	WeightGrad(S, m, n, k int, x, dy, dW, db Tensor) error
}

// ColDotSummer computes a LayerNorm's gain and bias gradients in one
// pass over its rows.
type ColDotSummer interface {
	// ColDotSum: dot = ColDot(a, b) and sum = ColSum(a), rows x d.
	ColDotSum(S, rows, d int, a, b, dot, sum Tensor) error
}

// Epilogue is the elementwise kernel that a product's result y goes
// through in ProductEpiloguer.MatMulThen, with its other operand x.
type Epilogue int

const (
	// EpilogueAdd: out = x + y, as Add adds (a sum of gradients).
	EpilogueAdd Epilogue = iota + 1
	// EpilogueMul: out = y*x elementwise, as Mul (GELU's derivative).
	EpilogueMul
	// EpilogueColScale: out[r, j] = y[r, j]*x[j], as ColScale (a head
	// gate); x holds n floats.
	EpilogueColScale
)

// ProductEpiloguer computes a product and the elementwise kernel that
// reads it in one kernel.
type ProductEpiloguer interface {
	// MatMulThen: y = op(a) op(b) + bias as MatMul computes it (bias may
	// have a nil Buf), stored in c where c has a buffer, and out = e(y,
	// x).
	MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c Tensor, e Epilogue, x, out Tensor) error
}

// LayerNormGrader computes a LayerNorm's three gradients in one pass over
// its rows.
type LayerNormGrader interface {
	// LayerNormGrad: dx = LayerNormGradX(gamma, dy, xh, inv), plus res as
	// Add adds where res has a buffer; dgamma = ColDot(dy, xh); dbeta =
	// ColSum(dy).
	LayerNormGrad(S, rows, d int, gamma, dy, xh, inv, res, dx, dgamma, dbeta Tensor) error
}

// EmbedAdder looks up two embeddings and adds them in one kernel.
type EmbedAdder interface {
	// EmbedAdd: out = Embed(ids, table) + Embed(ids2, table2), as Add
	// adds; both tables have rows of d.
	EmbedAdd(S, rows, d int, ids, table, ids2, table2, out Tensor) error
}

// Attender computes attention's forward and backward each in one kernel
// per head, for the shapes it says it takes.
type Attender interface {
	// Attends says whether Attend and AttendGrad take shape s.
	Attends(s Shape) bool
	// Attend: p = Probs(q, k), o = Mix(p, v) and og = ColScale(o, g)
	// (rows s.B*s.T of s.H*s.Dh); o and og (with g) may have nil Bufs,
	// and are then not stored.
	Attend(S int, s Shape, q, k, v, g, p, o, og Tensor) error
	// AttendGrad: dV = MixGradV(p, dO), and with dP = MixGradP(dO, v)
	// (never stored), dQ = ProbsGradQ(p, dP, k) and dK = ProbsGradK(p,
	// dP, q).
	AttendGrad(S int, s Shape, p, dO, q, k, v, dQ, dK, dV Tensor) error
}

// Fused is d's fused kernels of interface F (one of those above), or,
// on a device without them, Separately: the kernels they replace, one by
// one, the same bits.
func Fused[F any](d Device) F {
	if f, ok := d.(F); ok {
		return f
	}
	return any(Separately{Device: d}).(F)
}

// Separately runs the fused kernels with Device's own kernels, the same
// bits, on a device that may lack them; intermediate results the fused
// kernel does not store go to tensors it allocates on the device for the
// call.
type Separately struct{ Device }

// withTemp runs f with a temporary of n floats for each of S seeds (dense:
// not Arena.Scratch), freed after it.
func (d Separately) withTemp(S, n int, f func(t Tensor) error) error {
	a := Arena{Dev: d.Device, S: S}
	defer a.Free()
	t, err := a.Dense(n)
	if err != nil {
		return err
	}
	return f(t)
}

// WeightGrad implements WeightGrader: MatMul and ColSum.
func (d Separately) WeightGrad(S, m, n, k int, x, dy, dW, db Tensor) error {
	if err := d.MatMul(S, true, false, m, n, k, x, dy, dW, Tensor{}); err != nil {
		return err
	}
	return d.ColSum(S, k, n, dy, db)
}

// ColDotSum implements ColDotSummer: ColDot and ColSum.
func (d Separately) ColDotSum(S, rows, n int, a, b, dot, sum Tensor) error {
	if err := d.ColDot(S, rows, n, a, b, dot); err != nil {
		return err
	}
	return d.ColSum(S, rows, n, a, sum)
}

// MatMulThen implements ProductEpiloguer: MatMul, then Add, Mul or
// ColScale.
func (d Separately) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c Tensor, e Epilogue, x, out Tensor) error {
	run := func(y Tensor) error {
		if err := d.MatMul(S, tA, tB, m, n, k, a, b, y, bias); err != nil {
			return err
		}
		switch e {
		case EpilogueAdd:
			return d.Add(S, m*n, x, y, out)
		case EpilogueMul:
			return d.Mul(S, m*n, y, x, out)
		case EpilogueColScale:
			return d.ColScale(S, m, n, y, x, out)
		}
		return fmt.Errorf("kernels: no epilogue %d", e)
	}
	if c.Buf != nil {
		return run(c)
	}
	return d.withTemp(S, m*n, run)
}

// LayerNormGrad implements LayerNormGrader: LayerNormGradX, Add, and
// ColDot and ColSum (the device's ColDotSum where it has one).
func (d Separately) LayerNormGrad(S, rows, n int, gamma, dy, xh, inv, res, dx, dgamma, dbeta Tensor) error {
	if err := d.LayerNormGradX(S, rows, n, gamma, dy, xh, inv, dx); err != nil {
		return err
	}
	if res.Buf != nil {
		if err := d.Add(S, rows*n, res, dx, dx); err != nil {
			return err
		}
	}
	return Fused[ColDotSummer](d.Device).ColDotSum(S, rows, n, dy, xh, dgamma, dbeta)
}

// EmbedAdd implements EmbedAdder: two Embeds and Add.
func (d Separately) EmbedAdd(S, rows, n int, ids, table, ids2, table2, out Tensor) error {
	return d.withTemp(S, rows*n, func(t Tensor) error {
		if err := d.Embed(S, rows, n, ids, table, out); err != nil {
			return err
		}
		if err := d.Embed(S, rows, n, ids2, table2, t); err != nil {
			return err
		}
		return d.Add(S, rows*n, out, t, out)
	})
}

// Attends implements Attender: every shape.
func (Separately) Attends(Shape) bool { return true }

// Attend implements Attender: Probs, Mix and ColScale.
func (d Separately) Attend(S int, s Shape, q, k, v, g, p, o, og Tensor) error {
	if err := d.Probs(S, s, q, k, p); err != nil {
		return err
	}
	mix := func(o Tensor) error {
		if err := d.Mix(S, s, p, v, o); err != nil {
			return err
		}
		if og.Buf == nil {
			return nil
		}
		return d.ColScale(S, s.B*s.T, s.H*s.Dh, o, g, og)
	}
	if o.Buf != nil {
		return mix(o)
	}
	return d.withTemp(S, s.QKVLen(), mix)
}

// AttendGrad implements Attender: MixGradV, MixGradP, ProbsGradQ and
// ProbsGradK.
func (d Separately) AttendGrad(S int, s Shape, p, dO, q, k, v, dQ, dK, dV Tensor) error {
	if err := d.MixGradV(S, s, p, dO, dV); err != nil {
		return err
	}
	return d.withTemp(S, s.ProbsLen(), func(dP Tensor) error {
		if err := d.MixGradP(S, s, dO, v, dP); err != nil {
			return err
		}
		if err := d.ProbsGradQ(S, s, p, dP, k, dQ); err != nil {
			return err
		}
		return d.ProbsGradK(S, s, p, dP, q, dK)
	})
}

var (
	_ WeightGrader     = Separately{}
	_ ColDotSummer     = Separately{}
	_ ProductEpiloguer = Separately{}
	_ LayerNormGrader  = Separately{}
	_ EmbedAdder       = Separately{}
	_ Attender         = Separately{}
)

package kernels

import "fmt"

// The fused kernels: each computes what several of the other kernels
// compute, reading their shared inputs once and storing no intermediate
// result the graph does not need, with the same bits. graph's executor
// calls them where the graph shows the group and the device Fuses (the
// GL device); elsewhere it calls the kernels one by one. A device whose
// fused kernels would only be its others run in turn embeds Separately
// (the CPU).
type Fused interface {
	// Fuses says whether the executor calls the fused kernels below:
	// false where they are the other kernels run one by one
	// (Separately), which the executor then calls itself, with its
	// scratch.
	Fuses() bool
	// Attends says whether Attend and AttendGrad take shape s.
	Attends(s Shape) bool

	// WeightGrad, a linear layer's weight and bias gradients in one pass
	// over its rows: dW = x^T dy (MatMul with tA, x k x m, dy k x n) and
	// db = the column sums of dy (ColSum of k rows of n).
	WeightGrad(S, m, n, k int, x, dy, dW, db Tensor) error
	// ColDotSum, a LayerNorm's gain and bias gradients in one pass over
	// its rows: dot = ColDot(a, b) and sum = ColSum(a), rows x d.
	ColDotSum(S, rows, d int, a, b, dot, sum Tensor) error
	// MatMulThen, a product and the elementwise kernel that reads it:
	// y = op(a) op(b) + bias as MatMul computes it (bias may have a nil
	// Buf), stored in c where c has a buffer, and out = e(y, x).
	MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c Tensor, e Epilogue, x, out Tensor) error
	// LayerNormGrad, a LayerNorm's three gradients in one pass over its
	// rows: dx = LayerNormGradX(gamma, dy, xh, inv), plus res as Add adds
	// where res has a buffer; dgamma = ColDot(dy, xh); dbeta =
	// ColSum(dy).
	LayerNormGrad(S, rows, d int, gamma, dy, xh, inv, res, dx, dgamma, dbeta Tensor) error
	// EmbedAdd, two embeddings looked up and added: out = Embed(ids,
	// table) + Embed(ids2, table2), as Add adds; both tables have rows
	// of d.
	EmbedAdd(S, rows, d int, ids, table, ids2, table2, out Tensor) error
	// Attend, attention's forward in one kernel per head: p = Probs(q,
	// k), o = Mix(p, v) and og = ColScale(o, g) (rows s.B*s.T of
	// s.H*s.Dh); o and og (with g) may have nil Bufs, and are then not
	// stored.
	Attend(S int, s Shape, q, k, v, g, p, o, og Tensor) error
	// AttendGrad, attention's backward in one kernel per head: dV =
	// MixGradV(p, dO), and with dP = MixGradP(dO, v) (never stored), dQ
	// = ProbsGradQ(p, dP, k) and dK = ProbsGradK(p, dP, q).
	AttendGrad(S int, s Shape, p, dO, q, k, v, dQ, dK, dV Tensor) error
}

// Epilogue is the elementwise kernel that a product's result y goes
// through in MatMulThen, with its other operand x.
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

// Separately is the fused kernels run with Device's other kernels one by
// one, the same bits: a device embeds it (with Device itself) to have
// them, and says it does not fuse. Intermediate results a fused kernel
// does not store go to tensors it allocates on the device for the call.
// Device is a named field, not embedded, so that a device embedding
// Separately still lacks, and the compiler reports, any other kernel it
// has not written.
type Separately struct{ Device Device }

// Fuses implements Fused: the executor calls the kernels one by one
// itself.
func (Separately) Fuses() bool { return false }

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

// WeightGrad implements Fused: MatMul and ColSum.
func (d Separately) WeightGrad(S, m, n, k int, x, dy, dW, db Tensor) error {
	if err := d.Device.MatMul(S, true, false, m, n, k, x, dy, dW, Tensor{}); err != nil {
		return err
	}
	return d.Device.ColSum(S, k, n, dy, db)
}

// ColDotSum implements Fused: ColDot and ColSum.
func (d Separately) ColDotSum(S, rows, n int, a, b, dot, sum Tensor) error {
	if err := d.Device.ColDot(S, rows, n, a, b, dot); err != nil {
		return err
	}
	return d.Device.ColSum(S, rows, n, a, sum)
}

// MatMulThen implements Fused: MatMul, then Add, Mul or ColScale.
func (d Separately) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c Tensor, e Epilogue, x, out Tensor) error {
	run := func(y Tensor) error {
		if err := d.Device.MatMul(S, tA, tB, m, n, k, a, b, y, bias); err != nil {
			return err
		}
		switch e {
		case EpilogueAdd:
			return d.Device.Add(S, m*n, x, y, out)
		case EpilogueMul:
			return d.Device.Mul(S, m*n, y, x, out)
		case EpilogueColScale:
			return d.Device.ColScale(S, m, n, y, x, out)
		}
		return fmt.Errorf("kernels: no epilogue %d", e)
	}
	if c.Buf != nil {
		return run(c)
	}
	return d.withTemp(S, m*n, run)
}

// LayerNormGrad implements Fused: LayerNormGradX, Add, and the
// device's ColDotSum.
func (d Separately) LayerNormGrad(S, rows, n int, gamma, dy, xh, inv, res, dx, dgamma, dbeta Tensor) error {
	if err := d.Device.LayerNormGradX(S, rows, n, gamma, dy, xh, inv, dx); err != nil {
		return err
	}
	if res.Buf != nil {
		if err := d.Device.Add(S, rows*n, res, dx, dx); err != nil {
			return err
		}
	}
	return d.Device.ColDotSum(S, rows, n, dy, xh, dgamma, dbeta)
}

// EmbedAdd implements Fused: two Embeds and Add.
func (d Separately) EmbedAdd(S, rows, n int, ids, table, ids2, table2, out Tensor) error {
	return d.withTemp(S, rows*n, func(t Tensor) error {
		if err := d.Device.Embed(S, rows, n, ids, table, out); err != nil {
			return err
		}
		if err := d.Device.Embed(S, rows, n, ids2, table2, t); err != nil {
			return err
		}
		return d.Device.Add(S, rows*n, out, t, out)
	})
}

// Attends implements Fused: every shape.
func (Separately) Attends(Shape) bool { return true }

// Attend implements Fused: Probs, Mix and ColScale.
func (d Separately) Attend(S int, s Shape, q, k, v, g, p, o, og Tensor) error {
	if err := d.Device.Probs(S, s, q, k, p); err != nil {
		return err
	}
	mix := func(o Tensor) error {
		if err := d.Device.Mix(S, s, p, v, o); err != nil {
			return err
		}
		if og.Buf == nil {
			return nil
		}
		return d.Device.ColScale(S, s.B*s.T, s.H*s.Dh, o, g, og)
	}
	if o.Buf != nil {
		return mix(o)
	}
	return d.withTemp(S, s.QKVLen(), mix)
}

// AttendGrad implements Fused: MixGradV, MixGradP, ProbsGradQ and
// ProbsGradK.
func (d Separately) AttendGrad(S int, s Shape, p, dO, q, k, v, dQ, dK, dV Tensor) error {
	if err := d.Device.MixGradV(S, s, p, dO, dV); err != nil {
		return err
	}
	return d.withTemp(S, s.ProbsLen(), func(dP Tensor) error {
		if err := d.Device.MixGradP(S, s, dO, v, dP); err != nil {
			return err
		}
		if err := d.Device.ProbsGradQ(S, s, p, dP, k, dQ); err != nil {
			return err
		}
		return d.Device.ProbsGradK(S, s, p, dP, q, dK)
	})
}

// Apart is d with its fused kernels run as its other kernels one by one
// (Separately), which the executor then calls itself: the same bits as
// d's fused kernels, for the tests that hold the two to each other.
func Apart(d Device) Device { return apart{Separately{d}, whole{d}} }

// apart takes the fused kernels from Separately and the others from d:
// whole puts d's methods a level deeper than Separately's, so that
// Separately's win.
type apart struct {
	Separately
	whole
}

type whole struct{ Device }

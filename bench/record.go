package bench

import (
	"sync"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/train"
)

// Call is one kernel call of a training step as a Recorder saw it: the
// kernels.Device method and the sizes the cost model reads (per seed;
// fields a kernel does not take stay zero).
type Call struct {
	Kernel string
	S      int
	// MatMul and Linear: op(a) M x K times op(b) K x N; Bias, Res and
	// Deriv say which of the optional tensors are there.
	M, N, K                  int
	TA, TB, Bias, Res, Deriv bool
	// Rows and D: the row kernels (ColSum, ColDot, LayerNorm,
	// LayerNormGradX, ColScale, Embed, EmbedGrad); V is the vocabulary of
	// the loss kernels, the table rows of Embed and the output rows of
	// EmbedGrad.
	Rows, D, V int
	// SharedIDs says the ids of Embed or EmbedGrad are one constant every
	// seed shares (stride 0: the positions, the answer rows).
	SharedIDs bool
	// Len is the elements of GELU, Mul, Add and Adam.
	Len int
	// Shape is the attention kernels'.
	Shape kernels.Shape
	// Epilogue is MatMulThen's; Keep says it stores the product too (or
	// Attend the output before its gate), Gated that Attend stores the
	// gated output. Res says LayerNormGrad adds the residual's gradient.
	Epilogue    kernels.Epilogue
	Keep, Gated bool
}

// Recorder is a kernels.Device that passes every call on to Device and,
// while on, records each kernel call in order.
type Recorder struct {
	kernels.Device
	mu    sync.Mutex
	on    bool
	calls []Call
}

// Record switches recording on or off.
func (r *Recorder) Record(on bool) {
	r.mu.Lock()
	r.on = on
	r.mu.Unlock()
}

// Take returns the calls recorded since the last Take.
func (r *Recorder) Take() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func (r *Recorder) add(c Call) {
	r.mu.Lock()
	if r.on {
		r.calls = append(r.calls, c)
	}
	r.mu.Unlock()
}

func (r *Recorder) MatMul(S int, tA, tB bool, m, n, k int, a, b, c, bias kernels.Tensor) error {
	r.add(Call{Kernel: "MatMul", S: S, M: m, N: n, K: k, TA: tA, TB: tB, Bias: bias.Buf != nil})
	return r.Device.MatMul(S, tA, tB, m, n, k, a, b, c, bias)
}

func (r *Recorder) Linear(S, m, n, k int, x, w, bias, res, out, deriv kernels.Tensor) error {
	r.add(Call{Kernel: "Linear", S: S, M: m, N: n, K: k, Bias: bias.Buf != nil, Res: res.Buf != nil, Deriv: deriv.Buf != nil})
	return r.Device.Linear(S, m, n, k, x, w, bias, res, out, deriv)
}

// The Recorder offers every fused kernel (the device's, or
// kernels.Separately on a device without it, the same bits), so that a
// Net on it runs the GL device's fused step on any device.

// WeightGrad implements kernels.WeightGrader, recorded as one call.
func (r *Recorder) WeightGrad(S, m, n, k int, x, dy, dW, db kernels.Tensor) error {
	r.add(Call{Kernel: "WeightGrad", S: S, M: m, N: n, K: k, TA: true})
	return kernels.Fused[kernels.WeightGrader](r.Device).WeightGrad(S, m, n, k, x, dy, dW, db)
}

// ColDotSum implements kernels.ColDotSummer as WeightGrad does.
func (r *Recorder) ColDotSum(S, rows, d int, a, b, dot, sum kernels.Tensor) error {
	r.add(Call{Kernel: "ColDotSum", S: S, Rows: rows, D: d})
	return kernels.Fused[kernels.ColDotSummer](r.Device).ColDotSum(S, rows, d, a, b, dot, sum)
}

// MatMulThen implements kernels.ProductEpiloguer as WeightGrad does.
func (r *Recorder) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c kernels.Tensor, e kernels.Epilogue, x, out kernels.Tensor) error {
	r.add(Call{Kernel: "MatMulThen", S: S, M: m, N: n, K: k, TA: tA, TB: tB, Bias: bias.Buf != nil, Epilogue: e, Keep: c.Buf != nil})
	return kernels.Fused[kernels.ProductEpiloguer](r.Device).MatMulThen(S, tA, tB, m, n, k, a, b, bias, c, e, x, out)
}

// LayerNormGrad implements kernels.LayerNormGrader as WeightGrad does.
func (r *Recorder) LayerNormGrad(S, rows, d int, gamma, dy, xh, inv, res, dx, dgamma, dbeta kernels.Tensor) error {
	r.add(Call{Kernel: "LayerNormGrad", S: S, Rows: rows, D: d, Res: res.Buf != nil})
	return kernels.Fused[kernels.LayerNormGrader](r.Device).LayerNormGrad(S, rows, d, gamma, dy, xh, inv, res, dx, dgamma, dbeta)
}

// EmbedAdd implements kernels.EmbedAdder as WeightGrad does.
func (r *Recorder) EmbedAdd(S, rows, d int, ids, table, ids2, table2, out kernels.Tensor) error {
	r.add(Call{Kernel: "EmbedAdd", S: S, Rows: rows, D: d})
	return kernels.Fused[kernels.EmbedAdder](r.Device).EmbedAdd(S, rows, d, ids, table, ids2, table2, out)
}

// Attends implements kernels.Attender: the device's answer, or on a
// device without fused attention the GL device's (GLAttends).
func (r *Recorder) Attends(s kernels.Shape) bool {
	if a, ok := r.Device.(kernels.Attender); ok {
		return a.Attends(s)
	}
	return GLAttends(s)
}

// GLAttends is the GL device's kernels.Attender.Attends, as
// backend/gl/ops.go has it: a head whose blocks (P and dS, Q, K, V and
// dO, rows padded by a float, a rowsum per query and three flags) fit
// the 6,144 floats of its attention kernels' shared memory.
func GLAttends(s kernels.Shape) bool {
	if s.Validate() != nil {
		return false
	}
	T, Dh := int64(s.T), int64(s.Dh)
	return 4*T*(Dh+1)+2*T*(T+1)+T+3 <= 6144
}

// Attend implements kernels.Attender as WeightGrad does.
func (r *Recorder) Attend(S int, s kernels.Shape, q, k, v, g, p, o, og kernels.Tensor) error {
	r.add(Call{Kernel: "Attend", S: S, Shape: s, Keep: o.Buf != nil, Gated: og.Buf != nil})
	return kernels.Fused[kernels.Attender](r.Device).Attend(S, s, q, k, v, g, p, o, og)
}

// AttendGrad implements kernels.Attender as WeightGrad does.
func (r *Recorder) AttendGrad(S int, s kernels.Shape, p, dO, q, k, v, dQ, dK, dV kernels.Tensor) error {
	r.add(Call{Kernel: "AttendGrad", S: S, Shape: s})
	return kernels.Fused[kernels.Attender](r.Device).AttendGrad(S, s, p, dO, q, k, v, dQ, dK, dV)
}

var _ interface {
	kernels.WeightGrader
	kernels.ColDotSummer
	kernels.ProductEpiloguer
	kernels.LayerNormGrader
	kernels.EmbedAdder
	kernels.Attender
} = (*Recorder)(nil)

func (r *Recorder) ColSum(S, rows, d int, x, out kernels.Tensor) error {
	r.add(Call{Kernel: "ColSum", S: S, Rows: rows, D: d})
	return r.Device.ColSum(S, rows, d, x, out)
}

func (r *Recorder) ColDot(S, rows, d int, a, b, out kernels.Tensor) error {
	r.add(Call{Kernel: "ColDot", S: S, Rows: rows, D: d})
	return r.Device.ColDot(S, rows, d, a, b, out)
}

func (r *Recorder) LayerNorm(S, rows, d int, x, gamma, beta, out, xh, inv kernels.Tensor) error {
	r.add(Call{Kernel: "LayerNorm", S: S, Rows: rows, D: d})
	return r.Device.LayerNorm(S, rows, d, x, gamma, beta, out, xh, inv)
}

func (r *Recorder) LayerNormGradX(S, rows, d int, gamma, dy, xh, inv, out kernels.Tensor) error {
	r.add(Call{Kernel: "LayerNormGradX", S: S, Rows: rows, D: d})
	return r.Device.LayerNormGradX(S, rows, d, gamma, dy, xh, inv, out)
}

func (r *Recorder) GELU(S, n int, x, out, deriv kernels.Tensor) error {
	r.add(Call{Kernel: "GELU", S: S, Len: n})
	return r.Device.GELU(S, n, x, out, deriv)
}

func (r *Recorder) Mul(S, n int, a, b, out kernels.Tensor) error {
	r.add(Call{Kernel: "Mul", S: S, Len: n})
	return r.Device.Mul(S, n, a, b, out)
}

func (r *Recorder) Add(S, n int, a, b, out kernels.Tensor) error {
	r.add(Call{Kernel: "Add", S: S, Len: n})
	return r.Device.Add(S, n, a, b, out)
}

func (r *Recorder) ColScale(S, rows, d int, x, g, out kernels.Tensor) error {
	r.add(Call{Kernel: "ColScale", S: S, Rows: rows, D: d})
	return r.Device.ColScale(S, rows, d, x, g, out)
}

func (r *Recorder) Embed(S, rows, d int, ids, table, out kernels.Tensor) error {
	r.add(Call{Kernel: "Embed", S: S, Rows: rows, D: d, V: table.Len / max(d, 1), SharedIDs: ids.Stride == 0})
	return r.Device.Embed(S, rows, d, ids, table, out)
}

func (r *Recorder) EmbedGrad(S, rows, d, n int, ids, dy, out kernels.Tensor) error {
	r.add(Call{Kernel: "EmbedGrad", S: S, Rows: rows, D: d, V: n, SharedIDs: ids.Stride == 0})
	return r.Device.EmbedGrad(S, rows, d, n, ids, dy, out)
}

func (r *Recorder) attn(name string, S int, s kernels.Shape) {
	r.add(Call{Kernel: name, S: S, Shape: s})
}

func (r *Recorder) Probs(S int, s kernels.Shape, q, k, p kernels.Tensor) error {
	r.attn("Probs", S, s)
	return r.Device.Probs(S, s, q, k, p)
}

func (r *Recorder) Mix(S int, s kernels.Shape, p, v, o kernels.Tensor) error {
	r.attn("Mix", S, s)
	return r.Device.Mix(S, s, p, v, o)
}

func (r *Recorder) MixGradP(S int, s kernels.Shape, dO, v, dP kernels.Tensor) error {
	r.attn("MixGradP", S, s)
	return r.Device.MixGradP(S, s, dO, v, dP)
}

func (r *Recorder) MixGradV(S int, s kernels.Shape, p, dO, dV kernels.Tensor) error {
	r.attn("MixGradV", S, s)
	return r.Device.MixGradV(S, s, p, dO, dV)
}

func (r *Recorder) ProbsGradQ(S int, s kernels.Shape, p, dP, k, dQ kernels.Tensor) error {
	r.attn("ProbsGradQ", S, s)
	return r.Device.ProbsGradQ(S, s, p, dP, k, dQ)
}

func (r *Recorder) ProbsGradK(S int, s kernels.Shape, p, dP, q, dK kernels.Tensor) error {
	r.attn("ProbsGradK", S, s)
	return r.Device.ProbsGradK(S, s, p, dP, q, dK)
}

func (r *Recorder) SoftmaxXent(S, rows, v int, logits, targets, probs, loss kernels.Tensor) error {
	r.add(Call{Kernel: "SoftmaxXent", S: S, Rows: rows, V: v})
	return r.Device.SoftmaxXent(S, rows, v, logits, targets, probs, loss)
}

func (r *Recorder) SoftmaxXentGrad(S, rows, v int, targets, probs, up, out kernels.Tensor) error {
	r.add(Call{Kernel: "SoftmaxXentGrad", S: S, Rows: rows, V: v})
	return r.Device.SoftmaxXentGrad(S, rows, v, targets, probs, up, out)
}

func (r *Recorder) CountCorrect(S, rows, v int, logits, targets, out kernels.Tensor) error {
	r.add(Call{Kernel: "CountCorrect", S: S, Rows: rows, V: v})
	return r.Device.CountCorrect(S, rows, v, logits, targets, out)
}

func (r *Recorder) Adam(S, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, c1, c2 float32) error {
	r.add(Call{Kernel: "Adam", S: S, Len: n})
	return r.Device.Adam(S, n, w, g, m, v, negLR, decay, failed, c1, c2)
}

func (r *Recorder) MarkDiverged(S int, loss, failed kernels.Tensor, step int) error {
	r.add(Call{Kernel: "MarkDiverged", S: S})
	return r.Device.MarkDiverged(S, loss, failed, step)
}

// StepCalls records the kernel calls of one training step of a model of c
// as the GL device runs it (a group of one on the CPU device through a
// Recorder, which offers the fused kernels as the GL device does: the
// calls, their order and their sizes are the same for every group size).
func StepCalls(c train.Config) ([]Call, error) {
	r := &Recorder{Device: cpu.New()}
	c.Steps = 2
	g, err := train.NewGroup([]train.Config{c}, r)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	r.Record(true)
	if err := g.TrainStep(); err != nil {
		return nil, err
	}
	return r.Take(), nil
}

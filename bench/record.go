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
// while on, records each kernel call in order, as the cost model
// (costModel) describes it. It implements every method itself, none
// embedded, so that a kernel it does not record is a compile error. It
// fuses as the GL device does, whatever Device is (a device whose fused
// kernels are Separately runs them one by one, the same bits), so that a
// Net on it makes the GL device's calls on any device.
type Recorder struct {
	Device kernels.Device
	mu     sync.Mutex
	on     bool
	calls  []Call
}

var _ kernels.Device = (*Recorder)(nil)

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

// run records the call that kernel makes, as the cost model describes it,
// and makes it on Device.
func (r *Recorder) run(kernel func(dev kernels.Kernels) error) error {
	var c Call
	if err := kernel(costModel{&c}); err != nil {
		return err
	}
	r.mu.Lock()
	if r.on {
		r.calls = append(r.calls, c)
	}
	r.mu.Unlock()
	return kernel(r.Device)
}

// Memory passes through, unrecorded.

func (r *Recorder) Name() string                        { return r.Device.Name() }
func (r *Recorder) Alloc(n int) (kernels.Buffer, error) { return r.Device.Alloc(n) }
func (r *Recorder) Free(b kernels.Buffer)               { r.Device.Free(b) }
func (r *Recorder) Upload(dst kernels.Tensor, seeds int, src []float32) error {
	return r.Device.Upload(dst, seeds, src)
}
func (r *Recorder) Download(dst []float32, src kernels.Tensor, seeds int) error {
	return r.Device.Download(dst, src, seeds)
}
func (r *Recorder) Sync() error          { return r.Device.Sync() }
func (r *Recorder) Stats() kernels.Stats { return r.Device.Stats() }
func (r *Recorder) Close() error         { return r.Device.Close() }

// Fuses implements kernels.Fused: as the GL device.
func (r *Recorder) Fuses() bool { return true }

// Attends implements kernels.Fused: the device's answer where it fuses,
// else the GL device's (GLAttends).
func (r *Recorder) Attends(s kernels.Shape) bool {
	if r.Device.Fuses() {
		return r.Device.Attends(s)
	}
	return GLAttends(s)
}

// GLAttends is the GL device's kernels.Fused.Attends, as
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

func (r *Recorder) MatMul(S int, tA, tB bool, m, n, k int, a, b, c, bias kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.MatMul(S, tA, tB, m, n, k, a, b, c, bias) })
}

func (r *Recorder) Linear(S, m, n, k int, x, w, bias, res, out, deriv kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Linear(S, m, n, k, x, w, bias, res, out, deriv) })
}

func (r *Recorder) WeightGrad(S, m, n, k int, x, dy, dW, db kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.WeightGrad(S, m, n, k, x, dy, dW, db) })
}

func (r *Recorder) ColDotSum(S, rows, d int, a, b, dot, sum kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.ColDotSum(S, rows, d, a, b, dot, sum) })
}

func (r *Recorder) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c kernels.Tensor, e kernels.Epilogue, x, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.MatMulThen(S, tA, tB, m, n, k, a, b, bias, c, e, x, out) })
}

func (r *Recorder) LayerNormGrad(S, rows, d int, gamma, dy, xh, inv, res, dx, dgamma, dbeta kernels.Tensor) error {
	return r.run(func(k kernels.Kernels) error {
		return k.LayerNormGrad(S, rows, d, gamma, dy, xh, inv, res, dx, dgamma, dbeta)
	})
}

func (r *Recorder) EmbedAdd(S, rows, d int, ids, table, ids2, table2, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.EmbedAdd(S, rows, d, ids, table, ids2, table2, out) })
}

func (r *Recorder) Attend(S int, s kernels.Shape, q, k, v, g, p, o, og kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Attend(S, s, q, k, v, g, p, o, og) })
}

func (r *Recorder) AttendGrad(S int, s kernels.Shape, p, dO, q, k, v, dQ, dK, dV kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.AttendGrad(S, s, p, dO, q, k, v, dQ, dK, dV) })
}

func (r *Recorder) ColSum(S, rows, d int, x, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.ColSum(S, rows, d, x, out) })
}

func (r *Recorder) ColDot(S, rows, d int, a, b, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.ColDot(S, rows, d, a, b, out) })
}

func (r *Recorder) LayerNorm(S, rows, d int, x, gamma, beta, out, xh, inv kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.LayerNorm(S, rows, d, x, gamma, beta, out, xh, inv) })
}

func (r *Recorder) LayerNormGradX(S, rows, d int, gamma, dy, xh, inv, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.LayerNormGradX(S, rows, d, gamma, dy, xh, inv, out) })
}

func (r *Recorder) GELU(S, n int, x, out, deriv kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.GELU(S, n, x, out, deriv) })
}

func (r *Recorder) Mul(S, n int, a, b, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Mul(S, n, a, b, out) })
}

func (r *Recorder) Add(S, n int, a, b, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Add(S, n, a, b, out) })
}

func (r *Recorder) ColScale(S, rows, d int, x, g, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.ColScale(S, rows, d, x, g, out) })
}

func (r *Recorder) Embed(S, rows, d int, ids, table, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Embed(S, rows, d, ids, table, out) })
}

func (r *Recorder) EmbedGrad(S, rows, d, n int, ids, dy, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.EmbedGrad(S, rows, d, n, ids, dy, out) })
}

func (r *Recorder) Probs(S int, s kernels.Shape, q, k, p kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Probs(S, s, q, k, p) })
}

func (r *Recorder) Mix(S int, s kernels.Shape, p, v, o kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Mix(S, s, p, v, o) })
}

func (r *Recorder) MixGradP(S int, s kernels.Shape, dO, v, dP kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.MixGradP(S, s, dO, v, dP) })
}

func (r *Recorder) MixGradV(S int, s kernels.Shape, p, dO, dV kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.MixGradV(S, s, p, dO, dV) })
}

func (r *Recorder) ProbsGradQ(S int, s kernels.Shape, p, dP, k, dQ kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.ProbsGradQ(S, s, p, dP, k, dQ) })
}

func (r *Recorder) ProbsGradK(S int, s kernels.Shape, p, dP, q, dK kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.ProbsGradK(S, s, p, dP, q, dK) })
}

func (r *Recorder) SoftmaxXent(S, rows, v int, logits, targets, probs, loss kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.SoftmaxXent(S, rows, v, logits, targets, probs, loss) })
}

func (r *Recorder) SoftmaxXentGrad(S, rows, v int, targets, probs, up, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.SoftmaxXentGrad(S, rows, v, targets, probs, up, out) })
}

func (r *Recorder) CountCorrect(S, rows, v int, logits, targets, out kernels.Tensor) error {
	return r.run(func(dev kernels.Kernels) error { return dev.CountCorrect(S, rows, v, logits, targets, out) })
}

func (r *Recorder) Adam(S, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, c1, c2 float32) error {
	return r.run(func(dev kernels.Kernels) error { return dev.Adam(S, n, w, g, m, v, negLR, decay, failed, c1, c2) })
}

func (r *Recorder) MarkDiverged(S int, loss, failed kernels.Tensor, step int) error {
	return r.run(func(dev kernels.Kernels) error { return dev.MarkDiverged(S, loss, failed, step) })
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

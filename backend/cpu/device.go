package cpu

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"headlab/internal/simd"
	"headlab/kernels"
)

// Device implements kernels.Device on host memory: a Buffer is a slice,
// Upload and Download are copies, and every kernel runs at once on the
// calling goroutine, one seed after another, each seed exactly as a lone
// model runs. A Device holds no state but its counters, so several
// goroutines may use one Device at once, each on its own tensors. A
// group's device (Group) is the exception: it queues kernels and belongs
// to one goroutine. Its fused kernels are its others run one by one
// (kernels.Separately), so the executor calls those itself.
type Device struct {
	kernels.Separately
	dispatches, uploaded, readBack atomic.Int64

	// parent is the device a group's device counts on; q holds its
	// queued kernels (group.go). Both nil on a device from New.
	parent *Device
	q      *queue
}

var _ interface {
	kernels.Device
	kernels.Host
} = (*Device)(nil)

// New returns a CPU device.
func New() *Device { return withFused(&Device{}) }

// withFused gives d its fused kernels: its own run one by one.
func withFused(d *Device) *Device {
	d.Separately.Device = d
	return d
}

// Name implements kernels.Device.
func (*Device) Name() string { return "cpu" }

// Buffer is the CPU device's storage.
type Buffer struct {
	data []float32
	dev  *Device // whose queued kernels Data runs first; nil for Wrap
}

// Len implements kernels.Buffer.
func (b *Buffer) Len() int { return len(b.data) }

// Data is the buffer's storage: the CPU device's tensors can be read and
// written in place, which the graph's own tests use. Kernels a group's
// device has queued run first (an error among them is returned by its
// next Sync or Download).
func (b *Buffer) Data() []float32 {
	if b.dev != nil {
		b.dev.flushKeep()
	}
	return b.data
}

// Wrap makes data a buffer, shared, not copied: a tensor over host memory
// for code that computes on the CPU device without uploading.
func Wrap(data []float32) kernels.Tensor {
	return kernels.Dense(&Buffer{data: data}, len(data))
}

// Alloc implements kernels.Device.
func (d *Device) Alloc(n int) (kernels.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cpu: buffer of %d floats", n)
	}
	return &Buffer{data: make([]float32, n), dev: d}, nil
}

// Free implements kernels.Device: the garbage collector frees buffers.
func (*Device) Free(kernels.Buffer) {}

// Sync implements kernels.Device: kernels have finished when they return
// (a group's device runs its queue).
func (d *Device) Sync() error { return d.flush() }

// Close implements kernels.Device.
func (d *Device) Close() error { return d.flush() }

// Stats implements kernels.Device.
func (d *Device) Stats() kernels.Stats {
	c := d.counts()
	return kernels.Stats{Dispatches: c.dispatches.Load(), Uploaded: c.uploaded.Load(), ReadBack: c.readBack.Load()}
}

// counts is the device whose counters d's calls add to.
func (d *Device) counts() *Device {
	if d.parent != nil {
		return d.parent
	}
	return d
}

// temp is per-call scratch, pooled so that a step allocates nothing.
type temp struct {
	gemm simd.Scratch
	xent []float32 // SoftmaxXent's answer rows, their shifted target logits and row sums
	x    [][]float32
}

var temps = sync.Pool{New: func() any { return new(temp) }}

// seed returns seed s's array of t.
func seed(t kernels.Tensor, s int) []float32 {
	b := t.Off + s*t.Stride
	return t.Buf.(*Buffer).data[b : b+t.Len]
}

// window returns the arrays of w's seeds of a contiguous tensor as one
// slice.
func window(t kernels.Tensor, w seeds) []float32 {
	return t.Buf.(*Buffer).data[t.Off+w.lo*t.Len : t.Off+w.hi*t.Len]
}

// launch validates a kernel's tensors and their per-seed lengths (want,
// pairwise) and counts the call.
func (d *Device) launch(S int, ts []kernels.Tensor, want ...int) error {
	for _, t := range ts {
		if _, ok := t.Buf.(*Buffer); !ok && t.Buf != nil {
			return fmt.Errorf("cpu: a tensor of another device (%T)", t.Buf)
		}
	}
	if err := kernels.Check(S, ts, want); err != nil {
		return err
	}
	d.counts().dispatches.Add(1)
	return nil
}

// Upload implements kernels.Device.
func (d *Device) Upload(dst kernels.Tensor, seeds int, src []float32) error {
	if err := d.launch(seeds, []kernels.Tensor{dst}, 0); err != nil {
		return err
	}
	if len(src) != seeds*dst.Len {
		return fmt.Errorf("cpu: upload of %d floats into %d seeds of %d", len(src), seeds, dst.Len)
	}
	if err := d.flush(); err != nil {
		return err
	}
	for s := 0; s < seeds; s++ {
		copy(seed(dst, s), src[s*dst.Len:])
	}
	d.counts().dispatches.Add(-1)
	d.counts().uploaded.Add(4 * int64(len(src)))
	return nil
}

// Download implements kernels.Device.
func (d *Device) Download(dst []float32, src kernels.Tensor, seeds int) error {
	if err := d.launch(seeds, []kernels.Tensor{src}, 0); err != nil {
		return err
	}
	if len(dst) != seeds*src.Len {
		return fmt.Errorf("cpu: download of %d seeds of %d into %d floats", seeds, src.Len, len(dst))
	}
	if err := d.flush(); err != nil {
		return err
	}
	for s := 0; s < seeds; s++ {
		copy(dst[s*src.Len:], seed(src, s))
	}
	d.counts().dispatches.Add(-1)
	d.counts().readBack.Add(4 * int64(len(dst)))
	return nil
}

// MatMul implements kernels.Device on simd.Sgemm.
func (d *Device) MatMul(S int, tA, tB bool, m, n, k int, a, b, c, bias kernels.Tensor) error {
	ts, want, args := [4]kernels.Tensor{a, b, c, bias}, [4]int{m * k, k * n, m * n, n}, 3
	if bias.Buf != nil {
		args = 4
	}
	if err := d.launch(S, ts[:args], want[:args]...); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { matmul(w, tA, tB, m, n, k, a, b, c, bias); return nil })
	}
	matmul(every(S), tA, tB, m, n, k, a, b, c, bias)
	return nil
}

func matmul(w seeds, tA, tB bool, m, n, k int, a, b, c, bias kernels.Tensor) {
	sc := temps.Get().(*temp)
	defer temps.Put(sc)
	for s := w.lo; s < w.hi; s++ {
		var bs []float32
		if bias.Buf != nil {
			bs = seed(bias, s)
		}
		simd.Sgemm(tA, tB, m, n, k, seed(a, s), seed(b, s), seed(c, s), bs, &sc.gemm)
	}
}

// Linear implements kernels.Device: MatMul, then GELU and Add on its
// result in place, so the bits are those of the three kernels run apart.
func (d *Device) Linear(S, m, n, k int, x, w, bias, res, out, deriv kernels.Tensor) error {
	ts, want, args := [6]kernels.Tensor{x, w, out}, [6]int{m * k, k * n, m * n}, 3
	for i, t := range [3]kernels.Tensor{bias, res, deriv} {
		if t.Buf != nil {
			ts[args], want[args] = t, [3]int{n, m * n, m * n}[i]
			args++
		}
	}
	if err := d.launch(S, ts[:args], want[:args]...); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(ss seeds) error { linear(ss, m, n, k, x, w, bias, res, out, deriv); return nil })
	}
	linear(every(S), m, n, k, x, w, bias, res, out, deriv)
	return nil
}

func linear(ss seeds, m, n, k int, x, w, bias, res, out, deriv kernels.Tensor) {
	matmul(ss, false, false, m, n, k, x, w, out, bias)
	if deriv.Buf != nil {
		gelu(ss, m*n, out, out, deriv)
	}
	if res.Buf != nil {
		add(ss, m*n, res, out, out)
	}
}

// ColSum implements kernels.Device on simd.ColSum: the rows added in
// order, the bits of the product ones[1, rows] x.
func (d *Device) ColSum(S, rows, n int, x, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{x, out}, rows*n, n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { colSum(w, rows, n, x, out); return nil })
	}
	colSum(every(S), rows, n, x, out)
	return nil
}

func colSum(w seeds, rows, n int, x, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.ColSum(seed(out, s)[:n], seed(x, s), rows)
	}
}

// ColDot implements kernels.Device on simd.ColDot: rows added in order,
// each product rounded first.
func (d *Device) ColDot(S, rows, n int, a, b, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{a, b, out}, rows*n, rows*n, n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { colDot(w, rows, n, a, b, out); return nil })
	}
	colDot(every(S), rows, n, a, b, out)
	return nil
}

func colDot(w seeds, rows, n int, a, b, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.ColDot(seed(out, s)[:n], seed(a, s), seed(b, s), rows)
	}
}

// LayerNorm implements kernels.Device on simd.LayerNorm (biased
// variance, eps inside the root).
func (d *Device) LayerNorm(S, rows, n int, x, gamma, beta, out, xh, inv kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{x, gamma, beta, out, xh, inv}, rows*n, n, n, rows*n, rows*n, rows); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { layerNorm(w, rows, n, x, gamma, beta, out, xh, inv); return nil })
	}
	layerNorm(every(S), rows, n, x, gamma, beta, out, xh, inv)
	return nil
}

func layerNorm(w seeds, rows, n int, x, gamma, beta, out, xh, inv kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.LayerNorm(seed(x, s), seed(gamma, s)[:n], seed(beta, s), seed(out, s), seed(xh, s), seed(inv, s)[:rows], kernels.LayerNormEps)
	}
}

// LayerNormGradX implements kernels.Device on simd.LayerNormGradX.
func (d *Device) LayerNormGradX(S, rows, n int, gamma, dy, xh, inv, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{gamma, dy, xh, inv, out}, n, rows*n, rows*n, rows, rows*n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { layerNormGradX(w, rows, n, gamma, dy, xh, inv, out); return nil })
	}
	layerNormGradX(every(S), rows, n, gamma, dy, xh, inv, out)
	return nil
}

func layerNormGradX(w seeds, rows, n int, gamma, dy, xh, inv, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.LayerNormGradX(seed(out, s), seed(gamma, s)[:n], seed(dy, s), seed(xh, s), seed(inv, s)[:rows])
	}
}

// GELU implements kernels.Device on simd.GELU (docs/model.md).
func (d *Device) GELU(S, n int, x, out, deriv kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{x, out, deriv}, n, n, n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { gelu(w, n, x, out, deriv); return nil })
	}
	gelu(every(S), n, x, out, deriv)
	return nil
}

func gelu(w seeds, n int, x, out, deriv kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.GELU(seed(x, s)[:n], seed(out, s), seed(deriv, s))
	}
}

// Mul implements kernels.Device.
func (d *Device) Mul(S, n int, a, b, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{a, b, out}, n, n, n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { mul(w, n, a, b, out); return nil })
	}
	mul(every(S), n, a, b, out)
	return nil
}

func mul(w seeds, n int, a, b, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.Mul(seed(out, s)[:n], seed(a, s), seed(b, s))
	}
}

// Add implements kernels.Device.
func (d *Device) Add(S, n int, a, b, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{a, b, out}, n, n, n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { add(w, n, a, b, out); return nil })
	}
	add(every(S), n, a, b, out)
	return nil
}

func add(w seeds, n int, a, b, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.Add(seed(out, s)[:n], seed(a, s), seed(b, s))
	}
}

// ColScale implements kernels.Device on simd.ColScale.
func (d *Device) ColScale(S, rows, n int, x, g, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{x, g, out}, rows*n, n, rows*n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { colScale(w, rows, n, x, g, out); return nil })
	}
	colScale(every(S), rows, n, x, g, out)
	return nil
}

func colScale(w seeds, rows, n int, x, g, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		simd.ColScale(seed(out, s), seed(x, s), seed(g, s)[:n], rows)
	}
}

// id reads a whole number stored as a float: -1 unless it is in 0..n-1
// (small enough to inline into the per-row loops; badID is the error).
func id(v float32, n int) int {
	i := int(v)
	if float32(i) != v || i < 0 || i >= n {
		return -1
	}
	return i
}

func badID(v float32, n int) error { return fmt.Errorf("cpu: index %v out of range 0..%d", v, n-1) }

// Embed implements kernels.Device. A copied row equals the one-hot
// product it replaces: that product adds exact zeros to one 1*w term.
func (d *Device) Embed(S, rows, n int, ids, table, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{ids, table, out}, rows, n, rows*n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { return embed(w, rows, n, ids, table, out) })
	}
	return embed(every(S), rows, n, ids, table, out)
}

func embed(w seeds, rows, n int, ids, table, out kernels.Tensor) error {
	for s := w.lo; s < w.hi; s++ {
		is, tb, o := seed(ids, s), seed(table, s), seed(out, s)
		vocab := len(tb) / n
		for r := 0; r < rows; r++ {
			v := id(is[r], vocab)
			if v < 0 {
				return badID(is[r], vocab)
			}
			copy(o[r*n:r*n+n], tb[v*n:v*n+n])
		}
	}
	return nil
}

// EmbedGrad implements kernels.Device: the rows are added in order, as
// the one-hot product's transpose adds them.
func (d *Device) EmbedGrad(S, rows, n, vocab int, ids, dy, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{ids, dy, out}, rows, rows*n, vocab*n); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { return embedGrad(w, rows, n, vocab, ids, dy, out) })
	}
	return embedGrad(every(S), rows, n, vocab, ids, dy, out)
}

func embedGrad(w seeds, rows, n, vocab int, ids, dy, out kernels.Tensor) error {
	for s := w.lo; s < w.hi; s++ {
		is, g, o := seed(ids, s), seed(dy, s), seed(out, s)[:vocab*n]
		clear(o)
		for r := 0; r < rows; r++ {
			v := id(is[r], vocab)
			if v < 0 {
				return badID(is[r], vocab)
			}
			or := o[v*n : v*n+n]
			simd.Add(or, or, g[r*n:r*n+n])
		}
	}
	return nil
}

// eachSeed runs an attention kernel over S seeds: once over all S*B
// sequences when every tensor is dense, else seed by seed. Either way
// each sequence is computed alone, so the bits are the same.
func (d *Device) eachSeed(S int, s kernels.Shape, ts []kernels.Tensor, want []int, f func(s kernels.Shape, x [][]float32) error) error {
	if err := d.launch(S, ts, want...); err != nil {
		return err
	}
	if d.queues(S) {
		ts, want := slices.Clone(ts), slices.Clone(want) // the callers' are reused
		return d.later(func(w seeds) error { return attention(w, s, ts, want, f) })
	}
	return attention(every(S), s, ts, want, f)
}

// attention runs f over the seeds of w, at once when every tensor is
// dense.
func attention(w seeds, s kernels.Shape, ts []kernels.Tensor, want []int, f func(s kernels.Shape, x [][]float32) error) error {
	sc := temps.Get().(*temp)
	defer temps.Put(sc)
	x := append(sc.x[:0], make([][]float32, len(ts))...)
	sc.x = x
	dense := true
	for i, t := range ts {
		dense = dense && t.Contiguous() && t.Len == want[i]
	}
	if dense {
		for i, t := range ts {
			x[i] = window(t, w)
		}
		s.B *= w.hi - w.lo
		return f(s, x)
	}
	for k := w.lo; k < w.hi; k++ {
		for i, t := range ts {
			x[i] = seed(t, k)[:want[i]]
		}
		if err := f(s, x); err != nil {
			return err
		}
	}
	return nil
}

// Probs implements kernels.Device.
func (d *Device) Probs(S int, s kernels.Shape, q, k, p kernels.Tensor) error {
	return d.eachSeed(S, s, []kernels.Tensor{q, k, p}, []int{s.QKVLen(), s.QKVLen(), s.ProbsLen()},
		func(s kernels.Shape, x [][]float32) error { return attn{}.Probs(s, x[0], x[1], x[2]) })
}

// Mix implements kernels.Device.
func (d *Device) Mix(S int, s kernels.Shape, p, v, o kernels.Tensor) error {
	return d.eachSeed(S, s, []kernels.Tensor{p, v, o}, []int{s.ProbsLen(), s.QKVLen(), s.QKVLen()},
		func(s kernels.Shape, x [][]float32) error { return attn{}.Mix(s, x[0], x[1], x[2]) })
}

// MixGradP implements kernels.Device.
func (d *Device) MixGradP(S int, s kernels.Shape, dO, v, dP kernels.Tensor) error {
	return d.eachSeed(S, s, []kernels.Tensor{dO, v, dP}, []int{s.QKVLen(), s.QKVLen(), s.ProbsLen()},
		func(s kernels.Shape, x [][]float32) error { return attn{}.MixGradP(s, x[0], x[1], x[2]) })
}

// MixGradV implements kernels.Device.
func (d *Device) MixGradV(S int, s kernels.Shape, p, dO, dV kernels.Tensor) error {
	return d.eachSeed(S, s, []kernels.Tensor{p, dO, dV}, []int{s.ProbsLen(), s.QKVLen(), s.QKVLen()},
		func(s kernels.Shape, x [][]float32) error { return attn{}.MixGradV(s, x[0], x[1], x[2]) })
}

// ProbsGradQ implements kernels.Device.
func (d *Device) ProbsGradQ(S int, s kernels.Shape, p, dP, k, dQ kernels.Tensor) error {
	return d.eachSeed(S, s, []kernels.Tensor{p, dP, k, dQ}, []int{s.ProbsLen(), s.ProbsLen(), s.QKVLen(), s.QKVLen()},
		func(s kernels.Shape, x [][]float32) error { return attn{}.ProbsGradQ(s, x[0], x[1], x[2], x[3]) })
}

// ProbsGradK implements kernels.Device.
func (d *Device) ProbsGradK(S int, s kernels.Shape, p, dP, q, dK kernels.Tensor) error {
	return d.eachSeed(S, s, []kernels.Tensor{p, dP, q, dK}, []int{s.ProbsLen(), s.ProbsLen(), s.QKVLen(), s.QKVLen()},
		func(s kernels.Shape, x [][]float32) error { return attn{}.ProbsGradK(s, x[0], x[1], x[2], x[3]) })
}

// answerWeight is 1/(answer rows) of one seed's targets, 0 when there are
// none.
func answerWeight(tg []float32) float32 {
	answers := 0
	for _, t := range tg {
		if t >= 0 {
			answers++
		}
	}
	if answers == 0 {
		return 0
	}
	return 1 / float32(answers)
}

// SoftmaxXent implements kernels.Device. A seed's answer rows are
// gathered into one block and take the attention softmax's row kernels
// (max subtracted, simd.Exp, serial row sums, division: vector kernels on
// avx512, avx2 and neon, their portable loops on go); the block holds
// x - max, so the target's log-probability is its shifted logit minus
// log(sum), the logarithm and the loss in float64.
func (d *Device) SoftmaxXent(S, rows, v int, logits, targets, probs, loss kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{logits, targets, probs, loss}, rows*v, rows, rows*v, 1); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { return softmaxXent(w, rows, v, logits, targets, probs, loss) })
	}
	return softmaxXent(every(S), rows, v, logits, targets, probs, loss)
}

func softmaxXent(w seeds, rows, v int, logits, targets, probs, loss kernels.Tensor) error {
	sc := temps.Get().(*temp)
	defer temps.Put(sc)
	if cap(sc.xent) < rows*v+2*rows {
		sc.xent = make([]float32, rows*v+2*rows)
	}
	for s := w.lo; s < w.hi; s++ {
		lg, tg, pr := seed(logits, s), seed(targets, s)[:rows], seed(probs, s)
		blk, shifted, sums := sc.xent[:0], sc.xent[rows*v:rows*v], sc.xent[rows*v+rows:]
		for r, t := range tg {
			if t < 0 {
				continue
			}
			if id(t, v) < 0 {
				return badID(t, v)
			}
			blk = append(blk, lg[r*v:r*v+v]...)
		}
		answers := len(blk) / v
		simd.ScaleSubMax(blk, v, false, 1)
		for _, t := range tg {
			if t >= 0 {
				a := len(shifted)
				shifted = append(shifted, blk[a*v+int(t)])
			}
		}
		simd.Exp(blk)
		simd.RowSums(blk, nil, v, false, sums[:answers])
		simd.DivRows(blk, v, false, sums[:answers])
		var l float64
		w := float64(answerWeight(tg))
		for a, z := range shifted {
			l -= w * (float64(z) - math.Log(float64(sums[a])))
		}
		a := 0
		for r, t := range tg {
			if t >= 0 {
				copy(pr[r*v:r*v+v], blk[a*v:a*v+v])
				a++
			}
		}
		seed(loss, s)[0] = float32(l)
	}
	return nil
}

// SoftmaxXentGrad implements kernels.Device.
func (d *Device) SoftmaxXentGrad(S, rows, v int, targets, probs, up, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{targets, probs, up, out}, rows, rows*v, 1, rows*v); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { softmaxXentGrad(w, rows, v, targets, probs, up, out); return nil })
	}
	softmaxXentGrad(every(S), rows, v, targets, probs, up, out)
	return nil
}

func softmaxXentGrad(ws seeds, rows, v int, targets, probs, up, out kernels.Tensor) {
	for s := ws.lo; s < ws.hi; s++ {
		tg, pr, o, u := seed(targets, s)[:rows], seed(probs, s), seed(out, s), seed(up, s)[0]
		w := answerWeight(tg)
		for r, t := range tg {
			or := o[r*v : r*v+v]
			if t < 0 {
				clear(or)
				continue
			}
			for j, p := range pr[r*v : r*v+v] {
				or[j] = u * float32(p*w)
			}
			or[int(t)] = u * (float32(pr[r*v+int(t)]*w) - w)
		}
	}
}

// CountCorrect implements kernels.Device.
func (d *Device) CountCorrect(S, rows, v int, logits, targets, out kernels.Tensor) error {
	if err := d.launch(S, []kernels.Tensor{logits, targets, out}, rows*v, rows, 1); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(w seeds) error { countCorrect(w, rows, v, logits, targets, out); return nil })
	}
	countCorrect(every(S), rows, v, logits, targets, out)
	return nil
}

func countCorrect(w seeds, rows, v int, logits, targets, out kernels.Tensor) {
	for s := w.lo; s < w.hi; s++ {
		lg, tg := seed(logits, s), seed(targets, s)[:rows]
		right := 0
		for r, t := range tg {
			if t < 0 {
				continue
			}
			row := lg[r*v : r*v+v]
			best := 0
			for j, x := range row {
				if x > row[best] {
					best = j
				}
			}
			if float32(best) == t {
				right++
			}
		}
		seed(out, s)[0] = float32(right)
	}
}

// Adam implements kernels.Device on simd.Adam: the arithmetic of
// Gorgonia's AdamSolver (v0.9.18, float32, no clipping), operation for
// operation and rounding for rounding, after AdamW's decoupled weight
// decay (docs/model.md).
func (d *Device) Adam(S, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, c1, c2 float32) error {
	if err := d.launch(S, []kernels.Tensor{w, g, m, v, negLR, decay, failed}, n, n, n, n, 1, 1, 1); err != nil {
		return err
	}
	b1, b2 := float32(kernels.AdamBeta1), float32(kernels.AdamBeta2)
	p := simd.AdamStep{B1: b1, B2: b2, OneMinusB1: 1 - b1, OneMinusB2: 1 - b2, Eps: kernels.AdamEps, C1: c1, C2: c2}
	if d.queues(S) {
		// Adam ends a step, which then runs seed by seed, each seed's
		// update reading its gradients while they are in the caches. Once
		// Adam returns, the weights are the step's for any handle of the
		// device to read, as before it was queued.
		_ = d.later(func(ss seeds) error { adam(ss, n, w, g, m, v, negLR, decay, failed, p); return nil })
		return d.flush()
	}
	adam(every(S), n, w, g, m, v, negLR, decay, failed, p)
	return nil
}

func adam(ss seeds, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, p simd.AdamStep) {
	for s := ss.lo; s < ss.hi; s++ {
		if seed(failed, s)[0] != 0 {
			continue
		}
		p.NegLR, p.Decay = seed(negLR, s)[0], seed(decay, s)[0]
		simd.Adam(seed(w, s)[:n], seed(g, s), seed(m, s), seed(v, s), &p)
	}
}

// MarkDiverged implements kernels.Device.
func (d *Device) MarkDiverged(S int, loss, failed kernels.Tensor, step int) error {
	if err := d.launch(S, []kernels.Tensor{loss, failed}, 1, 1); err != nil {
		return err
	}
	if d.queues(S) {
		return d.later(func(ss seeds) error { markDiverged(ss, loss, failed, step); return nil })
	}
	markDiverged(every(S), loss, failed, step)
	return nil
}

func markDiverged(ss seeds, loss, failed kernels.Tensor, step int) {
	for s := ss.lo; s < ss.hi; s++ {
		l, f := float64(seed(loss, s)[0]), seed(failed, s)
		if f[0] == 0 && (math.IsNaN(l) || math.IsInf(l, 0)) {
			f[0] = float32(step)
		}
	}
}

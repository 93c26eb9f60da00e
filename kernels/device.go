package kernels

import (
	"errors"
	"fmt"
)

// Buffer is storage on a device, made by Device.Alloc: a slice on the CPU,
// a shader storage buffer on GL. Its contents cross to the host only
// through Device.Upload and Device.Download.
type Buffer interface {
	// Len is the buffer's size in float32s.
	Len() int
}

// Tensor is a view of a Buffer that holds one array for each of S seeds
// (models trained in lockstep): seed s's Len elements start at
// Off + s*Stride. Activations are dense ([S][Len], Stride = Len); a
// parameter is a slice of the parameter block ([S][P], Stride = P); a
// constant that every seed shares has Stride 0.
type Tensor struct {
	Buf    Buffer
	Off    int
	Len    int
	Stride int
}

// Base is the offset of seed s's first element.
func (t Tensor) Base(s int) int { return t.Off + s*t.Stride }

// View is the n elements of each seed's array that start at off.
func (t Tensor) View(off, n int) Tensor {
	return Tensor{Buf: t.Buf, Off: t.Off + off, Len: n, Stride: t.Stride}
}

// Dense is n elements per seed for S seeds of b, one after another.
func Dense(b Buffer, n int) Tensor { return Tensor{Buf: b, Len: n, Stride: n} }

// Contiguous says whether the S seeds' arrays sit end to end, so that a
// kernel may treat S seeds of B sequences as S*B sequences.
func (t Tensor) Contiguous() bool { return t.Stride == t.Len }

// Fits reports a tensor whose S seeds do not fit in its buffer.
func (t Tensor) Fits(S int) error {
	if t.Buf == nil {
		return errors.New("kernels: tensor has no buffer")
	}
	if S <= 0 || t.Off < 0 || t.Len < 0 || t.Stride < 0 {
		return fmt.Errorf("kernels: tensor %d+%d*s of %d for %d seeds", t.Off, t.Stride, t.Len, S)
	}
	if end := t.Off + (S-1)*t.Stride + t.Len; end > t.Buf.Len() {
		return fmt.Errorf("kernels: %d seeds of %d floats (stride %d, offset %d) overrun a buffer of %d", S, t.Len, t.Stride, t.Off, t.Buf.Len())
	}
	return nil
}

// Check validates the tensors of one kernel call for S seeds: each fits
// its buffer and is at least as long as the call needs (want[i]).
func Check(S int, ts []Tensor, want []int) error {
	for i, t := range ts {
		if err := t.Fits(S); err != nil {
			return err
		}
		if t.Len < want[i] {
			return fmt.Errorf("kernels: argument %d holds %d floats per seed, the kernel needs %d", i, t.Len, want[i])
		}
	}
	return nil
}

// Stats counts a device's traffic since it was made.
type Stats struct {
	// Dispatches are kernel launches (on the CPU, kernel calls).
	Dispatches int64
	// Uploaded and ReadBack are bytes sent to and read from the device.
	Uploaded, ReadBack int64
}

// Device is a device's memory and its kernels: every kernel of a
// training step on tensors that live on it. Nothing crosses between host
// and device except Upload and Download.
//
// The arithmetic of each kernel is given on the CPU device
// (backend/cpu) and in docs/model.md; other devices agree to the
// tolerances stated there.
type Device interface {
	Memory
	Kernels
}

// Memory is a device's storage: buffers, the copies between host and
// device, and what waits for them. A Device is used from one goroutine at
// a time unless it says otherwise.
type Memory interface {
	// Name is the device's name ("cpu", "gl").
	Name() string
	// Alloc returns a zeroed buffer of n floats.
	Alloc(n int) (Buffer, error)
	// Free releases a buffer from Alloc.
	Free(Buffer)
	// Upload copies src, seeds arrays of dst.Len one after another, into
	// the first seeds seeds of dst.
	Upload(dst Tensor, seeds int, src []float32) error
	// Download copies the first seeds seeds of src into dst, one after
	// another.
	Download(dst []float32, src Tensor, seeds int) error
	// Sync waits for queued kernels and returns their first error.
	Sync() error
	// Stats returns the traffic counters.
	Stats() Stats
	Close() error
}

// Kernels is every kernel a device runs, the fused ones (fused.go)
// included: adding one is a method here, and the compiler then finds
// every device that lacks it, bench's recorder and cost model included
// (docs/architecture.md, "Adding a kernel").
//
// Every kernel takes S, the number of seeds, and computes each seed's
// result from that seed's inputs alone, in an order that does not depend
// on S: seed s's bits are the same whether it runs alone or in a group
// (batch invariance). Kernels overwrite their outputs completely. Shapes
// (rows, columns) are per seed. Kernels may run asynchronously; an error
// is returned by the call or, at the latest, by the next Download or
// Sync.
type Kernels interface {
	Fused

	// MatMul: c = op(a) op(b) + bias on every row, op(a) m x k (a stored
	// k x m when tA), op(b) k x n (b stored n x k when tB), row-major;
	// bias (n) may have a nil Buf. Each element starts at its bias (or 0)
	// and adds a(i,p) b(p,j) for p = 0..k-1 in turn.
	MatMul(S int, tA, tB bool, m, n, k int, a, b, c, bias Tensor) error
	// Linear: MatMul without transposes and its epilogue in one kernel:
	// y = x w + bias (x m x k, w k x n); with deriv set, y = GELU(y) and
	// deriv = GELU'(y) as GELU computes them; with res set, out = res + y
	// as Add adds, else out = y. bias, res and deriv may have nil Bufs.
	// The executor uses it where the graph's nodes show a product whose
	// only reader is a GELU or a residual add (docs/model.md).
	Linear(S, m, n, k int, x, w, bias, res, out, deriv Tensor) error
	// ColSum: out[j] = sum over rows r, in order from 0, of x[r, j].
	ColSum(S, rows, d int, x, out Tensor) error
	// ColDot: out[j] = sum over rows r, in order, of a[r, j]*b[r, j].
	ColDot(S, rows, d int, a, b, out Tensor) error
	// LayerNorm: out = xh*gamma + beta per row, xh = (x - mean)*inv,
	// inv = 1/sqrt(var + LayerNormEps); xh (rows x d) and inv (rows) are kept for
	// LayerNormGradX.
	LayerNorm(S, rows, d int, x, gamma, beta, out, xh, inv Tensor) error
	// LayerNormGradX: with g = dy*gamma,
	// out = inv * (g - mean(g) - xh*mean(g*xh)) per row.
	LayerNormGradX(S, rows, d int, gamma, dy, xh, inv, out Tensor) error
	// GELU: out = x Phi(x), deriv = Phi(x) + x phi(x), elementwise.
	GELU(S, n int, x, out, deriv Tensor) error
	// Mul: out = a*b elementwise.
	Mul(S, n int, a, b, out Tensor) error
	// Add: out = a + b elementwise.
	Add(S, n int, a, b, out Tensor) error
	// ColScale: out[r, j] = x[r, j]*g[j] (the head gates).
	ColScale(S, rows, d int, x, g, out Tensor) error
	// Embed: out[r] = table[ids[r]], rows of d; ids hold whole numbers.
	Embed(S, rows, d int, ids, table, out Tensor) error
	// EmbedGrad: out[v] = sum over rows r with ids[r] = v, in row order
	// from 0, of dy[r]; out has n rows of d.
	EmbedGrad(S, rows, d, n int, ids, dy, out Tensor) error

	// The attention kernels, for each seed's s.B sequences (layout in
	// kernels.go; scale = 1/sqrt(Dh)):
	//
	//	Probs:      P  = softmax_j(scale * Q K^T), masked cells exactly 0
	//	Mix:        O  = P V
	//	MixGradP:   dP = dO V^T, masked cells 0
	//	MixGradV:   dV = P^T dO
	//	ProbsGradQ: dQ = scale * dS K,   dS = P * (dP - rowsum(P * dP))
	//	ProbsGradK: dK = scale * dS^T Q
	Probs(S int, s Shape, q, k, p Tensor) error
	Mix(S int, s Shape, p, v, o Tensor) error
	MixGradP(S int, s Shape, dO, v, dP Tensor) error
	MixGradV(S int, s Shape, p, dO, dV Tensor) error
	ProbsGradQ(S int, s Shape, p, dP, k, dQ Tensor) error
	ProbsGradK(S int, s Shape, p, dP, q, dK Tensor) error

	// SoftmaxXent: the loss of each seed (loss, 1 float) is
	// -sum over answer rows of w * log softmax(logits row)[target], with
	// targets one float per row (the target id, negative where the row is
	// not an answer) and w = 1/(number of answer rows). probs (rows x v)
	// receives each answer row's softmax; other rows are left as they are.
	SoftmaxXent(S, rows, v int, logits, targets, probs, loss Tensor) error
	// SoftmaxXentGrad: out[r, j] = up * (probs[r, j]*w - w*[j = target])
	// on answer rows, 0 elsewhere; up is 1 float per seed.
	SoftmaxXentGrad(S, rows, v int, targets, probs, up, out Tensor) error
	// CountCorrect: out (1 float) = the number of answer rows whose
	// logits' argmax (ties to the smaller id) is the target.
	CountCorrect(S, rows, v int, logits, targets, out Tensor) error

	// Adam takes one step (docs/model.md) on n parameters w with
	// gradients g and moments m, v, for every seed whose failed (1 float)
	// is 0. negLR (1 float) is minus the seed's learning rate; decay (1
	// float) is its decoupled weight decay's factor 1 - lr*wd, which
	// multiplies w before the update (1: no decay, Gorgonia's bits); c1
	// and c2 are 1/(1-beta1^t) and 1/(1-beta2^t) rounded to float32.
	Adam(S, n int, w, g, m, v, negLR, decay, failed Tensor, c1, c2 float32) error
	// MarkDiverged sets failed (1 float) to step where it is 0 and loss
	// (1 float) is not finite.
	MarkDiverged(S int, loss, failed Tensor, step int) error
}

// Adam's constants (docs/model.md): the moments' decay rates and the
// epsilon added to the root of the second moment.
const (
	AdamBeta1 = 0.9
	AdamBeta2 = 0.999
	AdamEps   = 1e-8
)

// LayerNormEps is the epsilon added to the variance in every LayerNorm.
const LayerNormEps = 1e-5

// Arena allocates the tensors of S models on a device and frees them
// together: the executor's, a Net's and the optimiser's.
type Arena struct {
	Dev  Device
	S    int
	bufs []Buffer
}

// Dense allocates n zeroed floats for each of the S models.
func (a *Arena) Dense(n int) (Tensor, error) {
	b, err := a.Dev.Alloc(a.S * n)
	if err != nil {
		return Tensor{}, err
	}
	a.bufs = append(a.bufs, b)
	return Dense(b, n), nil
}

// Shared allocates a constant every model reads (stride 0) holding data.
func (a *Arena) Shared(data []float32) (Tensor, error) {
	b, err := a.Dev.Alloc(len(data))
	if err != nil {
		return Tensor{}, err
	}
	a.bufs = append(a.bufs, b)
	t := Tensor{Buf: b, Len: len(data)}
	return t, a.Dev.Upload(t, 1, data)
}

// Scratch allocates n floats that every model uses in turn (stride 0) on
// a SeedSerial device, and n floats for each model (Dense) on any other.
// It is for tensors kernels write and read between two host calls alone.
func (a *Arena) Scratch(n int) (Tensor, error) {
	if ss, ok := a.Dev.(SeedSerial); !ok || !ss.SeedSerial() {
		return a.Dense(n)
	}
	b, err := a.Dev.Alloc(n)
	if err != nil {
		return Tensor{}, err
	}
	a.bufs = append(a.bufs, b)
	return Tensor{Buf: b, Len: n}, nil
}

// Free releases every tensor the arena made.
func (a *Arena) Free() {
	for _, b := range a.bufs {
		a.Dev.Free(b)
	}
	a.bufs = nil
}

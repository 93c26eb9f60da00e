package gl

import (
	"math"
	"math/rand/v2"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// A small training step chained entirely on a device: one attention layer
// with a residual GELU and an unembedding, the loss, the whole backward
// pass and Adam over the parameter block, for S seeds at once. No Sync or
// Download between kernels, so every dependency rests on the device's
// barriers.

const (
	stV, stD, stT, stB, stH = 8, 8, 4, 2, 2
	stRows                  = stB * stT
)

var stShape = kernels.Shape{B: stB, T: stT, H: stH, Dh: stD / stH, Causal: true}

// The parameter block of one seed: offsets and sizes.
type stParams struct{ tok, gamma, beta, wq, wk, wv, wu, bu, P int }

func stLayout() stParams {
	var p stParams
	at := func(n int) int { o := p.P; p.P += n; return o }
	p.tok = at(stV * stD)
	p.gamma = at(stD)
	p.beta = at(stD)
	p.wq = at(stD * stD)
	p.wk = at(stD * stD)
	p.wv = at(stD * stD)
	p.wu = at(stD * stV)
	p.bu = at(stV)
	return p
}

// stState is one device's tensors.
type stState struct {
	dv                                    kernels.Device
	S                                     int
	lay                                   stParams
	w, g, m, v                            kernels.Buffer // parameter, gradient, moment blocks
	ids, tg, gate, up, negLR, decay, fail kernels.Tensor
	x, h, xh, inv, q, k, vv, p, o         kernels.Tensor
	o2, r, ge, dge, logits, probs         kernels.Tensor
	loss, correct, dl, dg, dr, do         kernels.Tensor
	dP, dq, dk, dV, dh, t1, dx2, dx       kernels.Tensor
}

func (st *stState) par(b kernels.Buffer, off, n int) kernels.Tensor {
	return kernels.Tensor{Buf: b, Off: off, Len: n, Stride: st.lay.P}
}

func newStep(t *testing.T, dv kernels.Device, ids []int) *stState {
	S := len(ids)
	st := &stState{dv: dv, S: S, lay: stLayout()}
	alloc := func(n int) kernels.Buffer { return mustAlloc(t, dv, n) }
	dense := func(n int) kernels.Tensor { return kernels.Dense(alloc(S*n), n) }
	P := st.lay.P
	st.w, st.g, st.m, st.v = alloc(S*P), alloc(S*P), alloc(S*P), alloc(S*P)
	st.ids, st.tg = dense(stRows), dense(stRows)
	st.gate = kernels.Tensor{Buf: alloc(stD), Len: stD}
	st.up = kernels.Tensor{Buf: alloc(1), Len: 1}
	st.negLR, st.decay, st.fail = dense(1), dense(1), dense(1)
	for _, p := range []*kernels.Tensor{&st.x, &st.h, &st.xh, &st.q, &st.k, &st.vv, &st.o, &st.o2, &st.r, &st.ge, &st.dge,
		&st.dg, &st.dr, &st.do, &st.dq, &st.dk, &st.dV, &st.dh, &st.t1, &st.dx2, &st.dx} {
		*p = dense(stRows * stD)
	}
	st.inv = dense(stRows)
	st.p, st.dP = dense(stShape.ProbsLen()), dense(stShape.ProbsLen())
	st.logits, st.probs, st.dl = dense(stRows*stV), dense(stRows*stV), dense(stRows*stV)
	st.loss, st.correct = dense(1), dense(1)

	// Initial weights, learning rates and failures by seed id.
	w := make([]float32, 0, S*P)
	lr, decay := make([]float32, S), make([]float32, S)
	for i, id := range ids {
		r := rand.New(rand.NewPCG(uint64(id), 77))
		blk := make([]float32, P)
		for j := range blk {
			blk[j] = float32(r.NormFloat64()) * 0.5
		}
		for j := 0; j < stD; j++ {
			blk[st.lay.gamma+j] = 1 + 0.1*blk[st.lay.gamma+j]
		}
		w = append(w, blk...)
		lr[i] = -float32(1e-3 * float64(1+id%3))
		decay[i] = 1 - float32(1e-4*float64(id%2))
	}
	must(t, dv.Upload(kernels.Dense(st.w, P), S, w))
	must(t, dv.Upload(st.negLR, S, lr))
	must(t, dv.Upload(st.decay, S, decay))
	must(t, dv.Upload(st.gate, 1, []float32{1, 1, 1, 1, 0, 0, 0, 0}))
	must(t, dv.Upload(st.up, 1, []float32{1}))
	return st
}

// batch uploads step k's ids and targets for the seeds.
func (st *stState) batch(t *testing.T, ids []int, k int) {
	var tok, tg []float32
	for _, id := range ids {
		r := rand.New(rand.NewPCG(uint64(id), uint64(k)))
		for i := 0; i < stRows; i++ {
			tok = append(tok, float32(r.IntN(stV)))
			target := float32(-1)
			if i%stT >= 1 {
				target = float32(r.IntN(stV))
			}
			tg = append(tg, target)
		}
	}
	must(t, st.dv.Upload(st.ids, len(ids), tok))
	must(t, st.dv.Upload(st.tg, len(ids), tg))
}

// step runs one training step, forward, backward and Adam.
func (st *stState) step(t *testing.T, k int) {
	t.Helper()
	dv, S, l := st.dv, st.S, st.lay
	W := func(off, n int) kernels.Tensor { return st.par(st.w, off, n) }
	G := func(off, n int) kernels.Tensor { return st.par(st.g, off, n) }
	D, R, V := stD, stRows, stV
	var nilT kernels.Tensor
	c1 := float32(1) / float32(1-math.Pow(kernels.AdamBeta1, float64(k)))
	c2 := float32(1) / float32(1-math.Pow(kernels.AdamBeta2, float64(k)))
	for _, err := range []error{
		dv.Embed(S, R, D, st.ids, W(l.tok, V*D), st.x),
		dv.LayerNorm(S, R, D, st.x, W(l.gamma, D), W(l.beta, D), st.h, st.xh, st.inv),
		dv.MatMul(S, false, false, R, D, D, st.h, W(l.wq, D*D), st.q, nilT),
		dv.MatMul(S, false, false, R, D, D, st.h, W(l.wk, D*D), st.k, nilT),
		dv.MatMul(S, false, false, R, D, D, st.h, W(l.wv, D*D), st.vv, nilT),
		dv.Probs(S, stShape, st.q, st.k, st.p),
		dv.Mix(S, stShape, st.p, st.vv, st.o),
		dv.ColScale(S, R, D, st.o, st.gate, st.o2),
		dv.Add(S, R*D, st.x, st.o2, st.r),
		dv.GELU(S, R*D, st.r, st.ge, st.dge),
		dv.MatMul(S, false, false, R, V, D, st.ge, W(l.wu, D*V), st.logits, W(l.bu, V)),
		dv.SoftmaxXent(S, R, V, st.logits, st.tg, st.probs, st.loss),
		dv.CountCorrect(S, R, V, st.logits, st.tg, st.correct),
		dv.MarkDiverged(S, st.loss, st.fail, k),

		dv.SoftmaxXentGrad(S, R, V, st.tg, st.probs, st.up, st.dl),
		dv.MatMul(S, true, false, D, V, R, st.ge, st.dl, G(l.wu, D*V), nilT),
		dv.ColSum(S, R, V, st.dl, G(l.bu, V)),
		dv.MatMul(S, false, true, R, D, V, st.dl, W(l.wu, D*V), st.dg, nilT),
		dv.Mul(S, R*D, st.dg, st.dge, st.dr),
		dv.ColScale(S, R, D, st.dr, st.gate, st.do),
		dv.MixGradP(S, stShape, st.do, st.vv, st.dP),
		dv.MixGradV(S, stShape, st.p, st.do, st.dV),
		dv.ProbsGradQ(S, stShape, st.p, st.dP, st.k, st.dq),
		dv.ProbsGradK(S, stShape, st.p, st.dP, st.q, st.dk),
		dv.MatMul(S, true, false, D, D, R, st.h, st.dq, G(l.wq, D*D), nilT),
		dv.MatMul(S, true, false, D, D, R, st.h, st.dk, G(l.wk, D*D), nilT),
		dv.MatMul(S, true, false, D, D, R, st.h, st.dV, G(l.wv, D*D), nilT),
		dv.MatMul(S, false, true, R, D, D, st.dq, W(l.wq, D*D), st.dh, nilT),
		dv.MatMul(S, false, true, R, D, D, st.dk, W(l.wk, D*D), st.t1, nilT),
		dv.Add(S, R*D, st.dh, st.t1, st.dh),
		dv.MatMul(S, false, true, R, D, D, st.dV, W(l.wv, D*D), st.t1, nilT),
		dv.Add(S, R*D, st.dh, st.t1, st.dh),
		dv.ColDot(S, R, D, st.dh, st.xh, G(l.gamma, D)),
		dv.ColSum(S, R, D, st.dh, G(l.beta, D)),
		dv.LayerNormGradX(S, R, D, W(l.gamma, D), st.dh, st.xh, st.inv, st.dx2),
		dv.Add(S, R*D, st.dr, st.dx2, st.dx),
		dv.EmbedGrad(S, R, D, V, st.ids, st.dx, G(l.tok, V*D)),
		dv.Adam(S, l.P, W(0, l.P), G(0, l.P), st.par(st.m, 0, l.P), st.par(st.v, 0, l.P), st.negLR, st.decay, st.fail, c1, c2),
	} {
		if err != nil {
			t.Fatalf("step %d on %s: %v", k, dv.Name(), err)
		}
	}
}

// runSteps trains seeds ids for n steps on dv and returns the losses of
// every step (downloaded once at the end) and the final weights.
func runSteps(t *testing.T, dv kernels.Device, ids []int, n int) (losses [][]float32, w []float32) {
	st := newStep(t, dv, ids)
	lossBuf := mustAlloc(t, dv, n*len(ids))
	for k := 1; k <= n; k++ {
		st.batch(t, ids, k)
		st.step(t, k)
		// Keep each step's losses on the device: loss + 0 (the gate's last
		// element, shared) into row k-1 of lossBuf.
		dst := kernels.Tensor{Buf: lossBuf, Off: (k - 1) * len(ids), Len: 1, Stride: 1}
		must(t, dv.Add(len(ids), 1, st.loss, kernels.Tensor{Buf: st.gate.Buf, Off: 7, Len: 1}, dst))
	}
	all := make([]float32, n*len(ids))
	must(t, dv.Download(all, kernels.Dense(lossBuf, n*len(ids)), 1))
	for k := range n {
		losses = append(losses, all[k*len(ids):(k+1)*len(ids)])
	}
	w = make([]float32, len(ids)*st.lay.P)
	must(t, dv.Download(w, kernels.Dense(st.w, st.lay.P), len(ids)))
	return losses, w
}

// TestTrainingSteps trains three seeds for four steps on GL and on the
// CPU and compares the losses and weights; then wants seed 5's results to
// be the same bits when it trains alone (batch invariance of the whole
// chain) and on a second run.
func TestTrainingSteps(t *testing.T) {
	g := needGL(t)
	ids := []int{4, 5, 6}
	const steps = 4
	wantL, wantW := runSteps(t, cpu.New(), ids, steps)
	gotL, gotW := runSteps(t, g, ids, steps)
	for k := range steps {
		t.Logf("step %d losses gl %v cpu %v", k+1, gotL[k], wantL[k])
		for s := range ids {
			if d := math.Abs(float64(gotL[k][s] - wantL[k][s])); d > 1e-5 || math.IsNaN(float64(gotL[k][s])) {
				t.Errorf("step %d seed %d: loss gl %g cpu %g", k+1, ids[s], gotL[k][s], wantL[k][s])
			}
		}
	}
	// Adam moves a weight by about its learning rate whatever the size of
	// its gradient, so weights whose gradient is rounding noise may move
	// differently; the rest agree closely.
	bad, maxd := 0, 0.0
	for i := range wantW {
		d := math.Abs(float64(gotW[i] - wantW[i]))
		maxd = max(maxd, d)
		if d > 1e-4 {
			bad++
		}
	}
	t.Logf("weights: max difference %.2g, %d of %d beyond 1e-4", maxd, bad, len(wantW))
	if bad > len(wantW)/100 || maxd > 1e-2 {
		t.Errorf("weights: %d of %d differ by more than 1e-4, max %g", bad, len(wantW), maxd)
	}

	aloneL, aloneW := runSteps(t, g, []int{5}, steps)
	againL, againW := runSteps(t, g, ids, steps)
	P := stLayout().P
	for k := range steps {
		if math.Float32bits(aloneL[k][0]) != math.Float32bits(gotL[k][1]) || math.Float32bits(againL[k][1]) != math.Float32bits(gotL[k][1]) {
			t.Errorf("step %d: seed 5's loss alone %g, in a group %g, again %g", k+1, aloneL[k][0], gotL[k][1], againL[k][1])
		}
	}
	if i := sameBits(aloneW, gotW[P:2*P]); i >= 0 {
		t.Errorf("seed 5's weight %d alone %g, in a group %g", i, aloneW[i], gotW[P+i])
	}
	if i := sameBits(againW, gotW); i >= 0 {
		t.Errorf("weight %d on a second run %g, first %g", i, againW[i], gotW[i])
	}
}

package gl

import (
	"fmt"
	"math"
	"os"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/kernels"
)

// groupSize is local_size_x in common.glsl (WG).
const groupSize = 64

// maxGroups is the guaranteed minimum of GL_MAX_COMPUTE_WORK_GROUP_COUNT
// per dimension; larger grids spill into y.
const maxGroups = 65535

// maxBindings is the storage buffer bindings a kernel may use: 8, GL
// 4.3's minimum for compute shaders. Binding 7 is the status flags
// (status.glsl) for a kernel that binds fewer than 8 tensors.
const maxBindings = 8

// layerNormEps is the epsilon added to the variance, as float32 (the CPU
// adds kernels.LayerNormEps to a float32).
const layerNormEps = float32(kernels.LayerNormEps)

func envDebug() bool { return os.Getenv("HEADLAB_GL_DEBUG") == "1" }

// bind is one storage buffer binding: the buffer and the tensor's offset
// and seed stride, in floats.
type bind struct {
	id          uint32
	off, stride int32
}

// launch is one dispatch, built on the calling goroutine and run on the
// GL thread.
type launch struct {
	name    string // the kernel (Device method) it belongs to
	prog    int
	S, work int32
	// groups says work counts workgroups per seed (kernels that give a
	// workgroup to one seed), not invocations.
	groups bool
	// flags says the kernel may raise status flags.
	flags  bool
	nb     int
	b      [maxBindings]bind
	ints   [maxUniforms]int32
	floats [maxUniforms]float32
}

// newLaunch makes the launch of prog over S seeds of work, binding ts in
// order (a tensor with no buffer binds the status buffer in its place,
// for arguments the kernel does not read).
func newLaunch(prog, S, work int, ts ...kernels.Tensor) launch {
	l := launch{prog: prog, S: int32(S), work: int32(work), nb: len(ts)}
	for i, t := range ts {
		if b, ok := t.Buf.(*Buffer); ok {
			l.b[i] = bind{id: b.id, off: int32(t.Off), stride: int32(t.Stride)}
		}
	}
	return l
}

// seti sets the program's int uniforms, in progSpec order.
func (l *launch) seti(v ...int) *launch {
	for i, x := range v {
		l.ints[i] = int32(x)
	}
	return l
}

// setf sets the program's float uniforms, in progSpec order.
func (l *launch) setf(v ...float32) *launch {
	copy(l.floats[:], v)
	return l
}

// exec runs l on the GL thread: program, uniforms, bindings, dispatch,
// then a SHADER_STORAGE barrier for whatever reads the results next.
func (d *Device) exec(l *launch) {
	p := &d.progs[l.prog]
	if p.id == 0 {
		return // the device was closed with this work still queued
	}
	ogl.UseProgram(p.id)
	ogl.Uniform1i(p.locS, l.S)
	ogl.Uniform1i(p.locWork, l.work)
	var off, stride [maxBindings]int32
	for i := range l.nb {
		off[i], stride[i] = l.b[i].off, l.b[i].stride
	}
	ogl.Uniform1iv(p.locOff, int32(l.nb), &off[0])
	ogl.Uniform1iv(p.locStride, int32(l.nb), &stride[0])
	for i := range p.numInts {
		ogl.Uniform1i(p.locInts[i], l.ints[i])
	}
	for i := range p.numFloats {
		ogl.Uniform1f(p.locFloats[i], l.floats[i])
	}
	for i := range l.nb {
		id := l.b[i].id
		if id == 0 {
			id = d.status
		}
		ogl.BindBufferBase(ogl.SHADER_STORAGE_BUFFER, uint32(i), id)
	}
	if l.nb < maxBindings {
		ogl.BindBufferBase(ogl.SHADER_STORAGE_BUFFER, 7, d.status)
	}
	total := int64(l.S) * int64(l.work)
	groups := total
	if !l.groups {
		groups = (total + int64(p.size) - 1) / int64(p.size)
	}
	gx := min(groups, maxGroups)
	gy := (groups + gx - 1) / gx
	var t timed
	if d.profiling {
		t = timed{start: d.query(), ended: d.query(), rec: kernels.DispatchTime{
			Kernel: l.name, Program: p.name, Seeds: int(l.S), Groups: gx * gy, GroupSize: p.size}}
		ogl.QueryCounter(t.start, ogl.TIMESTAMP)
	}
	ogl.DispatchCompute(uint32(gx), uint32(gy), 1)
	ogl.MemoryBarrier(ogl.SHADER_STORAGE_BARRIER_BIT)
	if d.profiling {
		ogl.QueryCounter(t.ended, ogl.TIMESTAMP)
		d.timed = append(d.timed, t)
	}
	d.dirty = true
	if l.flags {
		d.flagged = true
	}
}

// run validates nothing: it counts l's dispatch and queues it (see queue).
func (d *Device) run(name string, ls ...launch) error {
	d.dispatches.Add(int64(len(ls)))
	for i := range ls {
		ls[i].name = name
	}
	return d.queue(name, func() {
		for i := range ls {
			d.exec(&ls[i])
		}
	})
}

// check validates a kernel's tensors before any GL work: each is a live
// buffer of this device, fits it for S seeds, and holds at least want[i]
// floats per seed.
func (d *Device) check(name string, S int, ts []kernels.Tensor, want []int) error {
	if d.closed.Load() {
		return ErrClosed
	}
	for i, t := range ts {
		b, ok := t.Buf.(*Buffer)
		switch {
		case t.Buf == nil:
			return fmt.Errorf("gl: %s: argument %d has no buffer", name, i)
		case !ok:
			return fmt.Errorf("gl: %s: argument %d is a %T, not a buffer of this device", name, i, t.Buf)
		case b.dev != d:
			return fmt.Errorf("gl: %s: argument %d is a buffer of another GL device", name, i)
		case b.freed.Load():
			return fmt.Errorf("gl: %s: argument %d's buffer was freed", name, i)
		}
	}
	if err := kernels.Check(S, ts, want); err != nil {
		return fmt.Errorf("gl: %s: %v", name, err)
	}
	return nil
}

// sizes refuses negative sizes.
func sizes(name string, v ...int) error {
	for _, x := range v {
		if x < 0 {
			return fmt.Errorf("gl: %s: negative size %d in %v", name, x, v)
		}
	}
	return nil
}

// fits32 refuses a grid of S seeds of work invocations whose indices
// overflow the shaders' 32-bit ints, and sizes that overflow them (n).
func fits32(name string, S, work int, n ...int) error {
	if int64(S)*int64(work) > math.MaxInt32 {
		return fmt.Errorf("gl: %s: %d seeds of %d invocations overflow the shaders' 32-bit indices", name, S, work)
	}
	for _, x := range n {
		if x > math.MaxInt32 {
			return fmt.Errorf("gl: %s: size %d overflows the shaders' 32-bit indices", name, x)
		}
	}
	return nil
}

// simple validates and runs a kernel of one dispatch of work invocations
// per seed over ts (want their per-seed lengths), with int uniforms ints.
func (d *Device) simple(name string, prog, S, work int, ts []kernels.Tensor, want []int, ints ...int) error {
	if err := d.check(name, S, ts, want); err != nil {
		return err
	}
	if err := fits32(name, S, work, ints...); err != nil {
		return err
	}
	if work == 0 {
		return nil
	}
	l := newLaunch(prog, S, work, ts...)
	l.seti(ints...)
	return d.run(name, l)
}

// matTile is the side of the square tile of c one MatMul workgroup
// computes (matmul.comp's TILE).
const matTile = 32

// MatMul implements kernels.Device: one workgroup of 32 per 32 x 32 tile
// of c.
func (d *Device) MatMul(S int, tA, tB bool, m, n, k int, a, b, c, bias kernels.Tensor) error {
	return d.matmul(product{name: "MatMul", S: S, tA: tA, tB: tB, m: m, n: n, k: k, a: a, b: b, c: c, bias: bias})
}

// Linear implements kernels.Device: MatMul's program with its epilogue.
func (d *Device) Linear(S, m, n, k int, x, w, bias, res, out, deriv kernels.Tensor) error {
	p := product{name: "Linear", S: S, m: m, n: n, k: k, a: x, b: w, c: out, bias: bias, deriv: deriv}
	if res.Buf != nil {
		p.then, p.x = thenAdd, res
	}
	return d.matmul(p)
}

// WeightGrad implements kernels.Fused: MatMul's program, tA, with
// the column sums of dy summed on the way (matmul.comp's sumB).
func (d *Device) WeightGrad(S, m, n, k int, x, dy, dW, db kernels.Tensor) error {
	return d.matmul(product{name: "WeightGrad", S: S, tA: true, m: m, n: n, k: k, a: x, b: dy, c: dW, sums: db})
}

// MatMulThen implements kernels.Fused: MatMul's program with
// the epilogue's kernel applied to each element before it is stored.
func (d *Device) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c kernels.Tensor, e kernels.Epilogue, x, out kernels.Tensor) error {
	then := map[kernels.Epilogue]int{kernels.EpilogueAdd: thenAdd, kernels.EpilogueMul: thenMul, kernels.EpilogueColScale: thenScale}[e]
	if then == 0 {
		return fmt.Errorf("gl: MatMulThen: no epilogue %d", e)
	}
	return d.matmul(product{name: "MatMulThen", S: S, tA: tA, tB: tB, m: m, n: n, k: k, a: a, b: b, c: out, bias: bias,
		then: then, x: x, ys: c})
}

// Fuses implements kernels.Fused: every fused kernel is a shader of its
// own (LayerNormGrad's long rows aside).
func (d *Device) Fuses() bool { return true }

// matmul.comp's epilogues (its then).
const (
	thenAdd   = 1
	thenMul   = 2
	thenScale = 3
)

// product is one call of matmul.comp: c = then(op(a) op(b) + bias, x),
// with the optional tensors (no buffer: not read or written) bias,
// deriv (GELU's derivative, Linear), sums (op(b)'s column sums,
// WeightGrad) and ys (the product before then, MatMulThen).
type product struct {
	name                     string
	S                        int
	tA, tB                   bool
	m, n, k                  int
	a, b, c                  kernels.Tensor
	bias, x, deriv, sums, ys kernels.Tensor
	then                     int
}

// matmul checks and queues matmul.comp.
func (d *Device) matmul(p product) error {
	m, n, k, name := p.m, p.n, p.k, p.name
	if err := sizes(name, m, n, k); err != nil {
		return err
	}
	xLen := m * n
	if p.then == thenScale {
		xLen = n
	}
	if p.then != 0 && p.x.Buf == nil {
		return fmt.Errorf("gl: %s: the epilogue's operand has no buffer", name)
	}
	ts, want := []kernels.Tensor{p.a, p.b, p.c}, []int{m * k, k * n, m * n}
	for i, t := range [5]kernels.Tensor{p.bias, p.x, p.deriv, p.sums, p.ys} {
		if t.Buf != nil {
			ts, want = append(ts, t), append(want, [5]int{n, xLen, m * n, n, m * n}[i])
		}
	}
	if err := d.check(name, p.S, ts, want); err != nil {
		return err
	}
	if err := fits32(name, p.S, m*n, m, n, k, m*k, k*n); err != nil {
		return err
	}
	if m*n == 0 {
		return nil
	}
	tiles := ((m + matTile - 1) / matTile) * ((n + matTile - 1) / matTile)
	l := newLaunch(progMatMul, p.S, tiles, p.a, p.b, p.c, p.bias, p.x, p.deriv, p.sums, p.ys)
	l.groups = true
	l.seti(m, n, k, b2i(p.tA), b2i(p.tB), b2i(p.bias.Buf != nil), b2i(p.deriv.Buf != nil), p.then, b2i(p.sums.Buf != nil), b2i(p.ys.Buf != nil))
	return d.run(name, l)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ColSum implements kernels.Device: a workgroup per seed and 64 columns,
// an invocation per column.
func (d *Device) ColSum(S, rows, n int, x, out kernels.Tensor) error {
	if err := sizes("ColSum", rows, n); err != nil {
		return err
	}
	return d.cols("ColSum", progColSum, S, rows, n, []kernels.Tensor{x, out}, []int{rows * n, n})
}

// ColDot implements kernels.Device: as ColSum.
func (d *Device) ColDot(S, rows, n int, a, b, out kernels.Tensor) error {
	if err := sizes("ColDot", rows, n); err != nil {
		return err
	}
	return d.cols("ColDot", progColDot, S, rows, n, []kernels.Tensor{a, b, out}, []int{rows * n, rows * n, n})
}

// ColDotSum implements kernels.Fused: ColDot's program, summing a's
// columns on the way.
func (d *Device) ColDotSum(S, rows, n int, a, b, dot, sum kernels.Tensor) error {
	if err := sizes("ColDotSum", rows, n); err != nil {
		return err
	}
	return d.cols("ColDotSum", progColDot, S, rows, n, []kernels.Tensor{a, b, dot, sum}, []int{rows * n, rows * n, n, n})
}

// cols validates and queues a column reduction of rows x n per seed.
func (d *Device) cols(name string, prog, S, rows, n int, ts []kernels.Tensor, want []int) error {
	if err := d.check(name, S, ts, want); err != nil {
		return err
	}
	wgs := (n + groupSize - 1) / groupSize
	if err := fits32(name, S, wgs*groupSize, rows*n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	l := newLaunch(prog, S, wgs, ts...)
	l.groups = true
	l.seti(rows, n, b2i(len(ts) == 4))
	return d.run(name, l)
}

// LayerNorm implements kernels.Device: an invocation per row, in
// workgroups of min(64, 2048/n) rows of one seed (rows.glsl).
func (d *Device) LayerNorm(S, rows, n int, x, gamma, beta, out, xh, inv kernels.Tensor) error {
	return d.rowKernel("LayerNorm", progLayerNorm, S, rows, n, []kernels.Tensor{x, gamma, beta, out, xh, inv},
		[]int{rows * n, n, n, rows * n, rows * n, rows}, layerNormEps)
}

// LayerNormGradX implements kernels.Device: as LayerNorm.
func (d *Device) LayerNormGradX(S, rows, n int, gamma, dy, xh, inv, out kernels.Tensor) error {
	return d.rowKernel("LayerNormGradX", progLayerNormGradX, S, rows, n, []kernels.Tensor{gamma, dy, xh, inv, out},
		[]int{n, rows * n, rows * n, rows, rows * n}, 0)
}

// rowKernel validates and queues a kernel of one invocation per row of n,
// in workgroups of rowBlock(n) rows of one seed.
func (d *Device) rowKernel(name string, prog, S, rows, n int, ts []kernels.Tensor, want []int, eps float32) error {
	if err := sizes(name, rows, n); err != nil {
		return err
	}
	if err := d.check(name, S, ts, want); err != nil {
		return err
	}
	if err := fits32(name, S, rows, n, rows*n); err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	rw := rowBlock(n)
	l := newLaunch(prog, S, (rows+rw-1)/rw, ts...)
	l.groups = true
	l.seti(rows, n).setf(eps)
	return d.run(name, l)
}

// rowBlock is the rows of n a row kernel's workgroup takes (rows.glsl).
func rowBlock(n int) int { return max(min(groupSize, 2048/max(n, 1)), 1) }

// GELU implements kernels.Device: one invocation per element.
func (d *Device) GELU(S, n int, x, out, deriv kernels.Tensor) error {
	if err := sizes("GELU", n); err != nil {
		return err
	}
	return d.simple("GELU", progGELU, S, n, []kernels.Tensor{x, out, deriv}, []int{n, n, n})
}

// Mul implements kernels.Device: one invocation per element; out may be
// a or b.
func (d *Device) Mul(S, n int, a, b, out kernels.Tensor) error {
	if err := sizes("Mul", n); err != nil {
		return err
	}
	return d.simple("Mul", progMul, S, n, []kernels.Tensor{a, b, out}, []int{n, n, n})
}

// Add implements kernels.Device: one invocation per element; out may be
// a or b.
func (d *Device) Add(S, n int, a, b, out kernels.Tensor) error {
	if err := sizes("Add", n); err != nil {
		return err
	}
	return d.simple("Add", progAdd, S, n, []kernels.Tensor{a, b, out}, []int{n, n, n})
}

// ColScale implements kernels.Device: one invocation per element; out may
// be x.
func (d *Device) ColScale(S, rows, n int, x, g, out kernels.Tensor) error {
	if err := sizes("ColScale", rows, n); err != nil {
		return err
	}
	return d.simple("ColScale", progColScale, S, rows*n, []kernels.Tensor{x, g, out}, []int{rows * n, n, rows * n}, n)
}

// Embed implements kernels.Device: one invocation per element of out.
// The table has table.Len/n rows; an id that is not a whole number below
// that gives a row of NaN, and the next Download or Sync returns an error.
func (d *Device) Embed(S, rows, n int, ids, table, out kernels.Tensor) error {
	const name = "Embed"
	if err := sizes(name, rows, n); err != nil {
		return err
	}
	ts := []kernels.Tensor{ids, table, out}
	if err := d.check(name, S, ts, []int{rows, n, rows * n}); err != nil {
		return err
	}
	if err := fits32(name, S, rows*n); err != nil {
		return err
	}
	if rows*n == 0 {
		return nil
	}
	l := newLaunch(progEmbed, S, rows*n, ts...)
	l.seti(n, table.Len/n, bitEmbed)
	l.flags = true
	return d.run(name, l)
}

// EmbedGrad implements kernels.Device in two dispatches: an index of each
// id's rows in row order (embedindex.comp: a workgroup per seed, or one
// for ids every seed shares) into the device's scratch, then one
// invocation per element of out adding its own rows. An id that is not a
// whole number in 0..n-1 is left out, and the next Download or Sync
// returns an error.
func (d *Device) EmbedGrad(S, rows, n, vocab int, ids, dy, out kernels.Tensor) error {
	const name = "EmbedGrad"
	if err := sizes(name, rows, n, vocab); err != nil {
		return err
	}
	ts := []kernels.Tensor{ids, dy, out}
	if err := d.check(name, S, ts, []int{rows, rows * n, vocab * n}); err != nil {
		return err
	}
	if err := fits32(name, S, vocab*n, rows, rows*n); err != nil {
		return err
	}
	if vocab*n == 0 {
		return nil
	}
	// The index: start[vocab+1], order[rows] and a cursor[vocab] per seed
	// of ids.
	block, idxSeeds := 2*vocab+1+rows, S
	if ids.Stride == 0 {
		idxSeeds = 1
	}
	if int64(idxSeeds)*int64(block) > int64(d.maxFloats) {
		return fmt.Errorf("gl: %s: the index of %d seeds (%d floats) exceeds the largest buffer", name, idxSeeds, idxSeeds*block)
	}
	il := newLaunch(progEmbedIndex, idxSeeds, 1, ids)
	il.groups, il.flags = true, true
	il.seti(rows, vocab, bitEmbedGrad)
	il.nb = 2
	il.b[1] = bind{stride: int32(block)}
	gl := newLaunch(progEmbedGrad, S, vocab*n, kernels.Tensor{}, dy, out)
	gl.seti(rows, n, vocab)
	gl.b[0] = bind{stride: int32(block)}
	if idxSeeds == 1 {
		gl.b[0].stride = 0
	}
	il.name, gl.name = name, name
	d.dispatches.Add(2)
	return d.queue(name, func() {
		id := d.growScratch(idxSeeds * block)
		il.b[1].id, gl.b[0].id = id, id
		d.exec(&il)
		d.exec(&gl)
	})
}

// attnRun validates an attention call (its tensors' per-seed lengths
// want) and queues prog: a workgroup per head of each sequence of each
// seed (attn.glsl).
func (d *Device) attnRun(name string, prog, S int, s kernels.Shape, ts []kernels.Tensor, want []int) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("gl: %s: %v", name, err)
	}
	if err := d.check(name, S, ts, want); err != nil {
		return err
	}
	if err := fits32(name, S, s.B*s.H*groupSize, s.QKVLen(), s.ProbsLen()); err != nil {
		return err
	}
	l := newLaunch(prog, S, s.B*s.H, ts...)
	l.groups = true
	l.seti(s.B, s.T, s.H, s.Dh, b2i(s.Causal)).setf(scaleOf(s))
	return d.run(name, l)
}

// scaleOf is 1/sqrt(Dh), rounded as the CPU device rounds it.
func scaleOf(s kernels.Shape) float32 { return float32(1 / math.Sqrt(float64(s.Dh))) }

// Probs implements kernels.Device: a workgroup per head, a row of P an
// invocation for its maximum and sum.
func (d *Device) Probs(S int, s kernels.Shape, q, k, p kernels.Tensor) error {
	return d.attnRun("Probs", progProbs, S, s, []kernels.Tensor{q, k, p}, []int{s.QKVLen(), s.QKVLen(), s.ProbsLen()})
}

// Mix implements kernels.Device: a workgroup per head, an invocation per
// element of O in turn.
func (d *Device) Mix(S int, s kernels.Shape, p, v, o kernels.Tensor) error {
	return d.attnRun("Mix", progMix, S, s, []kernels.Tensor{p, v, o}, []int{s.ProbsLen(), s.QKVLen(), s.QKVLen()})
}

// MixGradP implements kernels.Device: a workgroup per head, an invocation
// per cell of dP in turn.
func (d *Device) MixGradP(S int, s kernels.Shape, dO, v, dP kernels.Tensor) error {
	return d.attnRun("MixGradP", progMixGradP, S, s, []kernels.Tensor{dO, v, dP}, []int{s.QKVLen(), s.QKVLen(), s.ProbsLen()})
}

// MixGradV implements kernels.Device: a workgroup per head, an invocation
// per element of dV in turn, a sum over queries.
func (d *Device) MixGradV(S int, s kernels.Shape, p, dO, dV kernels.Tensor) error {
	return d.attnRun("MixGradV", progMixGradV, S, s, []kernels.Tensor{p, dO, dV}, []int{s.ProbsLen(), s.QKVLen(), s.QKVLen()})
}

// ProbsGradQ implements kernels.Device: a workgroup per head, an
// invocation per element of dQ in turn.
func (d *Device) ProbsGradQ(S int, s kernels.Shape, p, dP, k, dQ kernels.Tensor) error {
	return d.attnRun("ProbsGradQ", progProbsGradQ, S, s, []kernels.Tensor{p, dP, k, dQ}, []int{s.ProbsLen(), s.ProbsLen(), s.QKVLen(), s.QKVLen()})
}

// maxKeys is the longest sequence ProbsGradK takes: its workgroup keeps a
// rowsum per query in shared memory.
const maxKeys = 4096

// ProbsGradK implements kernels.Device: a workgroup per head, each row's
// rowsum(P * dP) first, then an invocation per element of dK in turn, a
// sum over queries.
func (d *Device) ProbsGradK(S int, s kernels.Shape, p, dP, q, dK kernels.Tensor) error {
	if s.T > maxKeys {
		return fmt.Errorf("gl: ProbsGradK: sequences of %d exceed %d", s.T, maxKeys)
	}
	return d.attnRun("ProbsGradK", progProbsGradK, S, s, []kernels.Tensor{p, dP, q, dK}, []int{s.ProbsLen(), s.ProbsLen(), s.QKVLen(), s.QKVLen()})
}

// lnGradCols is the longest row layernormgrad.comp takes (its LNCOLS).
const lnGradCols = 1024

// LayerNormGrad implements kernels.Fused: one workgroup of 32
// per seed (layernormgrad.comp) for rows of at most lnGradCols, else
// kernels.Separately's LayerNormGradX, Add and ColDotSum.
func (d *Device) LayerNormGrad(S, rows, n int, gamma, dy, xh, inv, res, dx, dgamma, dbeta kernels.Tensor) error {
	const name = "LayerNormGrad"
	if err := sizes(name, rows, n); err != nil {
		return err
	}
	if n == 0 || n > lnGradCols {
		return kernels.Separately{Device: d}.LayerNormGrad(S, rows, n, gamma, dy, xh, inv, res, dx, dgamma, dbeta)
	}
	ts, want := []kernels.Tensor{gamma, dy, xh, inv, dx, dgamma, dbeta}, []int{n, rows * n, rows * n, rows, rows * n, n, n}
	if res.Buf != nil {
		ts, want = append(ts, res), append(want, rows*n)
	}
	if err := d.check(name, S, ts, want); err != nil {
		return err
	}
	if err := fits32(name, S, progSpecs[progLayerNormGrad].wg, rows*n); err != nil {
		return err
	}
	l := newLaunch(progLayerNormGrad, S, 1, gamma, dy, xh, inv, res, dx, dgamma, dbeta)
	l.groups = true
	l.seti(rows, n, b2i(res.Buf != nil))
	return d.run(name, l)
}

// embedBlock is the elements of out one EmbedAdd workgroup takes
// (embedadd.comp's EB).
const embedBlock = 8 * groupSize

// EmbedAdd implements kernels.Fused: a workgroup per embedBlock
// elements of out (embedadd.comp). Ids that are not whole numbers in
// range give NaN, and the next Download or Sync returns Embed's error.
func (d *Device) EmbedAdd(S, rows, n int, ids, table, ids2, table2, out kernels.Tensor) error {
	const name = "EmbedAdd"
	if err := sizes(name, rows, n); err != nil {
		return err
	}
	ts := []kernels.Tensor{ids, table, ids2, table2, out}
	if err := d.check(name, S, ts, []int{rows, n, rows, n, rows * n}); err != nil {
		return err
	}
	blocks := (rows*n + embedBlock - 1) / embedBlock
	if err := fits32(name, S, blocks*embedBlock); err != nil {
		return err
	}
	if rows*n == 0 {
		return nil
	}
	l := newLaunch(progEmbedAdd, S, blocks, ts...)
	l.groups, l.flags = true, true
	l.seti(rows*n, n, table.Len/n, table2.Len/n, groupSize/n, groupSize%n, bitEmbed)
	return d.run(name, l)
}

// attnSMEM is the shared memory of the attention kernels, in floats
// (attn.glsl's SMEM).
const attnSMEM = 6144

// Attends implements kernels.Fused: a head whose blocks fit
// attendgrad.comp's shared memory (P and dS, and Q, K, V and dO, rows
// padded, a rowsum per query and three flags; attend.comp needs less).
func (d *Device) Attends(s kernels.Shape) bool {
	if s.Validate() != nil {
		return false
	}
	T, Dh := int64(s.T), int64(s.Dh)
	return 4*T*(Dh+1)+2*T*(T+1)+T+3 <= attnSMEM
}

// Attend implements kernels.Fused: a workgroup per head
// (attend.comp), for the shapes Attends takes.
func (d *Device) Attend(S int, s kernels.Shape, q, k, v, g, p, o, og kernels.Tensor) error {
	const name = "Attend"
	if !d.Attends(s) {
		return fmt.Errorf("gl: %s: a head of %+v does not fit", name, s)
	}
	ts, want := []kernels.Tensor{q, k, v, p}, []int{s.QKVLen(), s.QKVLen(), s.QKVLen(), s.ProbsLen()}
	if o.Buf != nil {
		ts, want = append(ts, o), append(want, s.QKVLen())
	}
	if og.Buf != nil {
		ts, want = append(ts, g, og), append(want, s.H*s.Dh, s.QKVLen())
	}
	if err := d.check(name, S, ts, want); err != nil {
		return err
	}
	if err := fits32(name, S, s.B*s.H*groupSize, s.QKVLen(), s.ProbsLen()); err != nil {
		return err
	}
	l := newLaunch(progAttend, S, s.B*s.H, q, k, v, g, p, o, og)
	l.groups = true
	l.seti(s.B, s.T, s.H, s.Dh, b2i(s.Causal), b2i(o.Buf != nil), b2i(og.Buf != nil)).setf(scaleOf(s))
	return d.run(name, l)
}

// AttendGrad implements kernels.Fused: a workgroup per head
// (attendgrad.comp), for the shapes Attends takes.
func (d *Device) AttendGrad(S int, s kernels.Shape, p, dO, q, k, v, dQ, dK, dV kernels.Tensor) error {
	const name = "AttendGrad"
	if !d.Attends(s) {
		return fmt.Errorf("gl: %s: a head of %+v does not fit", name, s)
	}
	ql := s.QKVLen()
	return d.attnRun(name, progAttendGrad, S, s, []kernels.Tensor{p, dO, q, k, v, dQ, dK, dV},
		[]int{s.ProbsLen(), ql, ql, ql, ql, ql, ql, ql})
}

// growScratch returns the scratch buffer, made at least n floats; its old
// contents are dropped (every user writes before it reads). GL thread
// only.
func (d *Device) growScratch(n int) uint32 {
	if n <= d.scrN {
		return d.scratch
	}
	n = max(n, d.scrN+d.scrN/2)
	n = min(n, d.maxFloats)
	if d.scratch == 0 {
		ogl.GenBuffers(1, &d.scratch)
	}
	ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, d.scratch)
	ogl.BufferData(ogl.SHADER_STORAGE_BUFFER, 4*n, nil, ogl.DYNAMIC_COPY)
	d.scrN = n
	return d.scratch
}

// SoftmaxXent implements kernels.Device: one workgroup per seed. A target
// that is not a whole number in 0..v-1 makes that seed's loss NaN, and
// the next Download or Sync returns an error.
func (d *Device) SoftmaxXent(S, rows, v int, logits, targets, probs, loss kernels.Tensor) error {
	const name = "SoftmaxXent"
	if err := sizes(name, rows, v); err != nil {
		return err
	}
	ts := []kernels.Tensor{logits, targets, probs, loss}
	if err := d.check(name, S, ts, []int{rows * v, rows, rows * v, 1}); err != nil {
		return err
	}
	if err := fits32(name, S, groupSize, rows*v); err != nil {
		return err
	}
	l := newLaunch(progSoftmaxXent, S, 1, ts...)
	l.groups, l.flags = true, true
	l.seti(rows, v, bitSoftmaxXent)
	return d.run(name, l)
}

// SoftmaxXentGrad implements kernels.Device: workgroups of 64 rows of one
// seed, each counting the seed's answer rows itself; one dispatch.
func (d *Device) SoftmaxXentGrad(S, rows, v int, targets, probs, up, out kernels.Tensor) error {
	const name = "SoftmaxXentGrad"
	if err := sizes(name, rows, v); err != nil {
		return err
	}
	ts := []kernels.Tensor{targets, probs, up, out}
	if err := d.check(name, S, ts, []int{rows, rows * v, 1, rows * v}); err != nil {
		return err
	}
	work := (rows + groupSize - 1) / groupSize
	if err := fits32(name, S, work*groupSize, rows*v); err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	l := newLaunch(progSoftmaxXentGrad, S, work, ts...)
	l.groups, l.flags = true, true
	l.seti(rows, v, bitSoftmaxXentGrad)
	return d.run(name, l)
}

// CountCorrect implements kernels.Device: one workgroup per seed.
func (d *Device) CountCorrect(S, rows, v int, logits, targets, out kernels.Tensor) error {
	const name = "CountCorrect"
	if err := sizes(name, rows, v); err != nil {
		return err
	}
	ts := []kernels.Tensor{logits, targets, out}
	if err := d.check(name, S, ts, []int{rows * v, rows, 1}); err != nil {
		return err
	}
	if err := fits32(name, S, groupSize, rows*v); err != nil {
		return err
	}
	l := newLaunch(progCountCorrect, S, 1, ts...)
	l.groups = true
	l.seti(rows, v)
	return d.run(name, l)
}

// Adam implements kernels.Device: one invocation per parameter; w, m and
// v are updated in place.
func (d *Device) Adam(S, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, c1, c2 float32) error {
	const name = "Adam"
	if err := sizes(name, n); err != nil {
		return err
	}
	ts := []kernels.Tensor{w, g, m, v, negLR, failed, decay}
	if err := d.check(name, S, ts, []int{n, n, n, n, 1, 1, 1}); err != nil {
		return err
	}
	if err := fits32(name, S, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	b1, b2 := float32(kernels.AdamBeta1), float32(kernels.AdamBeta2)
	l := newLaunch(progAdam, S, n, ts...)
	l.setf(c1, c2, b1, b2, float32(1)-b1, float32(1)-b2, float32(kernels.AdamEps))
	return d.run(name, l)
}

// MarkDiverged implements kernels.Device: one invocation per seed.
func (d *Device) MarkDiverged(S int, loss, failed kernels.Tensor, step int) error {
	const name = "MarkDiverged"
	ts := []kernels.Tensor{loss, failed}
	if err := d.check(name, S, ts, []int{1, 1}); err != nil {
		return err
	}
	if err := fits32(name, S, 1); err != nil {
		return err
	}
	l := newLaunch(progMarkDiverged, S, 1, ts...)
	l.setf(float32(step))
	return d.run(name, l)
}

package gl

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unsafe"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/kernels"
)

// Buffer slots: one persistent SSBO per kernel argument role, grown when a
// call needs more and otherwise reused, so calls do not reallocate.
const (
	slotQ = iota
	slotK
	slotV
	slotP
	slotDP
	slotDO
	slotOut   // QKV-sized outputs: O, dV, dQ, dK
	slotRS    // rowsum(P * dP), scratch between two passes
	slotProbs // Probs output, kept for ProbsBuffer
	slotDPOut // MixGradP output
	numSlots
)

// buffer is one SSBO and its allocated size in bytes.
type buffer struct {
	id   uint32
	size int
}

// groupSize matches local_size_x in common.glsl.
const groupSize = 64

// maxGroups is the guaranteed minimum of GL_MAX_COMPUTE_WORK_GROUP_COUNT
// per dimension; larger grids spill into y.
const maxGroups = 65535

// createBuffers makes every slot's SSBO with a small initial store, so ids
// are fixed for the Backend's life (ProbsBuffer relies on it).
func (b *Backend) createBuffers() {
	for i := range b.bufs {
		ogl.GenBuffers(1, &b.bufs[i].id)
		b.ck("GenBuffers")
		b.grow(i, 256)
	}
}

// grow reallocates slot's store to at least n bytes; the old contents are
// dropped, as every caller rewrites them. It grows by half again at least,
// so alternating shapes settle quickly.
func (b *Backend) grow(slot, n int) {
	buf := &b.bufs[slot]
	if n <= buf.size {
		return
	}
	n = max(n, buf.size+buf.size/2)
	ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, buf.id)
	ogl.BufferData(ogl.SHADER_STORAGE_BUFFER, n, nil, ogl.DYNAMIC_COPY)
	b.ck("BufferData")
	buf.size = n
	b.shadow[slot] = nil
}

// output readies slot to be written by a shader: its old contents, and so
// its shadow, are no longer what the GPU holds.
func (b *Backend) output(slot, n int) {
	b.grow(slot, n)
	b.shadow[slot] = nil
}

// Tensors stay on the GPU between kernels. Every slot keeps a host shadow
// of what its buffer holds (set on upload and on download, dropped when a
// shader writes it); an input whose bytes equal a shadow is not sent
// again: the slot already holds it, or it is copied there on the GPU from
// the slot that does. The attention probabilities a forward kernel made,
// and the queries, keys and values, are so reused by the backward kernels
// without leaving the GPU. Comparing bytes keeps it exact: a caller that
// changed a slice in place gets it uploaded again.

// upload makes data the start of slot's buffer.
func (b *Backend) upload(slot int, data []float32) {
	if sameBits(b.shadow[slot], data) {
		b.stats.Resident++
		return
	}
	n := 4 * len(data)
	b.grow(slot, n)
	for src, sh := range b.shadow {
		if src != slot && sameBits(sh, data) {
			ogl.BindBuffer(ogl.COPY_READ_BUFFER, b.bufs[src].id)
			ogl.BindBuffer(ogl.COPY_WRITE_BUFFER, b.bufs[slot].id)
			ogl.CopyBufferSubData(ogl.COPY_READ_BUFFER, ogl.COPY_WRITE_BUFFER, 0, 0, n)
			b.ck("CopyBufferSubData")
			b.remember(slot, data)
			b.stats.DeviceCopies++
			return
		}
	}
	ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, b.bufs[slot].id)
	ogl.BufferSubData(ogl.SHADER_STORAGE_BUFFER, 0, n, unsafe.Pointer(&data[0]))
	b.ck("BufferSubData")
	b.remember(slot, data)
	b.stats.Uploads++
}

// download copies the start of slot's buffer into dst. The caller has
// issued a BUFFER_UPDATE barrier after the shader that wrote it.
func (b *Backend) download(slot int, dst []float32) {
	ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, b.bufs[slot].id)
	ogl.GetBufferSubData(ogl.SHADER_STORAGE_BUFFER, 0, 4*len(dst), unsafe.Pointer(&dst[0]))
	b.ck("GetBufferSubData")
	b.remember(slot, dst)
}

// remember records data as slot's contents, in storage the slot owns and
// reuses, so steady training allocates nothing here.
func (b *Backend) remember(slot int, data []float32) {
	st := b.shadowStore[slot]
	if cap(st) < len(data) {
		st = make([]float32, len(data))
	}
	st = st[:len(data)]
	copy(st, data)
	b.shadowStore[slot], b.shadow[slot] = st, st
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 4*len(a)),
		unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
}

// TransferStats counts how the kernels' inputs reached the GPU.
type TransferStats struct {
	// Uploads are inputs sent from host memory.
	Uploads int
	// Resident inputs were already in their buffer; DeviceCopies were
	// copied there from another buffer on the GPU.
	Resident, DeviceCopies int
}

// Stats returns the transfer counts since the Backend was made.
func (b *Backend) Stats() TransferStats {
	var s TransferStats
	_ = b.Call(func() { s = b.stats })
	return s
}

// bind attaches slots to binding points 0, 1, ... in order.
func (b *Backend) bind(slots ...int) {
	for i, s := range slots {
		ogl.BindBufferBase(ogl.SHADER_STORAGE_BUFFER, uint32(i), b.bufs[s].id)
	}
	b.ck("BindBufferBase")
}

// dispatch runs program p over total invocations for shape s.
func (b *Backend) dispatch(p int, s kernels.Shape, total int) {
	prog := &b.progs[p]
	ogl.UseProgram(prog.id)
	b.ck("UseProgram")
	causal := int32(0)
	if s.Causal {
		causal = 1
	}
	ogl.Uniform1i(prog.loc[uB], int32(s.B))
	ogl.Uniform1i(prog.loc[uT], int32(s.T))
	ogl.Uniform1i(prog.loc[uH], int32(s.H))
	ogl.Uniform1i(prog.loc[uDh], int32(s.Dh))
	ogl.Uniform1i(prog.loc[uCausal], causal)
	ogl.Uniform1f(prog.loc[uScale], scaleOf(s))
	ogl.Uniform1ui(prog.loc[uTotal], uint32(total))
	b.ck("Uniform")
	groups := (total + groupSize - 1) / groupSize
	gx := min(groups, maxGroups)
	gy := (groups + gx - 1) / gx
	ogl.DispatchCompute(uint32(gx), uint32(gy), 1)
	b.ck("DispatchCompute")
}

// scaleOf is 1/sqrt(Dh), rounded exactly as backend/cpu rounds it.
func scaleOf(s kernels.Shape) float32 { return float32(1 / math.Sqrt(float64(s.Dh))) }

// ck records the first glGetError failure in debug mode; outside debug
// mode errors are collected once per call by takeErr instead.
func (b *Backend) ck(op string) {
	if !b.debug || b.pending != nil {
		return
	}
	if e := ogl.GetError(); e != ogl.NO_ERROR {
		b.pending = fmt.Errorf("%s: %s", op, enumName(e))
	}
}

// takeErr drains glGetError and the debug messages into one error for
// operation op, or nil.
func (b *Backend) takeErr(op string) error {
	var msgs []string
	if b.pending != nil {
		msgs = append(msgs, b.pending.Error())
		b.pending = nil
	}
	for range 16 {
		e := ogl.GetError()
		if e == ogl.NO_ERROR {
			break
		}
		msgs = append(msgs, enumName(e))
	}
	for _, m := range b.dbgErrs {
		msgs = append(msgs, "debug: "+m)
	}
	b.dbgErrs = nil
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("gl: %s: %s", op, strings.Join(msgs, "; "))
}

func enumName(e uint32) string {
	switch e {
	case ogl.INVALID_ENUM:
		return "GL_INVALID_ENUM"
	case ogl.INVALID_VALUE:
		return "GL_INVALID_VALUE"
	case ogl.INVALID_OPERATION:
		return "GL_INVALID_OPERATION"
	case ogl.INVALID_FRAMEBUFFER_OPERATION:
		return "GL_INVALID_FRAMEBUFFER_OPERATION"
	case ogl.OUT_OF_MEMORY:
		return "GL_OUT_OF_MEMORY"
	}
	return fmt.Sprintf("GL error 0x%04x", e)
}

// check validates the shape and slice lengths before any GL work, and
// that every index fits the shaders' 32-bit ints.
func check(s kernels.Shape, lens ...[2]int) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.QKVLen() > math.MaxInt32 || s.ProbsLen() > math.MaxInt32 ||
		s.QKVLen()/s.Dh != s.B*s.T*s.H || s.ProbsLen()/s.T != s.B*s.H*s.T {
		return fmt.Errorf("gl: shape %+v too large for 32-bit indices", s)
	}
	for _, l := range lens {
		if l[0] != l[1] {
			return fmt.Errorf("gl: slice of length %d, want %d for shape %+v", l[0], l[1], s)
		}
	}
	return nil
}

// run executes f on the GL thread and returns its error or the GL errors
// it raised, prefixed with the kernel's name.
func (b *Backend) run(name string, f func()) error {
	var err error
	if cerr := b.call(func() {
		f()
		err = b.takeErr(name)
	}); cerr != nil {
		return cerr
	}
	return err
}

// Barriers: SHADER_STORAGE for a later pass reading an SSBO, BUFFER_UPDATE
// before glGetBufferSubData reads what a shader wrote.
const (
	barrierPass     = ogl.SHADER_STORAGE_BARRIER_BIT
	barrierReadback = ogl.BUFFER_UPDATE_BARRIER_BIT
)

// Probs implements kernels.Backend. The result also stays on the GPU; see
// ProbsBuffer.
func (b *Backend) Probs(s kernels.Shape, q, k, p []float32) error {
	if err := check(s, [2]int{len(q), s.QKVLen()}, [2]int{len(k), s.QKVLen()}, [2]int{len(p), s.ProbsLen()}); err != nil {
		return err
	}
	return b.run("Probs", func() {
		b.upload(slotQ, q)
		b.upload(slotK, k)
		b.output(slotProbs, 4*len(p))
		b.bind(slotQ, slotK, slotProbs)
		b.dispatch(progProbs, s, s.B*s.H*s.T)
		// Also SHADER_STORAGE and PIXEL_BUFFER, for whoever reads the
		// buffer on the GPU through ProbsBuffer.
		ogl.MemoryBarrier(barrierReadback | barrierPass | ogl.PIXEL_BUFFER_BARRIER_BIT)
		b.download(slotProbs, p)
		b.mu.Lock()
		b.probsShape = s
		b.mu.Unlock()
	})
}

// Mix implements kernels.Backend.
func (b *Backend) Mix(s kernels.Shape, p, v, o []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(v), s.QKVLen()}, [2]int{len(o), s.QKVLen()}); err != nil {
		return err
	}
	return b.run("Mix", func() {
		b.upload(slotP, p)
		b.upload(slotV, v)
		b.output(slotOut, 4*len(o))
		b.bind(slotP, slotV, slotOut)
		b.dispatch(progMix, s, len(o))
		ogl.MemoryBarrier(barrierReadback)
		b.download(slotOut, o)
	})
}

// MixGradP implements kernels.Backend.
func (b *Backend) MixGradP(s kernels.Shape, dO, v, dP []float32) error {
	if err := check(s, [2]int{len(dO), s.QKVLen()}, [2]int{len(v), s.QKVLen()}, [2]int{len(dP), s.ProbsLen()}); err != nil {
		return err
	}
	return b.run("MixGradP", func() {
		b.upload(slotDO, dO)
		b.upload(slotV, v)
		b.output(slotDPOut, 4*len(dP))
		b.bind(slotDO, slotV, slotDPOut)
		b.dispatch(progMixGradP, s, len(dP))
		ogl.MemoryBarrier(barrierReadback)
		b.download(slotDPOut, dP)
	})
}

// MixGradV implements kernels.Backend.
func (b *Backend) MixGradV(s kernels.Shape, p, dO, dV []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dO), s.QKVLen()}, [2]int{len(dV), s.QKVLen()}); err != nil {
		return err
	}
	return b.run("MixGradV", func() {
		b.upload(slotP, p)
		b.upload(slotDO, dO)
		b.output(slotOut, 4*len(dV))
		b.bind(slotP, slotDO, slotOut)
		b.dispatch(progMixGradV, s, len(dV))
		ogl.MemoryBarrier(barrierReadback)
		b.download(slotOut, dV)
	})
}

// probsGrad runs the two passes shared by ProbsGradQ and ProbsGradK:
// rowsum(P * dP) per row, then the gather program prog over out's elements
// with x (K or Q) as the third input.
func (b *Backend) probsGrad(name string, prog, xslot int, s kernels.Shape, p, dP, x, out []float32) error {
	return b.run(name, func() {
		b.upload(slotP, p)
		b.upload(slotDP, dP)
		b.upload(xslot, x)
		b.output(slotOut, 4*len(out))
		b.output(slotRS, 4*s.B*s.H*s.T)
		// Binding 4 is the rowsum buffer in both passes (see the shaders).
		b.bind(slotP, slotDP, xslot, slotOut, slotRS)
		b.dispatch(progRowsum, s, s.B*s.H*s.T)
		ogl.MemoryBarrier(barrierPass)
		b.dispatch(prog, s, len(out))
		ogl.MemoryBarrier(barrierReadback)
		b.download(slotOut, out)
	})
}

// ProbsGradQ implements kernels.Backend. It takes two dispatches: the
// row sums, then dQ.
func (b *Backend) ProbsGradQ(s kernels.Shape, p, dP, k, dQ []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dP), s.ProbsLen()}, [2]int{len(k), s.QKVLen()}, [2]int{len(dQ), s.QKVLen()}); err != nil {
		return err
	}
	return b.probsGrad("ProbsGradQ", progProbsGradQ, slotK, s, p, dP, k, dQ)
}

// ProbsGradK implements kernels.Backend. It takes two dispatches: the
// row sums, then dK gathered over keys.
func (b *Backend) ProbsGradK(s kernels.Shape, p, dP, q, dK []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dP), s.ProbsLen()}, [2]int{len(q), s.QKVLen()}, [2]int{len(dK), s.QKVLen()}); err != nil {
		return err
	}
	return b.probsGrad("ProbsGradK", progProbsGradK, slotQ, s, p, dP, q, dK)
}

// Package gl implements kernels.Device on OpenGL 4.3 compute shaders: the
// whole training step of S models ("seeds") of one shape runs on the GPU,
// in lockstep, and nothing crosses to the host but Upload and Download.
//
// Device tensors. Every Alloc is one shader storage buffer (SSBO), zeroed.
// A kernels.Tensor is a view of one: seed s's Len floats start at
// Off + s*Stride, so activations are dense ([S][Len]), a parameter is a
// slice of each seed's parameter block (Stride > Len), and a constant all
// seeds share has Stride 0. Each binding's offset and stride are uniforms
// (common.glsl's off[] and stride[]), not buffer ranges, so any offset
// works and one dispatch covers all S seeds.
//
// S as a leading dimension. Every kernel's grid is S times the grid of one
// seed (one invocation per output element, row, or seed-workgroup),
// flattened and spilled into y beyond 65535 workgroups. What an invocation
// computes, and the order it sums in, depend only on the kernel's shape
// and that seed's inputs, never on S or on the other seeds, and nothing
// sums with float atomics or split reductions: a seed's bits are the same
// alone or in any group (batch invariance), and the same on every run
// (determinism). Sums are `precise`, with fma() where the CPU device fuses
// (its matrix products) and separate roundings where it does not; the
// exponential and the GELU are internal/simd's formulas, not the driver's
// exp, and divisions and square roots that the CPU rounds once are done in
// double and rounded once. The CPU device (backend/cpu) is the reference:
// the kernels agree with it to ~1e-6 relative, not bit for bit.
//
// Asynchronous queue. All GL work runs on a glctx.Thread, the OS thread
// that owns the context. A kernel call validates its arguments on the
// calling goroutine (kernels.Check, plus this device's own limits: the
// buffers are this device's and live, indices fit 32 bits) and returns a
// clear error before any GL work; otherwise it queues its dispatches with
// Thread.Go and returns at once. Every dispatch is followed by a
// SHADER_STORAGE barrier, and a BUFFER_UPDATE barrier precedes the first
// Upload, Download or buffer clear after shader writes. Download and Sync
// wait, and return the first error of the work queued before them. In
// debug mode (Options.Debug or HEADLAB_GL_DEBUG=1) every kernel instead
// waits for its GL work and returns its GL errors with its name.
//
// Input the host never sees (an id or target that is not a whole number in
// range) cannot fail the call that reads it: the shader writes NaN or
// leaves the row out, raises a status flag, and the next Download or Sync
// returns an error naming the kernel (the CPU device returns it at once).
//
// Tensors of one call may share a buffer (an arena, a parameter block),
// but an output must not overlap an input, except in place where every
// element is read by the invocation that writes it: Mul, Add, ColScale,
// GELU (x and out) and Adam (w, m, v). Close must not race with other
// calls.
package gl

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/glctx"
	"headlab/kernels"
)

// Options configures New.
type Options struct {
	// Thread, when set, is an existing GL thread (the viewer's) to run on;
	// Close then leaves it open. Otherwise New makes one with Context and
	// Debug, and Close closes it.
	Thread *glctx.Thread
	// Context picks how a new thread's context is made (glctx.Options:
	// "", "auto", "egl", "egl-device", "egl-surfaceless", "glfw");
	// HEADLAB_GL_CONTEXT overrides it.
	Context string
	// Debug makes every kernel wait for its GL work and return its GL
	// errors (with KHR_debug messages from a debug context) under its own
	// name. HEADLAB_GL_DEBUG=1 sets it too.
	Debug bool
	// Kernels picks the kernels' variant: "staged" (operands go through
	// shared memory: GPUs), "direct" (each invocation loads its own:
	// llvmpipe, where a barrier costs more than the loads it saves), or
	// "" for the renderer's (direct on Mesa's software renderers).
	// HEADLAB_GL_KERNELS overrides it. Both give the same bits.
	Kernels string

	// defines go before every kernel's common.glsl (tests: NV_MAX).
	defines string
}

// ErrClosed is returned by a Device's methods after Close.
var ErrClosed = errors.New("gl: device is closed")

// Device implements kernels.Device with OpenGL compute shaders. Its
// methods may be called from any goroutine, but as for every
// kernels.Device, calls that depend on each other's results must come in
// order from one goroutine at a time.
type Device struct {
	th       *glctx.Thread
	ownTh    bool
	debug    bool
	renderer string
	kind     string
	staged   bool // the kernels' variant (Options.Kernels)
	// maxFloats is the largest buffer, in floats: GL's largest shader
	// storage block, and at most MaxInt32 so that indices fit an int.
	maxFloats int
	memBytes  int64
	memOK     bool

	closed                         atomic.Bool
	closeOnce                      sync.Once
	dispatches, uploaded, readBack atomic.Int64

	// Fields below belong to the GL thread.
	progs   [numProgs]program
	status  uint32 // SSBO of kernels' status flags (binding 7)
	flagged bool   // a kernel that may raise a flag ran since the last check
	dirty   bool   // shader writes since the last BUFFER_UPDATE barrier
	scratch uint32 // SSBO for EmbedGrad's index, grown on demand
	scrN    int    // its size in floats
	live    map[uint32]bool
	// profiling times every dispatch (profile.go): timed waits for its
	// timestamps, queries are free query objects.
	profiling bool
	timed     []timed
	queries   []uint32
	// staging is the upload ring (upload.go); stagingWaits counts the
	// uploads that had to wait for a slot.
	staging      []*staging
	next         int
	stagingWaits int
}

var _ interface {
	kernels.Device
	kernels.Capacity
	kernels.Driver
} = (*Device)(nil)

// gl43 is go-gl's OpenGL 4.3 core package, loaded once per process
// (glctx.Profile).
var gl43 = glctx.Profile{Init: ogl.InitWithProcAddrFunc}

// New makes a Device: on opts.Thread, or on a new GL thread with an
// OpenGL 4.3 core context (EGL without a display, GLFW with one; see
// glctx). It compiles every kernel. Errors are one line.
func New(opts Options) (*Device, error) {
	variant := opts.Kernels
	if v := os.Getenv("HEADLAB_GL_KERNELS"); v != "" {
		variant = v
	}
	switch variant {
	case "", "staged", "direct":
	default:
		return nil, fmt.Errorf("gl: kernels %q: want staged or direct (HEADLAB_GL_KERNELS, Options.Kernels)", variant)
	}
	d := &Device{th: opts.Thread, debug: opts.Debug, live: map[uint32]bool{}}
	if d.th == nil {
		th, err := glctx.New(glctx.Options{Context: opts.Context, Major: 4, Minor: 3, Debug: opts.Debug})
		if err != nil {
			return nil, fmt.Errorf("gl: %w", err)
		}
		d.th, d.ownTh = th, true
	}
	if !d.debug && envDebug() {
		d.debug = true
	}
	d.kind = d.th.Kind()
	var initErr error
	err := d.th.Call(func() { initErr = d.init(variant, opts.defines) })
	if initErr == nil && err != nil {
		initErr = fmt.Errorf("gl: setting up: %v", err)
	}
	if initErr != nil {
		if d.ownTh {
			_ = d.th.Close()
		}
		return nil, initErr
	}
	return d, nil
}

// init loads GL, checks the version and makes the programs (in the
// variant kernels names, or the renderer's) and the device's own buffers.
// It runs on the GL thread; on failure it frees what it made.
func (d *Device) init(variant, defines string) error {
	if err := gl43.Load(d.th); err != nil {
		return fmt.Errorf("gl: loading OpenGL 4.3 functions: missing %v", err)
	}
	var major, minor int32
	ogl.GetIntegerv(ogl.MAJOR_VERSION, &major)
	ogl.GetIntegerv(ogl.MINOR_VERSION, &minor)
	if major < 4 || major == 4 && minor < 3 {
		return fmt.Errorf("gl: OpenGL 4.3 needed, driver gives %d.%d", major, minor)
	}
	d.renderer = ogl.GoStr(ogl.GetString(ogl.RENDERER)) + ", OpenGL " + ogl.GoStr(ogl.GetString(ogl.VERSION))
	var block int64
	ogl.GetInteger64v(ogl.MAX_SHADER_STORAGE_BLOCK_SIZE, &block)
	d.maxFloats = int(min(block/4, math.MaxInt32))
	d.memBytes, d.memOK = memory()
	d.staged = variant == "staged" || variant == "" && !software(d.renderer)
	if err := compileAll(&d.progs, d.staged, defines); err != nil {
		return err
	}
	ogl.GenBuffers(1, &d.status)
	ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, d.status)
	zero := uint32(0)
	ogl.BufferData(ogl.SHADER_STORAGE_BUFFER, 4, unsafe.Pointer(&zero), ogl.DYNAMIC_COPY)
	return nil
}

// memory reads the GPU's total memory from GL_NVX_gpu_memory_info, or
// failing that the free memory GL_ATI_meminfo reports; GL thread only.
func memory() (int64, bool) {
	var n int32
	ogl.GetIntegerv(ogl.NUM_EXTENSIONS, &n)
	nvx, ati := false, false
	for i := range uint32(n) {
		switch ogl.GoStr(ogl.GetStringi(ogl.EXTENSIONS, i)) {
		case "GL_NVX_gpu_memory_info":
			nvx = true
		case "GL_ATI_meminfo":
			ati = true
		}
	}
	const (
		nvxTotalKB = 0x9048 // GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX
		atiVBOFree = 0x87FB // VBO_FREE_MEMORY_ATI: free KB, largest block, ...
	)
	var kb [4]int32
	switch {
	case nvx:
		ogl.GetIntegerv(nvxTotalKB, &kb[0])
	case ati:
		ogl.GetIntegerv(atiVBOFree, &kb[0])
	default:
		return 0, false
	}
	for ogl.GetError() != ogl.NO_ERROR {
	}
	return int64(kb[0]) * 1024, kb[0] > 0
}

// software says whether a renderer is Mesa's software rasteriser.
func software(renderer string) bool {
	r := strings.ToLower(renderer)
	return strings.Contains(r, "llvmpipe") || strings.Contains(r, "softpipe")
}

// Staged says whether the kernels stage their operands through shared
// memory (Options.Kernels).
func (d *Device) Staged() bool { return d.staged }

// Name implements kernels.Device.
func (*Device) Name() string { return "gl" }

// Renderer reports GL_RENDERER and GL_VERSION, e.g. "llvmpipe (LLVM 15.0.6,
// 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6".
func (d *Device) Renderer() string { return d.renderer }

// Context reports how the context was made (glctx's Kind: "egl-device",
// "egl-surfaceless" or "glfw").
func (d *Device) Context() string { return d.kind }

// MaxBufferFloats is the largest buffer Alloc makes, in floats
// (GL_MAX_SHADER_STORAGE_BLOCK_SIZE / 4, at most MaxInt32).
func (d *Device) MaxBufferFloats() int { return d.maxFloats }

// MemoryBytes reports the GPU's memory (GL_NVX_gpu_memory_info's total,
// or GL_ATI_meminfo's free VBO memory), and false when the driver tells
// neither (llvmpipe).
func (d *Device) MemoryBytes() (int64, bool) { return d.memBytes, d.memOK }

// Thread is the GL thread the device runs on. Other GL work (the viewer's
// drawing) may share it through Thread().Call; see BufferID.
func (d *Device) Thread() *glctx.Thread { return d.th }

// Buffer is the GL device's storage: one shader storage buffer.
type Buffer struct {
	dev   *Device
	id    uint32
	n     int
	freed atomic.Bool
}

// Len implements kernels.Buffer.
func (b *Buffer) Len() int { return b.n }

// BufferID returns the GL name of a buffer of this device (0 for any
// other, or a freed one), for GL work of one's own on the device's thread
// (FillTexture, in texture.go, is such work: the viewer's attention
// textures filled without leaving the GPU). Use it inside Thread().Call: the kernels queued before
// that Call have been issued, each followed by a SHADER_STORAGE barrier,
// so a shader reading the buffer sees their results; a read by other
// means (glCopyBufferSubData, a pixel unpack, glGetBufferSubData) needs
// its own glMemoryBarrier (BUFFER_UPDATE, PIXEL_BUFFER) first. The device
// rebinds what it uses for every dispatch, so Call may leave any GL state
// behind, except that it must not delete or resize the buffer.
func (d *Device) BufferID(b kernels.Buffer) uint32 {
	gb, ok := b.(*Buffer)
	if !ok || gb.dev != d || gb.freed.Load() || d.closed.Load() {
		return 0
	}
	return gb.id
}

// Alloc implements kernels.Device: one zeroed SSBO of n floats. It waits
// for the GL thread.
func (d *Device) Alloc(n int) (kernels.Buffer, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	switch {
	case n < 0:
		return nil, fmt.Errorf("gl: Alloc of %d floats", n)
	case n > d.maxFloats:
		return nil, fmt.Errorf("gl: Alloc of %d floats exceeds the largest shader storage buffer, %d floats (%d MiB)", n, d.maxFloats, int64(d.maxFloats)*4>>20)
	}
	b := &Buffer{dev: d, n: n}
	var oom bool
	var glErr error
	err := d.th.Call(func() {
		d.transferBarrier()
		ogl.GenBuffers(1, &b.id)
		ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, b.id)
		// A zero-length store is not allowed everywhere; keep one float.
		ogl.BufferData(ogl.SHADER_STORAGE_BUFFER, 4*max(n, 1), nil, ogl.DYNAMIC_COPY)
		// glctx drained the error flags before this function ran, so any
		// error now is BufferData's.
		switch e := ogl.GetError(); e {
		case ogl.NO_ERROR:
		case ogl.OUT_OF_MEMORY:
			oom = true
		default:
			glErr = fmt.Errorf("GL error 0x%04x", e)
		}
		if oom || glErr != nil {
			ogl.DeleteBuffers(1, &b.id)
			b.id = 0
			return
		}
		ogl.ClearBufferData(ogl.SHADER_STORAGE_BUFFER, ogl.R32F, ogl.RED, ogl.FLOAT, nil)
		d.live[b.id] = true
	})
	switch {
	case oom:
		return nil, fmt.Errorf("gl: Alloc of %d floats: out of GPU memory", n)
	case glErr != nil:
		return nil, fmt.Errorf("gl: Alloc of %d floats: %v", n, glErr)
	case err != nil:
		if b.id != 0 {
			d.Free(b)
		}
		return nil, fmt.Errorf("gl: Alloc: %w", err)
	}
	return b, nil
}

// Free implements kernels.Device. Freeing a buffer that is not this
// device's, or twice, does nothing. Work already queued on the buffer
// completes first (GL keeps it alive until then).
func (d *Device) Free(b kernels.Buffer) {
	gb, ok := b.(*Buffer)
	if !ok || gb.dev != d || d.closed.Load() || gb.freed.Swap(true) {
		return
	}
	d.th.Go(func() {
		if d.live[gb.id] {
			delete(d.live, gb.id)
			ogl.DeleteBuffers(1, &gb.id)
		}
	})
}

// Upload implements kernels.Device. src is copied before Upload returns;
// the copy reaches the buffer in queue order, after the kernels queued
// before it. The host writes only a staging buffer of its own (upload.go)
// that no queued work reads; the GPU copies it into dst when the work
// before it is done, so an upload never waits for kernels still reading
// dst (a step's tokens and targets while the last step runs).
func (d *Device) Upload(dst kernels.Tensor, seeds int, src []float32) error {
	if err := d.check("Upload", seeds, []kernels.Tensor{dst}, []int{0}); err != nil {
		return err
	}
	if len(src) != seeds*dst.Len {
		return fmt.Errorf("gl: Upload of %d floats into %d seeds of %d", len(src), seeds, dst.Len)
	}
	if len(src) == 0 {
		return nil
	}
	// The copy's storage is pooled: a steady run of uploads allocates
	// nothing.
	sp := uploads.Get().(*[]float32)
	if cap(*sp) < len(src) {
		*sp = make([]float32, len(src))
	}
	data := (*sp)[:len(src)]
	copy(data, src)
	d.uploaded.Add(4 * int64(len(data)))
	id := dst.Buf.(*Buffer).id
	return d.queue("Upload", func() {
		defer uploads.Put(sp)
		d.transferBarrier()
		st := d.stagingFor(4 * len(data))
		ogl.BindBuffer(ogl.COPY_READ_BUFFER, st.id)
		ogl.BufferSubData(ogl.COPY_READ_BUFFER, 0, 4*len(data), unsafe.Pointer(&data[0]))
		ogl.BindBuffer(ogl.COPY_WRITE_BUFFER, id)
		if seeds == 1 || dst.Contiguous() {
			ogl.CopyBufferSubData(ogl.COPY_READ_BUFFER, ogl.COPY_WRITE_BUFFER, 0, 4*dst.Off, 4*len(data))
		} else {
			for s := range seeds {
				ogl.CopyBufferSubData(ogl.COPY_READ_BUFFER, ogl.COPY_WRITE_BUFFER, 4*s*dst.Len, 4*dst.Base(s), 4*dst.Len)
			}
		}
		st.fence = ogl.FenceSync(ogl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	})
}

// uploads holds the storage of Upload's copies of its data.
var uploads = sync.Pool{New: func() any { return new([]float32) }}

// Download implements kernels.Device. It waits for every kernel queued
// before it and returns the first error among them.
func (d *Device) Download(dst []float32, src kernels.Tensor, seeds int) error {
	if err := d.check("Download", seeds, []kernels.Tensor{src}, []int{0}); err != nil {
		return err
	}
	if len(dst) != seeds*src.Len {
		return fmt.Errorf("gl: Download of %d seeds of %d into %d floats", seeds, src.Len, len(dst))
	}
	d.readBack.Add(4 * int64(len(dst)))
	id := src.Buf.(*Buffer).id
	var stErr error
	err := d.th.Call(func() {
		d.transferBarrier()
		if len(dst) > 0 {
			ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, id)
			if seeds == 1 || src.Contiguous() {
				ogl.GetBufferSubData(ogl.SHADER_STORAGE_BUFFER, 4*src.Off, 4*len(dst), unsafe.Pointer(&dst[0]))
			} else {
				for s := range seeds {
					ogl.GetBufferSubData(ogl.SHADER_STORAGE_BUFFER, 4*src.Base(s), 4*src.Len, unsafe.Pointer(&dst[s*src.Len]))
				}
			}
		}
		stErr = d.takeStatus()
	})
	return d.firstErr(err, stErr)
}

// Sync implements kernels.Device: it waits until the GPU has finished
// everything queued (glFinish) and returns the first error since the last
// Sync or Download.
func (d *Device) Sync() error {
	if d.closed.Load() {
		return ErrClosed
	}
	var stErr error
	err := d.th.Call(func() {
		ogl.Finish()
		stErr = d.takeStatus()
	})
	return d.firstErr(err, stErr)
}

// firstErr joins a Call's error and a status error into one, preferring
// the first.
func (d *Device) firstErr(callErr, stErr error) error {
	switch {
	case errors.Is(callErr, glctx.ErrClosed):
		return ErrClosed
	case callErr != nil:
		return fmt.Errorf("gl: %w", callErr)
	case stErr != nil:
		return fmt.Errorf("gl: %w", stErr)
	}
	return nil
}

// Stats implements kernels.Device. Dispatches counts glDispatchCompute
// calls (a kernel on empty shapes makes none, EmbedGrad two); Uploaded
// and ReadBack the bytes of Upload and Download, nothing else.
func (d *Device) Stats() kernels.Stats {
	return kernels.Stats{Dispatches: d.dispatches.Load(), Uploaded: d.uploaded.Load(), ReadBack: d.readBack.Load()}
}

// Close implements kernels.Device: it frees every buffer and program and,
// unless the thread was borrowed (Options.Thread), ends the GL thread.
// Later calls return ErrClosed; Close itself may be called again.
func (d *Device) Close() error {
	var err error
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		err = d.th.Call(func() {
			deletePrograms(&d.progs)
			d.deleteQueries()
			d.deleteStaging()
			for id := range d.live {
				ogl.DeleteBuffers(1, &id)
			}
			clear(d.live)
			for _, id := range []*uint32{&d.status, &d.scratch} {
				if *id != 0 {
					ogl.DeleteBuffers(1, id)
					*id = 0
				}
			}
		})
		if d.ownTh {
			if cerr := d.th.Close(); err == nil {
				err = cerr
			}
		}
		if errors.Is(err, glctx.ErrClosed) {
			err = nil // a borrowed thread closed first took everything with it
		}
		if err != nil {
			err = fmt.Errorf("gl: Close: %w", err)
		}
	})
	return err
}

// transferBarrier makes shader writes visible to buffer transfers (and
// orders transfers after them); GL thread only.
func (d *Device) transferBarrier() {
	if d.dirty {
		ogl.MemoryBarrier(ogl.BUFFER_UPDATE_BARRIER_BIT)
		d.dirty = false
	}
}

// statusBits name the kernels that raise status flags.
var statusBits = []struct {
	bit  uint32
	what string
}{
	{bitEmbed, "Embed: an id is not a whole number in 0..rows of the table-1 (its rows are NaN)"},
	{bitEmbedGrad, "EmbedGrad: an id is not a whole number in 0..n-1 (its row is left out)"},
	{bitSoftmaxXent, "SoftmaxXent: a target is not a whole number in 0..v-1 (the loss is NaN)"},
	{bitSoftmaxXentGrad, "SoftmaxXentGrad: a target is not a whole number in 0..v-1"},
}

const (
	bitEmbed = 1 << iota
	bitEmbedGrad
	bitSoftmaxXent
	bitSoftmaxXentGrad
)

// takeStatus reads and clears the status flags when a kernel that raises
// them ran since the last look; GL thread only.
func (d *Device) takeStatus() error {
	if !d.flagged || d.status == 0 {
		return nil
	}
	d.flagged = false
	d.transferBarrier()
	var st uint32
	ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, d.status)
	ogl.GetBufferSubData(ogl.SHADER_STORAGE_BUFFER, 0, 4, unsafe.Pointer(&st))
	if st == 0 {
		return nil
	}
	zero := uint32(0)
	ogl.BufferSubData(ogl.SHADER_STORAGE_BUFFER, 0, 4, unsafe.Pointer(&zero))
	var msgs []string
	for _, b := range statusBits {
		if st&b.bit != 0 {
			msgs = append(msgs, b.what)
		}
	}
	return fmt.Errorf("found on the device: %s", strings.Join(msgs, "; "))
}

// queue runs f on the GL thread: queued (Thread.Go), or, in debug mode,
// waited for, with its GL errors returned under the kernel's name.
func (d *Device) queue(name string, f func()) error {
	if !d.debug {
		d.th.Go(f)
		return nil
	}
	var stErr error
	err := d.th.Call(func() {
		f()
		stErr = d.takeStatus()
	})
	switch {
	case errors.Is(err, glctx.ErrClosed):
		return ErrClosed
	case err != nil:
		return fmt.Errorf("gl: %s: %w", name, err)
	case stErr != nil:
		return fmt.Errorf("gl: %s: %w", name, stErr)
	}
	return nil
}

package kernels

// What a device may add to Device besides kernels (every kernel is a
// method of Kernels). Callers find each ability by asserting one of these
// interfaces, never by a device's name or concrete type:
//
//   - Host: computes in host memory on the calling goroutine (the CPU).
//   - SeedSerial: runs a group's kernels one seed after another (a CPU
//     group's device).
//   - Capacity: has memory of its own and says how much (GL).
//   - Driver: runs through a graphics driver that it names (GL).
//   - Profiler: times each dispatch (GL; profile.go).
//
// One more is declared by its one user, the viewer: window.TextureSource
// (viz/window) fills GL textures from tensors without leaving the GPU; its
// methods name a glctx thread, which kernels, importing nothing, cannot.

// Host is a device that computes in host memory, on the calling goroutine
// (the CPU device). Several goroutines may use it at once, each on tensors
// of its own, and they compute in parallel: work on it is split among
// goroutines, a group of models each. A device that is no Host (GL) runs
// every caller's kernels on one queue, which one goroutine keeps busy.
type Host interface {
	// Group returns a device for the kernels of one group of models
	// (train.Group), used from one goroutine, on this device's memory and
	// counters. It may run a group's kernels in another order than they
	// are called, with the same bits (the CPU's runs them seed by seed).
	Group() Device
}

// SeedSerial is a device that runs a group's kernels seed after seed:
// the kernels called between two host calls (Upload, Download, Sync,
// reading a buffer) run on seed 0, then on seed 1, and so on. A tensor
// that kernels write and read only between two host calls, such as an
// executor's intermediates, can then be one buffer that every seed uses
// in turn (stride 0, from Arena.Scratch): each seed's step works in the
// same memory, which stays in the caches.
type SeedSerial interface {
	// SeedSerial reports whether this device runs seeds one after another.
	SeedSerial() bool
}

// Capacity is what a device with memory of its own tells about its size
// (GL does; the CPU's memory is the host's).
type Capacity interface {
	// MaxBufferFloats is the largest buffer Alloc accepts.
	MaxBufferFloats() int
	// MemoryBytes is the device's memory, when the driver says.
	MemoryBytes() (int64, bool)
}

// Driver is a device that computes through a graphics driver (GL), and
// names it for the records of a run and bench's report.
type Driver interface {
	// Renderer is the driver's name for the GPU and its version (GL's
	// GL_RENDERER and GL_VERSION).
	Renderer() string
	// Context says how the device's context was made (GL: glctx's Kind,
	// "egl-device", "egl-surfaceless" or "glfw").
	Context() string
}

package kernels

// DispatchTime is one device dispatch timed on the device itself (a GL
// timer query), for per-dispatch profiles of a training step.
type DispatchTime struct {
	// Kernel is the Device method that made the dispatch (MatMul,
	// Linear, ...); Program is the device's own name for what ran (a
	// compute shader).
	Kernel, Program string
	Seeds           int
	// Groups are the workgroups of the dispatch, GroupSize the
	// invocations in each.
	Groups    int64
	GroupSize int
	// Nanos is the device's time from just before the dispatch to just
	// after the barrier that follows it.
	Nanos int64
}

// Profiler is a device that can time each of its dispatches (GL does; a
// CPU kernel call is not a dispatch).
type Profiler interface {
	// SetProfiling switches timing on or off for the kernels called
	// after it.
	SetProfiling(on bool) error
	// TakeProfile waits for every kernel called before it and returns
	// the dispatches timed since the last TakeProfile, in order.
	TakeProfile() ([]DispatchTime, error)
}

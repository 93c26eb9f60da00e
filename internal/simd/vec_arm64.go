//go:build arm64 && !purego

package simd

// asmLanes: the elementwise and Adam kernels take whole Q registers.
const asmLanes = 4

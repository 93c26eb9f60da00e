//go:build amd64 && !purego

package simd

// asmLanes: the elementwise and Adam kernels take whole YMM registers.
const asmLanes = 8

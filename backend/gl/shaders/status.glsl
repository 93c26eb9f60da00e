// Status flags a kernel raises on bad input that only the device sees (an
// id that is not a whole number in range); the Go side reads and clears
// them at the next Download or Sync and reports the kernel by its bit.
// Only the kernels that raise flags take this in, at binding 7; the
// others may bind a tensor there.
layout(std430, binding = 7) coherent buffer Status { uint status; };
void flag(uint bit) { atomicOr(status, bit); }

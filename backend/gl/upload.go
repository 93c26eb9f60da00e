package gl

import ogl "github.com/go-gl/gl/v4.3-core/gl"

// The upload ring. Upload writes its data into a staging buffer with
// glBufferSubData and has the GPU copy it where it belongs
// (glCopyBufferSubData), in queue order. A staging buffer is written only
// when the copy that last read it has completed (its fence has
// signalled): the host never writes a buffer that queued work still
// reads, so the driver has nothing to wait for. stagingSlots of them let
// two steps' tokens and targets be in flight at once; past that, an
// upload waits for the oldest copy (the GPU is then more than two steps
// behind, and the host has nothing better to do).

// stagingSlots is the ring's size: two uploads a step, two steps.
const stagingSlots = 4

// staging is one buffer of the ring.
type staging struct {
	id    uint32
	bytes int
	fence uintptr // set after the copy that reads it; 0 when none
}

// stagingFor returns a staging buffer of at least n bytes that no queued
// copy reads; GL thread only.
func (d *Device) stagingFor(n int) *staging {
	var st *staging
	for range d.staging {
		c := d.staging[d.next]
		d.next = (d.next + 1) % len(d.staging)
		if c.free(0) {
			st = c
			break
		}
	}
	if st == nil && len(d.staging) < stagingSlots {
		st = &staging{}
		ogl.GenBuffers(1, &st.id)
		d.staging = append(d.staging, st)
	}
	if st == nil {
		d.stagingWaits++
		st = d.staging[d.next]
		d.next = (d.next + 1) % len(d.staging)
		for !st.free(1e9) {
		}
	}
	if st.bytes < n {
		ogl.BindBuffer(ogl.COPY_READ_BUFFER, st.id)
		ogl.BufferData(ogl.COPY_READ_BUFFER, n, nil, ogl.STREAM_DRAW)
		st.bytes = n
	}
	return st
}

// free says whether the copy that read st has completed, waiting up to
// timeout nanoseconds for it; it drops the fence once it has (or once
// the wait fails, which leaves a GL error for the queue to report).
func (st *staging) free(timeout uint64) bool {
	if st.fence == 0 {
		return true
	}
	if ogl.ClientWaitSync(st.fence, ogl.SYNC_FLUSH_COMMANDS_BIT, timeout) == ogl.TIMEOUT_EXPIRED {
		return false
	}
	ogl.DeleteSync(st.fence)
	st.fence = 0
	return true
}

// deleteStaging frees the ring; GL thread only.
func (d *Device) deleteStaging() {
	for _, st := range d.staging {
		if st.fence != 0 {
			ogl.DeleteSync(st.fence)
		}
		ogl.DeleteBuffers(1, &st.id)
	}
	d.staging, d.next = nil, 0
}

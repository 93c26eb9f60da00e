package gl

import (
	"os"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/kernels"
)

// Per-dispatch timing. With profiling on, every dispatch is bracketed by
// two GL_TIMESTAMP queries (glQueryCounter): the GPU's clock just before
// the dispatch and just after the barrier that follows it, so a dispatch's
// time is its own, gaps while the GPU waits for the host left out.
// GL_TIME_ELAPSED around a compute dispatch reads 0 on Mesa's llvmpipe;
// timestamps work there and on NVIDIA alike. The queries are read when
// the profile is taken, never during the step.

// EnvProfile says whether HEADLAB_GL_PROFILE=1 asks for per-dispatch
// timings (headlab bench reads it).
func EnvProfile() bool { return os.Getenv("HEADLAB_GL_PROFILE") == "1" }

var _ kernels.Profiler = (*Device)(nil)

// timed is a dispatch waiting for its timestamps; GL thread only.
type timed struct {
	rec          kernels.DispatchTime
	start, ended uint32 // the queries
}

// SetProfiling implements kernels.Profiler: kernels called after it are
// timed (or no longer timed) dispatch by dispatch.
func (d *Device) SetProfiling(on bool) error {
	if d.closed.Load() {
		return ErrClosed
	}
	return d.queue("SetProfiling", func() { d.profiling = on })
}

// TakeProfile implements kernels.Profiler. It waits for the GPU to reach
// the last timed dispatch.
func (d *Device) TakeProfile() ([]kernels.DispatchTime, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	var out []kernels.DispatchTime
	err := d.th.Call(func() {
		out = make([]kernels.DispatchTime, len(d.timed))
		for i, t := range d.timed {
			var a, b uint64
			ogl.GetQueryObjectui64v(t.start, ogl.QUERY_RESULT, &a)
			ogl.GetQueryObjectui64v(t.ended, ogl.QUERY_RESULT, &b)
			out[i] = t.rec
			out[i].Nanos = int64(b - a)
			d.queries = append(d.queries, t.start, t.ended)
		}
		d.timed = d.timed[:0]
	})
	if err := d.firstErr(err, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// query returns an unused query object; GL thread only.
func (d *Device) query() uint32 {
	if n := len(d.queries); n > 0 {
		q := d.queries[n-1]
		d.queries = d.queries[:n-1]
		return q
	}
	var q uint32
	ogl.GenQueries(1, &q)
	return q
}

// deleteQueries frees every query object; GL thread only.
func (d *Device) deleteQueries() {
	for _, t := range d.timed {
		d.queries = append(d.queries, t.start, t.ended)
	}
	d.timed = nil
	if len(d.queries) > 0 {
		ogl.DeleteQueries(int32(len(d.queries)), &d.queries[0])
	}
	d.queries = nil
}

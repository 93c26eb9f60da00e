package glctx

// A Thread's loop: one locked OS thread taking its functions from a plain
// queue, in order, as Ebitengine's internal/thread; and the errors and
// panics they leave.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"headlab/glctx/egl"
	"headlab/glctx/glcore"
)

// job is one queued function: Go's (res nil), Call's, Sync's (f nil), or
// the Thread's end (Close: end set).
type job struct {
	f   func()
	res chan result
	end bool
}

// result is what the loop hands back to a waiting Call or Sync.
type result struct {
	err      error
	p        any
	panicked bool
}

// resPool recycles the one-slot channels Call and Sync wait on, so a Call
// costs no allocation beyond its closure.
var resPool = sync.Pool{New: func() any { return make(chan result, 1) }}

// loop makes t's context on a locked OS thread of its own and runs t's
// queue until Close. The thread is never unlocked, so it ends with the
// goroutine, after a runtime.Goexit too: the jobs left then get ErrClosed
// and the context is freed.
func (t *Thread) loop(o Options, kinds []string, ready chan<- error, abandon <-chan struct{}) {
	runtime.LockOSThread()
	t.tid = self()
	exited := true
	defer func() {
		t.mu.Lock()
		t.closing = true
		t.mu.Unlock()
		if exited && !t.finished() {
			t.closeErr = errGoexit
			t.free()
		}
		for _, j := range append(t.batch[t.next:], t.jobs...) {
			if j.res != nil {
				j.res <- result{err: ErrClosed}
			}
		}
		if t.usedEGL {
			egl.ReleaseThread()
		}
	}()
	if t.start(o, kinds, ready, abandon) {
		t.serve()
	}
	exited = false
}

// serve runs queued jobs until the end job. It takes the whole queue at
// once, so that Go is cheap.
func (t *Thread) serve() {
	for {
		t.mu.Lock()
		for len(t.jobs) == 0 {
			t.wake.Wait()
		}
		t.batch, t.jobs = t.jobs, t.batch[:0]
		t.mu.Unlock()
		for t.next = 0; t.next < len(t.batch); {
			j := t.batch[t.next]
			t.batch[t.next] = job{}
			t.next++
			if j.end {
				t.closeErr = t.takePending()
				t.free()
				return
			}
			t.run(j)
		}
	}
}

// run runs one job; a runtime.Goexit in it gives its caller errGoexit.
func (t *Thread) run(j job) {
	ok := false
	defer func() {
		if !ok && j.res != nil {
			j.res <- result{err: errGoexit}
		}
	}()
	if j.res != nil {
		j.res <- t.runCall(j.f)
	} else {
		t.runGo(j.f)
	}
	ok = true
}

// push queues j, or reports ErrClosed once t is closing. It never blocks.
func (t *Thread) push(j job) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return ErrClosed
	}
	t.closing = j.end
	t.jobs = append(t.jobs, j)
	t.wake.Signal()
	return nil
}

// free releases t's context and ends t.
func (t *Thread) free() {
	if err := t.release(); t.closeErr == nil {
		t.closeErr = err
	}
	close(t.done)
}

// runGo runs f for Go. A panic or (in debug mode) a GL error is kept for
// the next Call or Sync.
func (t *Thread) runGo(f func()) {
	p, panicked := protect(f)
	switch {
	case panicked:
		// GL errors before the panic came first.
		t.keep(glcore.TakeErr(t.dbg, "in work queued with Go"))
		t.keep(fmt.Errorf("glctx: panic in work queued with Go: %v", p))
	case t.debug:
		t.keep(glcore.TakeErr(t.dbg, "in work queued with Go"))
	}
}

// runCall runs f (nil for Sync) for Call on the loop. Errors of earlier Go
// work come first; after a panic they stay kept for the next Call or Sync.
func (t *Thread) runCall(f func()) result {
	before := t.takePending()
	if f == nil {
		return result{err: before}
	}
	p, panicked := protect(f)
	if panicked {
		_ = glcore.TakeErr(t.dbg, "") // the panic is the report
		t.pending = before
		return result{p: p, panicked: true}
	}
	err := glcore.TakeErr(t.dbg, "in Call")
	if before != nil {
		err = before
	}
	return result{err: err}
}

// keep records err as the pending error unless one is already kept.
func (t *Thread) keep(err error) {
	if t.pending == nil {
		t.pending = err
	}
}

// takePending returns and clears the first error of Go work, checking GL's
// error flags first: outside debug mode Go work is not checked one by one,
// because glGetError can be a round trip to the driver on some GPUs.
func (t *Thread) takePending() error {
	t.keep(glcore.TakeErr(t.dbg, "in work queued with Go"))
	err := t.pending
	t.pending = nil
	return err
}

// protect runs f and reports a panic's value instead of unwinding.
func protect(f func()) (p any, panicked bool) {
	panicked = true
	defer func() {
		if panicked {
			p = recover()
		}
	}()
	f()
	return nil, false
}

// finished reports whether t has ended.
func (t *Thread) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// onLoop reports whether the caller runs on t's loop (inside work running
// there). The thread id is read before done is checked: a live loop's id
// belongs to nobody else, while a finished one's may be reused.
func (t *Thread) onLoop() bool {
	id := self()
	return !t.finished() && id == t.tid
}

// call runs f (nil for Sync) on the loop after the work queued before it,
// and waits for its result; from the loop itself it runs f at once.
func (t *Thread) call(f func()) result {
	if t.onLoop() {
		return t.runCall(f)
	}
	res := resPool.Get().(chan result)
	defer resPool.Put(res)
	if err := t.push(job{f: f, res: res}); err != nil {
		return result{err: err}
	}
	return <-res
}

// Call runs f on the loop with the context current and waits for it.
// It returns the first error since the last Call or Sync: one of work queued
// with Go, or the GL errors f left (glGetError drained, and in debug mode
// the KHR_debug error messages), so that they are not blamed on later work;
// or ErrClosed. A panic in f is re-raised in the caller. Called from the
// loop itself (inside f), it runs f at once.
func (t *Thread) Call(f func()) error {
	r := t.call(f)
	if r.panicked {
		panic(r.p)
	}
	return r.err
}

// Go queues f for the loop and returns at once, so that a caller can queue
// many dispatches without waiting for each. A panic or GL error in f is
// kept and returned by the next Call or Sync. After Close, f is dropped.
func (t *Thread) Go(f func()) {
	if f != nil {
		_ = t.push(job{f: f})
	}
}

// Sync waits until everything queued before it has run and returns the
// first error since the last Sync or Call, or ErrClosed. It must not be
// called inside t's own work, where it would wait for itself.
func (t *Thread) Sync() error {
	if t.onLoop() {
		return errors.New("glctx: Sync called on the GL thread (inside Call or Go) would wait for itself")
	}
	return t.call(nil).err
}

// Close runs the work already queued, frees the context (and window) and
// ends the Thread. It returns an error of that work not yet reported, or
// one from freeing the context. Later calls do nothing and return nil; Call
// and Sync then return ErrClosed and Go drops its function.
func (t *Thread) Close() error {
	if t.onLoop() {
		return errors.New("glctx: Close called on the GL thread (inside Call or Go) would wait for itself")
	}
	var err error
	t.closeOnce.Do(func() {
		_ = t.push(job{end: true}) // ErrClosed: t died, done is closed
		<-t.done
		err = t.closeErr
	})
	return err
}

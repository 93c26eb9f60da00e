package train

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/faultdev"
	"headlab/kernels"
)

// TestRunEndsAsDivergedWithItsReason trains one model through Run on a
// device whose gradient turns infinite mid-run and at the last step:
// Run fails with the step and the reason, never returning a model.
func TestRunEndsAsDivergedWithItsReason(t *testing.T) {
	c := Defaults("majority")
	c.Steps, c.DModel, c.DFF = 6, 16, 16
	for _, f := range []struct {
		at   int
		want string
	}{
		{2, "training diverged at step 3: loss is NaN"},
		{6, "training diverged at step 6: the weights are not finite"},
	} {
		m, _, err := Run(c, &faultdev.Device{Device: cpu.New(), At: f.at}, 0, nil)
		if err == nil || !strings.HasPrefix(err.Error(), f.want) || m != nil {
			t.Errorf("fault at %d: model %v, error %v; want %q", f.at, m != nil, err, f.want)
		}
	}
	if _, _, err := Run(c, &faultdev.Device{Device: cpu.New(), At: 7}, 0, nil); err != nil {
		t.Errorf("a fault after the last step: %v", err)
	}
}

// allocLimit is a CPU device whose Alloc fails after n buffers, as a GPU
// out of memory (or past its largest buffer) does.
type allocLimit struct {
	kernels.Device
	n int
}

func (d *allocLimit) Alloc(n int) (kernels.Buffer, error) {
	if d.n--; d.n < 0 {
		return nil, errors.New("out of device memory")
	}
	return d.Device.Alloc(n)
}

// TestNewGroupFailsCleanly: a group whose device runs out of memory at
// any point while it is built returns the device's error; it never
// panics (it used to close a nil Group).
func TestNewGroupFailsCleanly(t *testing.T) {
	c := Defaults("majority")
	c.DModel, c.DFF = 16, 16
	for n := 0; ; n++ {
		g, err := NewGroup([]Config{c, c}, &allocLimit{Device: cpu.New(), n: n})
		if err == nil {
			g.Close()
			if n == 0 {
				t.Fatal("a group was built without a buffer")
			}
			return
		}
		if g != nil || !strings.Contains(err.Error(), "out of device memory") {
			t.Fatalf("after %d buffers: group %v, error %v", n, g != nil, err)
		}
	}
}

// TestGroupTrainHooksAndAbort: Group.Train calls each hook after every
// Every-th step and after the last (never one of Every 0), stops at a
// hook's error, and takes no step once abort is closed.
func TestGroupTrainHooksAndAbort(t *testing.T) {
	c := Defaults("majority")
	c.Steps, c.DModel, c.DFF = 7, 16, 16
	newGroup := func() *Group {
		g, err := NewGroup([]Config{c, c}, cpu.New())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	var at []int
	g := newGroup()
	diverged, err := g.Train(nil,
		GroupHook{Every: 3, Fn: func(step int) error { at = append(at, step); return nil }},
		GroupHook{Fn: func(int) error { t.Error("a hook of Every 0 was called"); return nil }})
	if err != nil || len(diverged) != 2 || diverged[0] != nil || diverged[1] != nil || g.Step != 7 || !slices.Equal(at, []int{3, 6, 7}) {
		t.Errorf("Train = %v, %v after %d steps, hook at %v; want no divergence after 7 steps, hook at 3, 6, 7", diverged, err, g.Step, at)
	}
	stop := errors.New("stop")
	g = newGroup()
	if _, err := g.Train(nil, GroupHook{Every: 2, Fn: func(int) error { return stop }}); err != stop || g.Step != 2 {
		t.Errorf("a hook's error: Train = %v after %d steps, want it after 2", err, g.Step)
	}
	abort := make(chan struct{})
	close(abort)
	g = newGroup()
	if _, err := g.Train(abort); err != ErrAborted || g.Step != 0 {
		t.Errorf("closed abort: Train = %v after %d steps, want ErrAborted after none", err, g.Step)
	}
}

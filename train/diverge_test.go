package train

import (
	"errors"
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

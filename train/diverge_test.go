package train

import (
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/faultdev"
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

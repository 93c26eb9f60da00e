package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/inspect"
	"headlab/internal/faultdev"
	"headlab/kernels"
	"headlab/train"
)

// devices are the backends the divergence tests run on: the CPU, and GL
// where a context can be made (it must be under CI).
func devices(t *testing.T) map[string]func() kernels.Device {
	out := map[string]func() kernels.Device{"cpu": func() kernels.Device { return cpu.New() }}
	d, err := gl.New(gl.Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and no OpenGL 4.3 context: %v", err)
		}
		t.Logf("gl not tested: %v", err)
		return out
	}
	d.Close()
	out["gl"] = func() kernels.Device {
		d, err := gl.New(gl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	return out
}

// TestDivergedSeedIsStoredAsFailed runs a sweep of three seeds as one
// group through the real loop on a device whose gradient for seed 2
// turns infinite at one step: mid-run (its weights go NaN, the next
// step's loss is NaN) and at the last step (the weights are NaN and no
// loss saw them). That seed alone is stored as failed with the reason;
// the other two are stored as they are without the fault, every
// measurement included (the diverged model's circuit scores cannot be
// computed, and that fails no other run).
func TestDivergedSeedIsStoredAsFailed(t *testing.T) {
	const steps = 6
	pairs := Pairs([]train.Config{tiny("majority", steps)}, []uint64{1, 2, 3})
	for name, newDev := range devices(t) {
		clean := map[uint64]Record{}
		every := Analysis{Ablation: inspect.AblateResample, Measure: AllMeasures()}
		if name == "gl" {
			// The probed graph's passes are slow on a software renderer;
			// the circuit scores are what a diverged model fails.
			every = Analysis{Measure: MeasureSet{MeasureCircuit}}
		}
		outs, err := RunGroup(pairs, Platform{Device: newDev()}, every, GroupHooks{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			clean[o.Record.Config.Seed] = o.Record
		}
		for _, fault := range []struct {
			at   int
			want string
		}{
			{3, "training diverged at step 4: the loss was not finite"},
			{steps, "training diverged at step 6: the weights are not finite"},
		} {
			st, err := Create(filepath.Join(t.TempDir(), "d.db"))
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Workers: 1, Group: 3, Analysis: every, NewPlatform: func() (Platform, error) {
				return Platform{Device: &faultdev.Device{Device: newDev(), Seed: 1, At: fault.at}}, nil
			}}
			sum, err := Run(context.Background(), st, pairs, opt)
			if err != nil || sum.Done != 3 || sum.Failed != 1 {
				t.Fatalf("%s, fault at %d: Run = %+v, %v", name, fault.at, sum, err)
			}
			recs, err := st.Records()
			st.Close()
			if err != nil || len(recs) != 3 {
				t.Fatalf("%s: %d records, %v", name, len(recs), err)
			}
			for _, r := range recs {
				seed := r.Config.Seed
				if seed == 2 {
					if r.Status != StatusFailed || !strings.HasPrefix(r.Error, fault.want) {
						t.Errorf("%s, fault at %d: seed 2 stored %s %q, want failed %q", name, fault.at, r.Status, r.Error, fault.want)
					}
					continue
				}
				c := clean[seed]
				if f, a, b := Differ(&r, &c); f != "" || r.Heads[0].Circuit == nil {
					t.Errorf("%s, fault at %d: seed %d stored %s, without the fault %s (%s)", name, fault.at, seed, a, b, f)
				}
			}
		}
	}
}

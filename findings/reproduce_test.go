package findings

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/sweep"
	"headlab/tasks"
)

// usedDevice is a device that counts the floats allocated on it.
type usedDevice struct {
	kernels.Device
	floats atomic.Int64
}

func (u *usedDevice) Alloc(n int) (kernels.Buffer, error) {
	u.floats.Add(int64(n))
	return u.Device.Alloc(n)
}

// reproduceOptions runs p into dir: the sweep's runs on a CPU device of
// their own, everything else on dev; drawn counts the pictures drawn.
func reproduceOptions(p Plan, dir string, dev kernels.Device, drawn map[string]int) ReproduceOptions {
	draw := func(name string) func(string) error {
		return func(path string) error {
			drawn[name]++
			return os.WriteFile(path, nil, 0o644)
		}
	}
	return ReproduceOptions{
		Plan: p, Out: dir, Quiet: true, Stderr: io.Discard, Device: dev, Workers: 1, Sharing: 1,
		Platform: func(d kernels.Device) sweep.Platform { return sweep.Platform{Device: d} },
		Sweep: func(st *sweep.Store, pairs []sweep.Pair, keep func(*sweep.Outcome)) (sweep.Summary, error) {
			return sweep.Run(context.Background(), st, pairs, sweep.Options{Workers: 1, Group: 4, Keep: keep, Analysis: ReproduceAnalysis(p),
				NewPlatform: func() (sweep.Platform, error) { return sweep.Platform{Device: cpu.New()}, nil }})
		},
		Each: func(n int, _, _ string, do func(int, kernels.Device) error) error {
			var errs []error
			for i := range n {
				errs = append(errs, do(i, dev))
			}
			return errors.Join(errs...)
		},
		Draw: Drawing{
			Heads:    func(path string, _ *sweep.Outcome) error { return draw("heads")(path) },
			Grokking: func(path string, _ *Grokking) error { return draw("grokking")(path) },
			Histograms: func(dir string, reports []sweep.ConfigReport) error {
				for i := range reports {
					if err := draw("histogram")(sweep.HistogramFile(dir, ".png", &reports[i])); err != nil {
						return err
					}
				}
				return nil
			},
			Atlas: func(path string, _ []sweep.ConfigAtlas) error { return draw("atlas")(path) },
		},
	}
}

// TestReproduceOnTheGivenDevice runs a tiny plan: the claims' extra
// measurements are taken on the device passed in (while the sweep runs
// on devices of its own), the report and claims.json are written, and a
// resumed reproduce trains nothing again.
func TestReproduceOnTheGivenDevice(t *testing.T) {
	dir := t.TempDir()
	p := NewPlan(1, 1, 0.002, false, tasks.NextToken).WithAtlas(0)
	dev := &usedDevice{Device: cpu.New()}
	drawn := map[string]int{}
	o := reproduceOptions(p, dir, dev, drawn)
	sweepRun := o.Sweep
	var duringSweep int64
	o.Sweep = func(st *sweep.Store, pairs []sweep.Pair, keep func(*sweep.Outcome)) (sweep.Summary, error) {
		sum, err := sweepRun(st, pairs, keep)
		duringSweep = dev.floats.Load()
		return sum, err
	}
	res, err := Reproduce(o)
	if err != nil {
		t.Fatal(err)
	}
	if duringSweep == 0 {
		t.Error("the extra measurements taken during the sweep allocated nothing on the device passed in")
	}
	if res.Summary.Done != len(p.Pairs()) || res.Summary.Failed != 0 {
		t.Errorf("summary %+v, want %d runs done", res.Summary, len(p.Pairs()))
	}
	md, err := os.ReadFile(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Claim 7. Induction heads form in a burst") {
		t.Error("findings.md lacks claim 7")
	}
	data, err := os.ReadFile(filepath.Join(dir, "findings", ClaimsFile))
	if err != nil {
		t.Fatal(err)
	}
	if drawn["heads"] != 1 || drawn["grokking"] != 1 || drawn["histogram"] == 0 || drawn["atlas"] != 0 {
		t.Errorf("pictures drawn: %v, want one heatmap, one grokking figure, histograms and no atlas", drawn)
	}
	// Resumed: every run is stored, every extra measurement and history
	// is in claims.json: nothing computes on the device again.
	dev.floats.Store(0)
	o.Resume = true
	res, err = Reproduce(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Skipped != len(p.Pairs()) || res.Summary.Done != 0 || dev.floats.Load() != 0 {
		t.Errorf("resumed: summary %+v, %d floats allocated on the device; want every run kept and nothing computed", res.Summary, dev.floats.Load())
	}
	again, err := os.ReadFile(filepath.Join(dir, "findings", ClaimsFile))
	if err != nil || string(again) != string(data) {
		t.Errorf("resumed: claims.json changed (%v)", err)
	}
}

// TestReproduceRefusesABadClaimsFile: a resumed reproduce that cannot read
// its claims.json says so before it runs or opens anything.
func TestReproduceRefusesABadClaimsFile(t *testing.T) {
	dir := t.TempDir()
	pics := filepath.Join(dir, "findings")
	if err := os.MkdirAll(pics, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pics, ClaimsFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := reproduceOptions(NewPlan(1, 1, 0.002, false, tasks.NextToken), dir, cpu.New(), map[string]int{})
	o.Resume = true
	o.Sweep = func(*sweep.Store, []sweep.Pair, func(*sweep.Outcome)) (sweep.Summary, error) {
		t.Fatal("the sweep ran")
		return sweep.Summary{}, nil
	}
	_, err := Reproduce(o)
	var bad *ClaimsFileError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "remove it to measure the claims again") {
		t.Fatalf("got %v, want a ClaimsFileError", err)
	}
	if _, err := os.Stat(filepath.Join(pics, "findings.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database was made: %v", err)
	}
}

// TestReproduceStopsWhenInterrupted: an interrupted sweep ends the
// workflow: no runs again, no pictures, no report.
func TestReproduceStopsWhenInterrupted(t *testing.T) {
	dir := t.TempDir()
	drawn := map[string]int{}
	o := reproduceOptions(NewPlan(1, 1, 0.002, false, tasks.NextToken), dir, cpu.New(), drawn)
	o.Sweep = func(_ *sweep.Store, pairs []sweep.Pair, _ func(*sweep.Outcome)) (sweep.Summary, error) {
		return sweep.Summary{Total: len(pairs), Interrupted: true}, nil
	}
	o.Each = func(int, string, string, func(int, kernels.Device) error) error {
		t.Fatal("work after an interrupted sweep")
		return nil
	}
	res, err := Reproduce(o)
	if err != nil || !res.Summary.Interrupted {
		t.Fatalf("got %+v, %v; want an interrupted summary", res.Summary, err)
	}
	if _, err := os.Stat(res.Report); !errors.Is(err, os.ErrNotExist) || len(drawn) != 0 {
		t.Errorf("after an interruption: report %v, pictures %v", err, drawn)
	}
}

package bench

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// cpuBackend is the CPU as `headlab bench` runs it, with workers groups.
func cpuBackend(workers int) Backend {
	return Backend{Name: "cpu", Workers: workers, Open: func() (kernels.Device, func(), error) {
		return cpu.New(), func() {}, nil
	}}
}

// glBackend is the shared GL device, one group of S.
func glBackend(tb testing.TB) Backend {
	dev := openGL(tb)
	return Backend{Name: "gl", Workers: 1, Open: func() (kernels.Device, func(), error) { return dev, func() {}, nil }}
}

func TestShares(t *testing.T) {
	for _, c := range []struct {
		S, w int
		want []int
	}{{1, 2, []int{1}}, {2, 2, []int{1, 1}}, {3, 2, []int{2, 1}}, {7, 3, []int{3, 2, 2}}, {1024, 2, []int{512, 512}}, {5, 1, []int{5}}} {
		if got := Shares(c.S, c.w); !slices.Equal(got, c.want) {
			t.Errorf("Shares(%d, %d) = %v, want %v", c.S, c.w, got, c.want)
		}
	}
}

// netKernels is the launches of one Run of the training Net of c, built
// here on its own.
func netKernels(t *testing.T, c train.Config) (bytes int64, kernels, params int) {
	t.Helper()
	tk, _ := tasks.New(c.Task)
	b, err := graph.NewBlock(cpu.New(), c.Model(tk), 2)
	if err != nil {
		t.Fatal(err)
	}
	n, err := graph.BuildTrain(b, c.Batch, tasks.LossPositions(tk, c.Loss))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	bytes, kernels = n.Traffic()
	return bytes, kernels, b.P
}

func TestSeedTraffic(t *testing.T) {
	c := BenchConfig(64, tasks.NextToken)
	bytes, k, err := SeedTraffic(c)
	if err != nil {
		t.Fatal(err)
	}
	net, nk, P := netKernels(t, c)
	if P != 18704 {
		t.Fatalf("default model has %d parameters, want 18,704", P)
	}
	if k != nk || bytes != net+7*4*18704 {
		t.Errorf("SeedTraffic = %d bytes, %d kernels; the Net moves %d bytes in %d kernels, Adam 7*P*4", bytes, k, net, nk)
	}
	// The unfused step moves tens of MB (docs: ~30 MB at batch 64).
	if bytes < 5e6 || bytes > 1e8 {
		t.Errorf("%d bytes per seed-step", bytes)
	}
}

// checkRow checks a row's figures against what a training step must move:
// the tokens and targets of every model up, nothing back.
func checkRow(t *testing.T, r GroupResult, c train.Config, S int) {
	t.Helper()
	tk, _ := tasks.New(c.Task)
	if r.Group != S {
		t.Errorf("group %d, want %d", r.Group, S)
	}
	if r.ReadbackBytesPerStep != 0 {
		t.Errorf("S=%d: %v bytes read back per step, want 0", S, r.ReadbackBytesPerStep)
	}
	// A training step uploads the tokens, and the targets and the answers
	// of the rows its loss reads only.
	if want := float64(c.Batch * (tk.SeqLen() + 2*len(tasks.LossPositions(tk, c.Loss))) * 4 * S); r.UploadBytesPerStep != want {
		t.Errorf("S=%d: %v bytes uploaded per step, want tokens+targets+answers = %v", S, r.UploadBytesPerStep, want)
	}
	if r.SeedStepsPerS <= 0 || r.MsPerStep <= 0 || r.GFLOPs <= 0 || r.GBs <= 0 {
		t.Errorf("S=%d: %+v", S, r)
	}
	// Seed-steps/s and ms/step describe the same time.
	if got := r.SeedStepsPerS * r.MsPerStep / 1000; math.Abs(got-float64(S)) > 1e-6*float64(S) {
		t.Errorf("S=%d: seed-steps/s x s/step = %v", S, got)
	}
	traffic, _, _ := SeedTraffic(c)
	flops := StepFlops(c.Model(tk), c.Batch, tasks.LossPositions(tk, c.Loss))
	if math.Abs(r.GFLOPs*1e9/r.SeedStepsPerS-flops) > 1e-6*flops || math.Abs(r.GBs*1e9/r.SeedStepsPerS-float64(traffic)) > 1e-6*float64(traffic) {
		t.Errorf("S=%d: GFLOP/s %v, GB/s %v at %v seed-steps/s", S, r.GFLOPs, r.GBs, r.SeedStepsPerS)
	}
}

// TestGroupsCPU: on the CPU, each worker's group makes the Net's kernel
// launches plus MarkDiverged and Adam per step (uploads are not
// dispatches), whatever its size; uploads are the batches, nothing is read
// back.
func TestGroupsCPU(t *testing.T) {
	c := BenchConfig(8, tasks.NextToken)
	_, k, _ := netKernels(t, c)
	for _, S := range []int{1, 2, 3} {
		r, err := Groups(cpuBackend(2), c, S, Timing{Steps: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkRow(t, r, c, S)
		if want := float64(min(S, 2) * (k + 2)); r.DispatchesPerStep != want {
			t.Errorf("S=%d: %v dispatches per step, want %d groups x (%d + 2)", S, r.DispatchesPerStep, min(S, 2), k)
		}
	}
}

// TestGroupsGL: on GL one group of S makes the same dispatches whatever S,
// the cost model's, uploads only the batches and reads nothing back.
func TestGroupsGL(t *testing.T) {
	b := glBackend(t)
	c := BenchConfig(4, tasks.NextToken)
	calls, err := StepCalls(c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ModelStep(calls, 1)
	if err != nil {
		t.Fatal(err)
	}
	var d1 float64
	for _, S := range []int{1, 2} {
		r, err := Groups(b, c, S, Timing{Steps: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkRow(t, r, c, S)
		if r.DispatchesPerStep != float64(len(m.Dispatches)) {
			t.Errorf("S=%d: %v dispatches per step, the cost model's %d", S, r.DispatchesPerStep, len(m.Dispatches))
		}
		if S == 1 {
			d1 = r.DispatchesPerStep
		} else if r.DispatchesPerStep != d1 {
			t.Errorf("%v dispatches per step at S=2, %v at S=1", r.DispatchesPerStep, d1)
		}
	}
}

// small is a CPU device that says its buffers hold floats floats.
type small struct {
	*cpu.Device
	floats int
}

func (s small) MaxBufferFloats() int       { return s.floats }
func (s small) MemoryBytes() (int64, bool) { return 0, false }

// TestCurveSkipsTooLarge: a group the device cannot hold is skipped with
// one report, and the curve goes on.
func TestCurveSkipsTooLarge(t *testing.T) {
	c := BenchConfig(4, tasks.NextToken)
	largest, _, err := train.Footprint(c, false)
	if err != nil {
		t.Fatal(err)
	}
	b := Backend{Name: "tiny", Workers: 1, Open: func() (kernels.Device, func(), error) {
		return small{cpu.New(), 3 * largest}, func() {}, nil
	}}
	var skipped []error
	rows, err := Curve(b, c, []int{4, 1, 3}, Timing{Steps: 1}, 0, func(err error) { skipped = append(skipped, err) })
	if err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if len(skipped) != 1 || !errors.As(skipped[0], &tl) || tl.S != 4 || tl.Limit != 3 {
		t.Fatalf("skipped %v", skipped)
	}
	if len(rows) != 2 || rows[0].Group != 1 || rows[1].Group != 3 {
		t.Fatalf("rows %+v", rows)
	}
}

// TestCurveSkipsTooSlow: a size whose step, at the last measured size's
// speed, would take longer than maxStep is skipped without being run.
func TestCurveSkipsTooSlow(t *testing.T) {
	c := BenchConfig(4, tasks.NextToken)
	opened := 0
	b := cpuBackend(1)
	open := b.Open
	b.Open = func() (kernels.Device, func(), error) { opened++; return open() }
	var skipped []error
	// A CPU seed-step at batch 4 takes well under 10 ms, and over 10 us:
	// 1,000,000 models would take over 10 s, 2 under 1 s.
	rows, err := Curve(b, c, []int{1, 1000000, 2}, Timing{Steps: 1}, time.Second, func(err error) { skipped = append(skipped, err) })
	if err != nil {
		t.Fatal(err)
	}
	var ts *TooSlowError
	if len(skipped) != 1 || !errors.As(skipped[0], &ts) || ts.S != 1000000 || ts.From != 1 || ts.Predicted < 10*time.Second {
		t.Fatalf("skipped %v", skipped)
	}
	if len(rows) != 2 || rows[1].Group != 2 || opened != 2 {
		t.Fatalf("rows %+v, %d devices opened", rows, opened)
	}
}

func TestGPUPaysFrom(t *testing.T) {
	row := func(b string, S int, rate float64) GroupResult {
		return GroupResult{Backend: b, Group: S, SeedStepsPerS: rate}
	}
	for i, c := range []struct {
		rows []GroupResult
		from int
		ok   bool
	}{
		{[]GroupResult{row("cpu", 1, 10), row("cpu", 4, 40), row("gl", 1, 1), row("gl", 4, 50)}, 4, true},
		{[]GroupResult{row("cpu", 1, 10), row("cpu", 4, 40), row("gl", 1, 1), row("gl", 4, 5)}, 0, false},
		// Ahead at 1 and 16 but behind at 4: it pays from 16.
		{[]GroupResult{row("cpu", 1, 10), row("cpu", 4, 40), row("cpu", 16, 100), row("gl", 16, 200), row("gl", 4, 30), row("gl", 1, 20)}, 16, true},
		{[]GroupResult{row("cpu", 1, 10), row("cpu", 4, 40), row("gl", 1, 20), row("gl", 4, 50)}, 1, true},
		// A size only one backend measured does not count.
		{[]GroupResult{row("cpu", 1, 10), row("gl", 1, 5), row("gl", 4, 500)}, 0, false},
		{[]GroupResult{row("cpu", 1, 10)}, 0, false},
	} {
		if from, ok := GPUPaysFrom(c.rows, "gl", "cpu"); from != c.from || ok != c.ok {
			t.Errorf("case %d: %d %v, want %d %v", i, from, ok, c.from, c.ok)
		}
	}
}

// TestMeasure: an explicit Steps is timed exactly, after one to three
// warm-up steps; an automatic one aims at Target.
func TestMeasure(t *testing.T) {
	calls := 0
	run := func(k int) error {
		calls += k
		time.Sleep(time.Duration(k) * 5 * time.Millisecond)
		return nil
	}
	n, secs, err := measure(Timing{Steps: 4}, run, nil)
	if err != nil || n != 4 || calls != 3+4 || secs < 0.02 {
		t.Errorf("Steps 4: %d steps, %d calls, %v s, %v", n, calls, secs, err)
	}
	calls = 0
	began := -1
	n, _, _ = measure(Timing{Target: 100 * time.Millisecond}, run, func() { began = calls })
	if n < 5 || n > 20 || began != 3 || calls != 3+n {
		t.Errorf("Target 100ms at 5ms a step: %d steps (begun after %d)", n, began)
	}
	calls = 0
	slow := func(k int) error { calls += k; time.Sleep(time.Duration(k) * 600 * time.Millisecond); return nil }
	if n, _, _ = measure(Timing{Target: 100 * time.Millisecond}, slow, nil); n != 1 || calls != 2+1 {
		t.Errorf("slow steps: %d timed, %d in all", n, calls)
	}
	fail := errors.New("boom")
	if _, _, err := measure(Timing{Steps: 1}, func(int) error { return fail }, nil); !errors.Is(err, fail) {
		t.Errorf("error %v", err)
	}
}

func TestTrainSteps(t *testing.T) {
	r, err := TrainSteps(cpu.New(), BenchConfig(8, tasks.NextToken), Timing{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Backend != "cpu" || r.Batch != 8 || r.MsPerStep <= 0 || r.StepsPerSec <= 0 || r.GFLOPs <= 0 {
		t.Errorf("%+v", r)
	}
}

// BenchmarkGroups times one lockstep step of S default models at batch
// 64: on the CPU as `headlab bench` runs it (one group per core), on GL
// one group of S. Metrics: seed-steps/s, dispatches/step.
func BenchmarkGroups(b *testing.B) {
	c := BenchConfig(64, tasks.NextToken)
	for _, backend := range []string{"cpu", "gl"} {
		sizes := []int{1, 8}
		if backend == "cpu" {
			sizes = append(sizes, 64) // past the caches: seed by seed pays here
		}
		for _, S := range sizes {
			b.Run(fmt.Sprintf("%s/S%d", backend, S), func(b *testing.B) {
				be := cpuBackend(runtime.GOMAXPROCS(0))
				if backend == "gl" {
					be = glBackend(b)
				}
				r, err := newGroupRun(be, c, S)
				if err != nil {
					b.Fatal(err)
				}
				defer r.close()
				if err := r.run(2); err != nil { // warm up
					b.Fatal(err)
				}
				before := r.stats()
				n := 0
				for b.Loop() {
					if err := r.run(1); err != nil {
						b.Fatal(err)
					}
					n++
				}
				after := r.stats()
				b.ReportMetric(float64(S*n)/b.Elapsed().Seconds(), "seed-steps/s")
				b.ReportMetric(float64(after.Dispatches-before.Dispatches)/float64(n), "dispatches/step")
			})
		}
	}
}

package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// GroupResult is S models of one shape trained in lockstep on one backend:
// one row of `headlab bench`'s curve. Per-step figures are for one step of
// all S models (summed over the CPU's workers).
type GroupResult struct {
	Backend string `json:"backend"`
	Group   int    `json:"group"`
	// SeedStepsPerS is model-steps per second: S times the steps per second.
	SeedStepsPerS     float64 `json:"seed_steps_per_s"`
	DispatchesPerStep float64 `json:"dispatches_per_step"`
	// UploadBytesPerStep and ReadbackBytesPerStep are what the device's
	// Stats counted crossing to and from it.
	UploadBytesPerStep   float64 `json:"upload_bytes_per_step"`
	ReadbackBytesPerStep float64 `json:"readback_bytes_per_step"`
	// GFLOPs is StepFlops times seed-steps per second; GBs is SeedTraffic
	// times seed-steps per second.
	GFLOPs    float64 `json:"gflop_per_s"`
	GBs       float64 `json:"gb_per_s"`
	MsPerStep float64 `json:"ms_per_step"`
	// ModelFLOP and ModelBytes are the cost model's arithmetic and
	// global-memory traffic per seed-step of the GL kernels (costmodel.go),
	// ModelH200 its predicted seed-steps/s at this S on an H200
	// (optimistic, pessimistic).
	ModelFLOP  float64    `json:"model_flop_per_seed_step"`
	ModelBytes float64    `json:"model_bytes_per_seed_step"`
	ModelH200  [2]float64 `json:"model_h200_seed_steps_per_s"`
	// Dispatches is, with Backend.Profile, every dispatch of one more
	// step, timed on the device.
	Dispatches []DispatchProfile `json:"dispatches,omitempty"`
}

// Opener makes a device and a function that releases it (the signature of
// cmd/headlab's device factory).
type Opener func() (kernels.Device, func(), error)

// Backend is a device to bench groups on. Workers is how many groups step
// concurrently, each on its own device from Open, with the S models split
// among them as evenly as possible (the CPU: one per core); 1 for a GPU,
// where one group of S runs on one device.
type Backend struct {
	Name    string
	Open    Opener
	Workers int
	// Profile times every dispatch of one more step after the timed ones
	// (a kernels.Profiler device, one worker).
	Profile bool
}

// Shares splits S models among at most workers groups as evenly as
// possible, larger shares first: S groups of one when S <= workers.
func Shares(S, workers int) []int {
	w := max(min(S, workers), 1)
	out := make([]int, w)
	for i := range out {
		out[i] = S / w
		if i < S%w {
			out[i]++
		}
	}
	return out
}

// SeedTraffic is the bytes one training step of one model of c moves, as
// graph.Net.Traffic counts them (every kernel reading its inputs and
// writing its output once), plus Adam's 7*P*4 (reading w, g, m and v,
// writing w, m and v); kernels is the Net's launches per Run.
func SeedTraffic(c train.Config) (bytes int64, kernels int, err error) {
	t, err := tasks.New(c.Task)
	if err != nil {
		return 0, 0, err
	}
	b, err := graph.NewBlock(cpu.New(), c.Model(t), 1)
	if err != nil {
		return 0, 0, err
	}
	defer b.Free()
	n, err := graph.BuildTrain(b, c.Batch, tasks.LossPositions(t, c.Loss))
	if err != nil {
		return 0, 0, err
	}
	defer n.Close()
	bytes, kernels = n.Traffic()
	return bytes + 7*int64(b.P)*4, kernels, nil
}

// TooLargeError is a group size that does not fit the device
// (train.GroupLimit): the curve skips it.
type TooLargeError struct {
	Backend string
	S       int // the group asked for
	Share   int // the largest group one device would hold
	Limit   int // the most that fit one device
	Why     string
}

func (e *TooLargeError) Error() string {
	why := e.Why
	if why == "" {
		why = fmt.Sprintf("train.MaxGroup is %d", train.MaxGroup)
	}
	return fmt.Sprintf("%s: skipping a group of %d: at most %d models fit one device (%s)", e.Backend, e.S, e.Limit, why)
}

// groupRun is S models split into groups, each on its own device.
type groupRun struct {
	groups   []*train.Group
	devs     []kernels.Device
	releases []func()
	rec      *Recorder // the first group's device, with Backend.Profile
}

// newGroupRun opens one device per share and trains models with seeds
// 1..S of c on them, after checking that each share fits its device.
func newGroupRun(b Backend, c train.Config, S int) (_ *groupRun, err error) {
	r := &groupRun{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	seed := uint64(1)
	for i, share := range Shares(S, b.Workers) {
		dev, release, err := b.Open()
		if err != nil {
			return nil, err
		}
		r.devs, r.releases = append(r.devs, dev), append(r.releases, release)
		if i == 0 {
			limit, why, err := train.GroupLimit(dev, c, false)
			if err != nil {
				return nil, err
			}
			if share > limit {
				return nil, &TooLargeError{Backend: b.Name, S: S, Share: share, Limit: limit, Why: why}
			}
		}
		cs := make([]train.Config, share)
		for j := range cs {
			cs[j] = c
			cs[j].Seed = seed
			seed++
		}
		if i == 0 && b.Profile {
			r.rec = &Recorder{Device: dev}
			dev = r.rec
		}
		g, err := train.NewGroup(cs, dev)
		if err != nil {
			return nil, err
		}
		r.groups = append(r.groups, g)
	}
	return r, nil
}

// run takes k steps of every group, the groups concurrently, and waits
// for the devices to finish them.
func (r *groupRun) run(k int) error {
	errs := make([]error, len(r.groups))
	one := func(i int) {
		for range k {
			if errs[i] = r.groups[i].TrainStep(); errs[i] != nil {
				return
			}
		}
		errs[i] = r.devs[i].Sync()
	}
	if len(r.groups) == 1 {
		one(0)
	} else {
		var wg sync.WaitGroup
		for i := range r.groups {
			wg.Go(func() { one(i) })
		}
		wg.Wait()
	}
	return errors.Join(errs...)
}

// stats sums the devices' counters.
func (r *groupRun) stats() kernels.Stats {
	var s kernels.Stats
	for _, d := range r.devs {
		t := d.Stats()
		s.Dispatches += t.Dispatches
		s.Uploaded += t.Uploaded
		s.ReadBack += t.ReadBack
	}
	return s
}

func (r *groupRun) close() {
	for _, g := range r.groups {
		g.Close()
	}
	for _, rel := range r.releases {
		rel()
	}
	r.groups, r.devs, r.releases = nil, nil, nil
}

// BenchConfig is the model `headlab bench` measures: the default
// induction model at the given batch and loss, with steps enough never to
// run out (so that the next batch is always sampled while a step runs).
func BenchConfig(batch int, loss string) train.Config {
	c := train.Defaults("induction")
	c.Batch, c.Steps, c.Loss = batch, math.MaxInt32, loss
	return c
}

// Groups times training steps of S models of c in lockstep on b (see
// Backend), all groups stepping at once, with nothing read back but what
// a training step without progress output reads. A group too large for
// the device is a *TooLargeError.
func Groups(b Backend, c train.Config, S int, tm Timing) (GroupResult, error) {
	if S <= 0 || b.Workers <= 0 {
		return GroupResult{}, fmt.Errorf("bench: a group of %d on %d workers", S, b.Workers)
	}
	traffic, _, err := SeedTraffic(c)
	if err != nil {
		return GroupResult{}, err
	}
	calls, err := StepCalls(c)
	if err != nil {
		return GroupResult{}, err
	}
	model, err := ModelStep(calls, S)
	if err != nil {
		return GroupResult{}, err
	}
	r, err := newGroupRun(b, c, S)
	if err != nil {
		return GroupResult{}, err
	}
	defer r.close()
	var before kernels.Stats
	steps, secs, err := measure(tm, r.run, func() { before = r.stats() })
	if err != nil {
		return GroupResult{}, fmt.Errorf("%s, group of %d: %w", b.Name, S, err)
	}
	after := r.stats()
	n := float64(steps)
	seedSteps := float64(S) * n / secs
	var profile []DispatchProfile
	if b.Profile {
		if profile, err = profileStep(r.groups[0], r.rec); err != nil {
			return GroupResult{}, fmt.Errorf("%s, group of %d: %w", b.Name, S, err)
		}
	}
	m := r.groups[0].Models[0]
	return GroupResult{
		Backend:              b.Name,
		Group:                S,
		SeedStepsPerS:        seedSteps,
		DispatchesPerStep:    float64(after.Dispatches-before.Dispatches) / n,
		UploadBytesPerStep:   float64(after.Uploaded-before.Uploaded) / n,
		ReadbackBytesPerStep: float64(after.ReadBack-before.ReadBack) / n,
		GFLOPs:               StepFlops(m.Shape, c.Batch, tasks.LossPositions(m.Task, c.Loss)) * seedSteps / 1e9,
		GBs:                  float64(traffic) * seedSteps / 1e9,
		MsPerStep:            1000 * secs / n,
		ModelFLOP:            model.FLOPs,
		ModelBytes:           model.Bytes,
		ModelH200:            model.SeedStepsPerS(),
		Dispatches:           profile,
	}, nil
}

// GPUPaysFrom is the smallest group size from which on gpu's seed-steps
// per second beat cpu's at every larger size measured on both, and false
// when gpu never beat cpu at the largest size both measured (or they share
// none).
func GPUPaysFrom(rows []GroupResult, gpu, cpu string) (int, bool) {
	rate := map[string]map[int]float64{gpu: {}, cpu: {}}
	for _, r := range rows {
		if m, ok := rate[r.Backend]; ok {
			m[r.Group] = r.SeedStepsPerS
		}
	}
	var both []int
	for _, r := range rows {
		if r.Backend != gpu {
			continue
		}
		if _, ok := rate[cpu][r.Group]; ok {
			both = append(both, r.Group)
		}
	}
	// Largest first: walk down while the GPU stays ahead.
	from, ok := 0, false
	slices.Sort(both)
	for i := len(both) - 1; i >= 0; i-- {
		S := both[i]
		if rate[gpu][S] <= rate[cpu][S] {
			break
		}
		from, ok = S, true
	}
	return from, ok
}

// TooSlowError is a group size skipped because one step of it, at the
// seed-steps per second measured at the previous size, would take longer
// than the curve allows.
type TooSlowError struct {
	Backend   string
	S, From   int // the group skipped, and the size measured before
	Predicted time.Duration
	Max       time.Duration
}

func (e *TooSlowError) Error() string {
	return fmt.Sprintf("%s: skipping a group of %d: one step would take about %.0f s at the speed measured at %d (over --max-step %v)",
		e.Backend, e.S, e.Predicted.Seconds(), e.From, e.Max)
}

// Curve measures Groups at every size in groups on b, in order. A size
// too large for the device (*TooLargeError), or, with maxStep > 0, one
// larger than the last size measured whose step would take longer than
// maxStep at that size's seed-steps per second (*TooSlowError), is
// skipped and reported to skip; any other error stops the curve.
func Curve(b Backend, c train.Config, groups []int, tm Timing, maxStep time.Duration, skip func(error)) ([]GroupResult, error) {
	var out []GroupResult
	for _, S := range groups {
		if n := len(out); maxStep > 0 && n > 0 && S > out[n-1].Group {
			last := out[n-1]
			predicted := time.Duration(float64(S) / last.SeedStepsPerS * float64(time.Second))
			if predicted > maxStep {
				if skip != nil {
					skip(&TooSlowError{Backend: b.Name, S: S, From: last.Group, Predicted: predicted, Max: maxStep})
				}
				continue
			}
		}
		r, err := Groups(b, c, S, tm)
		var tl *TooLargeError
		switch {
		case errors.As(err, &tl):
			if skip != nil {
				skip(err)
			}
			continue
		case err != nil:
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

package bench

import (
	"fmt"

	"headlab/kernels"
	"headlab/train"
)

// DispatchProfile is one dispatch of a training step: its launch and its
// time as the device measured them (a timer query), and the cost model's
// figures for it beside them.
type DispatchProfile struct {
	Kernel     string `json:"kernel"`
	Program    string `json:"program"`
	Workgroups int64  `json:"workgroups"`
	GroupSize  int    `json:"group_size"`
	// Invocations is Workgroups x GroupSize.
	Invocations int64 `json:"invocations"`
	// Micros is the measured time (absent in the model's own rows).
	Micros float64 `json:"us,omitempty"`
	// FLOP and Bytes are the model's arithmetic and global-memory
	// traffic of the dispatch, for all its seeds; H200Micros its
	// predicted time on an H200 (optimistic, pessimistic) and H200Bound
	// what bounds the pessimistic one.
	FLOP       float64    `json:"model_flop"`
	Bytes      float64    `json:"model_bytes"`
	H200Micros [2]float64 `json:"model_h200_us"`
	H200Bound  string     `json:"model_h200_bound"`
}

// Profile joins the kernel calls of a step with the dispatches a device
// timed for them, in order; the two must agree dispatch for dispatch (the
// model's programs and grids are the device's).
func Profile(calls []Call, times []kernels.DispatchTime) ([]DispatchProfile, error) {
	var out []DispatchProfile
	for _, c := range calls {
		ds, err := Model(c)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			i := len(out)
			if i >= len(times) {
				return nil, fmt.Errorf("bench: the device timed %d dispatches, the cost model has more", len(times))
			}
			t := times[i]
			if t.Kernel != d.Kernel || t.Program != d.Program || t.GroupSize != d.GroupSize || t.Groups != d.Workgroups(c.S) {
				return nil, fmt.Errorf("bench: dispatch %d: the device ran %s's %s, %d x %d; the cost model has %s's %s, %d x %d",
					i, t.Kernel, t.Program, t.Groups, t.GroupSize, d.Kernel, d.Program, d.Workgroups(c.S), d.GroupSize)
			}
			p := modelRow(d, c.S)
			p.Micros = float64(t.Nanos) / 1e3
			out = append(out, p)
		}
	}
	if len(out) != len(times) {
		return nil, fmt.Errorf("bench: the device timed %d dispatches, the cost model has %d", len(times), len(out))
	}
	return out, nil
}

// modelRow is d for S seeds as a profile row, without a measured time.
func modelRow(d Dispatch, S int) DispatchProfile {
	seeds := float64(S)
	if d.Once {
		seeds = 1
	}
	wgs := d.Workgroups(S)
	p := DispatchProfile{Kernel: d.Kernel, Program: d.Program, Workgroups: wgs, GroupSize: d.GroupSize,
		Invocations: wgs * int64(d.GroupSize), FLOP: seeds * d.FLOPs, Bytes: seeds * d.Bytes}
	for k, m := range H200 {
		s, bound := m.Time(d, S)
		p.H200Micros[k] = s * 1e6
		if k == 1 {
			p.H200Bound = bound
		}
	}
	return p
}

// Rows is the model's step as profile rows, without measured times.
func (m StepModel) Rows() []DispatchProfile {
	out := make([]DispatchProfile, len(m.Dispatches))
	for i, d := range m.Dispatches {
		out[i] = modelRow(d.Dispatch, m.S)
	}
	return out
}

// profileStep takes one more step of g, its device (a Recorder over a
// kernels.Profiler) timing every dispatch, and joins the two.
func profileStep(g *train.Group, r *Recorder) ([]DispatchProfile, error) {
	p, ok := r.Device.(kernels.Profiler)
	if !ok {
		return nil, fmt.Errorf("bench: %s cannot time its dispatches", r.Name())
	}
	if err := r.Sync(); err != nil {
		return nil, err
	}
	if _, err := p.TakeProfile(); err != nil { // drop anything timed before
		return nil, err
	}
	if err := p.SetProfiling(true); err != nil {
		return nil, err
	}
	r.Record(true)
	err := g.TrainStep()
	r.Record(false)
	if perr := p.SetProfiling(false); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	times, err := p.TakeProfile()
	if err != nil {
		return nil, err
	}
	return Profile(r.Take(), times)
}

// ProfileGroup times every dispatch of one training step of S models of
// c (seeds 1..S) in lockstep on dev, a kernels.Profiler, after one step
// that warms it up (the first dispatches compile shader machine code).
func ProfileGroup(dev kernels.Device, c train.Config, S int) ([]DispatchProfile, error) {
	if S <= 0 {
		return nil, fmt.Errorf("bench: a group of %d", S)
	}
	r := &Recorder{Device: dev}
	cs := make([]train.Config, S)
	for i := range cs {
		cs[i] = c
		cs[i].Seed = uint64(i + 1)
	}
	g, err := train.NewGroup(cs, r)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := g.TrainStep(); err != nil {
		return nil, err
	}
	return profileStep(g, r)
}

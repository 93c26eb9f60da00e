package bench

import (
	"fmt"
	"math"
)

// The cost model of the GL device's kernels: for every kernel call of a
// step, the dispatches the GL device makes for it, each with its launch
// geometry, its arithmetic and its global-memory traffic per seed, read
// from backend/gl/ops.go and the shaders. It predicts a step's time on a
// GPU from published rates (Machine) and is the FLOPs and bytes column of
// the per-dispatch profile (Profile). Estimates, not measurements: where
// a GPU has run, its timer queries are the figures to believe.

// Dispatch is one GL dispatch as the model sees it. Sizes are per seed
// unless Once is set (a dispatch whose work does not grow with S).
type Dispatch struct {
	Kernel  string // the Device method
	Program string // the compute shader
	// Invocations that do work per seed (the device rounds a grid up to
	// whole workgroups), in workgroups of GroupSize. WorkgroupsPerSeed
	// says the grid is whole workgroups per seed (Invocations is then a
	// multiple of GroupSize); otherwise the S seeds' invocations are
	// flattened into one grid.
	Invocations, GroupSize int
	WorkgroupsPerSeed      bool
	Once                   bool
	// FLOPs counts multiplies and adds; Bytes the global memory read and
	// written, each tensor element once per dispatch that touches it.
	FLOPs, Bytes float64
	// Instr is the instructions one invocation issues (an estimate from
	// its loops: loads, arithmetic, index work).
	Instr float64
	// Scattered counts the stores (and loads) of one invocation whose
	// lanes each touch a different 32-byte sector.
	Scattered float64
	// Chain is the longest chain of global loads one invocation waits on
	// in turn (a serial loop over rows with nothing else in flight).
	Chain float64
}

// Workgroups is the dispatch's grid for S seeds, as the device computes it.
func (d Dispatch) Workgroups(S int) int64 {
	seeds := int64(S)
	if d.Once {
		seeds = 1
	}
	if d.WorkgroupsPerSeed {
		return seeds * int64(d.Invocations/d.GroupSize)
	}
	return (seeds*int64(d.Invocations) + int64(d.GroupSize) - 1) / int64(d.GroupSize)
}

// wg is the workgroup size of the kernels that use common.glsl's (64).
const wg = 64

// Integer divisions and remainders by uniforms cost tens of instructions:
// item() does one pair; each further index split another.
const (
	itemInstr = 25
	divInstr  = 18
)

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Model returns the dispatches the GL device makes for c.
func Model(c Call) ([]Dispatch, error) {
	f4 := 4.0
	flat := func(prog string, inv int, instr, flops, bytes float64) Dispatch {
		return Dispatch{Kernel: c.Kernel, Program: prog, Invocations: inv, GroupSize: wg, Instr: instr, FLOPs: flops, Bytes: bytes}
	}
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	switch c.Kernel {
	case "MatMul", "Linear":
		if c.M*c.N == 0 {
			return nil, nil
		}
		M, N, K := float64(c.M), float64(c.N), float64(c.K)
		tiles := ceilDiv(c.M, 4) * ceilDiv(c.N, 8)
		d := flat("matmul", tiles, 60+50*K+128+1440*b2f(c.Deriv)+64*b2f(c.Res), 2*M*N*K,
			f4*(M*K+K*N+M*N*(1+b2f(c.Deriv))+M*N*b2f(c.Res)+N*b2f(c.Bias)))
		if tiles <= 128 {
			d.Chain = K // few invocations a seed, each a serial loop over K
		} else {
			d.Scattered = 32 * (1 + b2f(c.Deriv)) // a warp's 4 x 8 blocks: each store 32 sectors
		}
		return []Dispatch{d}, nil
	case "ColSum", "ColDot":
		if c.D == 0 {
			return nil, nil
		}
		loads := 1.0
		prog := "colsum"
		if c.Kernel == "ColDot" {
			loads, prog = 2, "coldot"
		}
		R, D := float64(c.Rows), float64(c.D)
		d := flat(prog, c.D, 30+(3+2*loads)*R, loads*R*D, f4*(loads*R*D+D))
		d.Chain = R
		return []Dispatch{d}, nil
	case "LayerNorm":
		if c.Rows == 0 {
			return nil, nil
		}
		R, D := float64(c.Rows), float64(c.D)
		d := flat("layernorm", c.Rows, 24+18*D, 8*R*D, f4*(3*R*D+R))
		d.Scattered = 2 * D // a row a thread: two outputs written 4*D bytes apart across lanes
		return []Dispatch{d}, nil
	case "LayerNormGradX":
		if c.Rows == 0 {
			return nil, nil
		}
		R, D := float64(c.Rows), float64(c.D)
		d := flat("layernormgradx", c.Rows, 24+18*D, 10*R*D, f4*(3*R*D+R))
		d.Scattered = D
		return []Dispatch{d}, nil
	case "GELU":
		n := float64(c.Len)
		return nonEmpty(c.Len, flat("gelu", c.Len, 200, 30*n, f4*3*n)), nil
	case "Mul", "Add":
		n := float64(c.Len)
		prog := "mul"
		if c.Kernel == "Add" {
			prog = "add"
		}
		return nonEmpty(c.Len, flat(prog, c.Len, 35, n, f4*3*n)), nil
	case "ColScale":
		n := float64(c.Rows * c.D)
		return nonEmpty(c.Rows*c.D, flat("colscale", c.Rows*c.D, 50, n, f4*2*n)), nil
	case "Embed":
		n := float64(c.Rows * c.D)
		return nonEmpty(c.Rows*c.D, flat("embed", c.Rows*c.D, itemInstr+divInstr+12, 0, f4*n)), nil
	case "EmbedGrad":
		R, D, V := float64(c.Rows), float64(c.D), float64(c.V)
		return nonEmpty(c.V*c.D, flat("embedgrad", c.V*c.D, 50+11*R, V*D*R, f4*(R+R*D+V*D))), nil
	case "Probs", "Mix", "MixGradP", "MixGradV", "ProbsGradQ", "ProbsGradK":
		return attnModel(c)
	case "SoftmaxXent":
		R, V := float64(c.Rows), float64(c.V)
		d := Dispatch{Kernel: c.Kernel, Program: "softmaxxent", Invocations: wg, GroupSize: wg, WorkgroupsPerSeed: true,
			Instr: float64(ceilDiv(c.Rows, wg))*(70*V+40) + 300, FLOPs: 40 * R * V, Bytes: f4 * (2*R*V + R)}
		d.Scattered = 2 * V * float64(ceilDiv(c.Rows, wg)) // a row a thread: loads and stores V*4 bytes apart
		return []Dispatch{d}, nil
	case "SoftmaxXentGrad":
		if c.Rows == 0 {
			return nil, nil
		}
		R, V := float64(c.Rows), float64(c.V)
		d := Dispatch{Kernel: c.Kernel, Program: "softmaxxentgrad", Invocations: ceilDiv(c.Rows, wg) * wg, GroupSize: wg,
			WorkgroupsPerSeed: true, Instr: 200, FLOPs: 3 * R * V, Bytes: f4 * (2*R*V + R)}
		d.Scattered = V
		return []Dispatch{d}, nil
	case "CountCorrect":
		R, V := float64(c.Rows), float64(c.V)
		return []Dispatch{{Kernel: c.Kernel, Program: "countcorrect", Invocations: wg, GroupSize: wg, WorkgroupsPerSeed: true,
			Instr: float64(ceilDiv(c.Rows, wg))*(6*V+20) + 200, FLOPs: R * V, Bytes: f4 * (R*V + R)}}, nil
	case "Adam":
		n := float64(c.Len)
		return nonEmpty(c.Len, flat("adam", c.Len, 100, 20*n, 28*n)), nil
	case "MarkDiverged":
		return []Dispatch{flat("markdiverged", 1, 40, 1, 8)}, nil
	}
	return nil, fmt.Errorf("bench: the cost model has no kernel %q", c.Kernel)
}

// nonEmpty is d, or nothing for a kernel on no elements (the device
// dispatches nothing).
func nonEmpty(n int, d Dispatch) []Dispatch {
	if n == 0 {
		return nil
	}
	return []Dispatch{d}
}

// attnModel is the attention kernels: one invocation per query row
// (Probs, rowsum) or per output element.
func attnModel(c Call) ([]Dispatch, error) {
	s := c.Shape
	if err := s.Validate(); err != nil {
		return nil, err
	}
	f4 := 4.0
	T, Dh := float64(s.T), float64(s.Dh)
	nk := T // keys a query sees, on average
	if s.Causal {
		nk = (T + 1) / 2
	}
	rows := s.B * s.H * s.T
	R, QKV, PR := float64(rows), float64(s.QKVLen()), float64(s.ProbsLen())
	d := Dispatch{Kernel: c.Kernel, GroupSize: wg}
	switch c.Kernel {
	case "Probs":
		d.Program, d.Invocations = "probs", rows
		d.Instr = itemInstr + 2*divInstr + nk*(6+3*Dh) + nk*30 + nk*35 + 20
		d.FLOPs, d.Bytes = 2*R*nk*Dh+20*R*nk, f4*(2*QKV+PR)
		d.Scattered = 3*nk + (T - nk) // a row a thread: P's rows T*4 bytes apart
	case "Mix":
		d.Program, d.Invocations = "mix", s.QKVLen()
		d.Instr, d.FLOPs, d.Bytes = itemInstr+3*divInstr+9*nk+10, 2*QKV*nk, f4*(PR+2*QKV)
	case "MixGradP":
		d.Program, d.Invocations = "mixgradp", s.ProbsLen()
		d.Instr, d.FLOPs, d.Bytes = itemInstr+3*divInstr+4*Dh+10, 2*PR*Dh*nk/T, f4*(PR+2*QKV)
	case "MixGradV":
		d.Program, d.Invocations = "mixgradv", s.QKVLen()
		d.Instr, d.FLOPs, d.Bytes = itemInstr+3*divInstr+10*nk+10, 2*QKV*nk, f4*(PR+2*QKV)
	case "ProbsGradQ":
		d.Program, d.Invocations = "probsgradq", s.QKVLen()
		d.Instr, d.FLOPs, d.Bytes = itemInstr+3*divInstr+16*nk+10, 7*QKV*nk, f4*(2*PR+2*QKV)
	case "ProbsGradK":
		rs := Dispatch{Kernel: c.Kernel, Program: "rowsum", Invocations: rows, GroupSize: wg,
			Instr: itemInstr + divInstr + 5*nk, FLOPs: 2 * R * nk, Bytes: f4 * (2*PR + R)}
		d.Program, d.Invocations = "probsgradk", s.QKVLen()
		d.Instr, d.FLOPs, d.Bytes = itemInstr+3*divInstr+14*nk+10, 6*QKV*nk, f4*(2*PR+2*QKV+R)
		return []Dispatch{rs, d}, nil
	}
	return []Dispatch{d}, nil
}

// Machine is a GPU's rates, for the model's predictions.
type Machine struct {
	Name string
	// FLOPs is fp32 operations per second (no tensor cores); Issue the
	// warp instructions issued per second over all SMs, at the
	// efficiency assumed; Bandwidth global-memory bytes per second;
	// Sectors the 32-byte sectors per second scattered accesses reach.
	FLOPs, Issue, Bandwidth, Sectors float64
	// ChainStep is the seconds a serial loop waits per global load
	// (latency over the loads the compiler keeps in flight).
	ChainStep float64
	// Overhead is the seconds each dispatch and its barrier cost.
	Overhead float64
}

// H200 is an NVIDIA H200 SXM (132 SMs at 1.98 GHz, 4 warp instructions a
// clock per SM, ~67 TFLOP/s fp32 without tensor cores, 4.8 TB/s HBM3e),
// optimistic then pessimistic: issue at 80% or 55%, 4.3 or 3.0 TB/s,
// 170 or 110 G scattered sectors/s, a serial load every 450/4 or 700/2
// cycles, 5 or 10 us per dispatch and barrier.
var H200 = [2]Machine{
	{Name: "H200 (optimistic)", FLOPs: 67e12, Issue: 132 * 4 * 1.98e9 * 0.8, Bandwidth: 4.3e12, Sectors: 170e9,
		ChainStep: 450.0 / 4 / 1.98e9, Overhead: 5e-6},
	{Name: "H200 (pessimistic)", FLOPs: 67e12 * 0.7, Issue: 132 * 4 * 1.98e9 * 0.55, Bandwidth: 3.0e12, Sectors: 110e9,
		ChainStep: 700.0 / 2 / 1.98e9, Overhead: 10e-6},
}

// Bounds are the lower bounds on one dispatch's time, in seconds.
type Bounds struct {
	FLOPs, Issue, Memory, Scattered, Chain float64
}

// Time predicts d's seconds on m for S seeds: the overhead plus the
// largest of its bounds, which it names.
func (m Machine) Time(d Dispatch, S int) (float64, string) {
	seeds := float64(S)
	if d.Once {
		seeds = 1
	}
	b := Bounds{
		FLOPs:     seeds * d.FLOPs / m.FLOPs,
		Issue:     seeds * float64(d.Invocations) / 32 * d.Instr / m.Issue,
		Memory:    seeds * d.Bytes / m.Bandwidth,
		Scattered: seeds * float64(d.Invocations) * d.Scattered / m.Sectors,
		Chain:     d.Chain * m.ChainStep,
	}
	names := []string{"flops", "issue", "memory", "scattered", "chain"}
	vals := []float64{b.FLOPs, b.Issue, b.Memory, b.Scattered, b.Chain}
	best, name := math.Inf(-1), ""
	for i, v := range vals {
		if v > best {
			best, name = v, names[i]
		}
	}
	return m.Overhead + best, name
}

// Predicted is one dispatch of a step with the model's figures for S seeds.
type Predicted struct {
	Dispatch
	// Seconds on H200[0] and H200[1], and what bounds each.
	Seconds [2]float64
	Bound   [2]string
}

// StepModel is a whole step's dispatches, predicted for S seeds.
type StepModel struct {
	S          int
	Dispatches []Predicted
	// FLOPs and Bytes are the step's, per seed.
	FLOPs, Bytes float64
	// Seconds is the step on H200[0] and H200[1].
	Seconds [2]float64
}

// SeedStepsPerS is S over the step's time, optimistic first.
func (m StepModel) SeedStepsPerS() [2]float64 {
	return [2]float64{float64(m.S) / m.Seconds[0], float64(m.S) / m.Seconds[1]}
}

// ModelStep predicts the step whose kernel calls are calls for S seeds.
func ModelStep(calls []Call, S int) (StepModel, error) {
	m := StepModel{S: S}
	for _, c := range calls {
		ds, err := Model(c)
		if err != nil {
			return StepModel{}, err
		}
		for _, d := range ds {
			p := Predicted{Dispatch: d}
			for i, mc := range H200 {
				p.Seconds[i], p.Bound[i] = mc.Time(d, S)
				m.Seconds[i] += p.Seconds[i]
			}
			share := 1.0
			if d.Once {
				share = 1 / float64(S)
			}
			m.FLOPs += d.FLOPs * share
			m.Bytes += d.Bytes * share
			m.Dispatches = append(m.Dispatches, p)
		}
	}
	return m, nil
}

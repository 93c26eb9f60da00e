package bench

import (
	"fmt"
	"math"
	"strings"

	"headlab/kernels"
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
	// in turn (a serial loop over rows with a few loads in flight; a
	// chunk staged at once counts as chunkChain), and Serial the longest
	// chain of dependent arithmetic (a column summed in order).
	Chain, Serial float64
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
	switch c.Kernel {
	case "MatMul", "Linear", "WeightGrad", "MatMulThen":
		return matmulModel(c), nil
	case "ColSum", "ColDot", "ColDotSum":
		return colModel(c), nil
	case "LayerNorm", "LayerNormGradX":
		return layerNormModel(c), nil
	case "LayerNormGrad":
		return layerNormGradModel(c), nil
	case "GELU", "Mul", "Add", "ColScale", "Embed", "EmbedAdd", "Adam", "MarkDiverged":
		return elementwiseModel(c), nil
	case "EmbedGrad":
		return embedGradModel(c), nil
	case "Probs", "Mix", "MixGradP", "MixGradV", "ProbsGradQ", "ProbsGradK", "Attend", "AttendGrad":
		return attnModel(c)
	case "SoftmaxXent", "SoftmaxXentGrad", "CountCorrect":
		return lossModel(c), nil
	}
	return nil, fmt.Errorf("bench: the cost model has no kernel %q", c.Kernel)
}

// costModel is the cost model's entry for every kernel, as
// kernels.Kernels: each method sets *c to the call it describes, the
// sizes Model reads the dispatches of (the recorder records it). A kernel
// added to kernels.Kernels without an entry here does not compile, and
// one whose name Model does not know fails TestEveryKernelHasACost.
type costModel struct{ c *Call }

var _ kernels.Kernels = costModel{}

func (cost costModel) set(c Call) error {
	*cost.c = c
	return nil
}

// Fuses implements kernels.Fused: the GL device's fused kernels.
func (costModel) Fuses() bool { return true }

// Attends implements kernels.Fused: the GL device's (GLAttends).
func (costModel) Attends(s kernels.Shape) bool { return GLAttends(s) }

func (cost costModel) MatMul(S int, tA, tB bool, m, n, k int, a, b, c, bias kernels.Tensor) error {
	return cost.set(Call{Kernel: "MatMul", S: S, M: m, N: n, K: k, TA: tA, TB: tB, Bias: bias.Buf != nil})
}

func (cost costModel) Linear(S, m, n, k int, x, w, bias, res, out, deriv kernels.Tensor) error {
	return cost.set(Call{Kernel: "Linear", S: S, M: m, N: n, K: k, Bias: bias.Buf != nil, Res: res.Buf != nil, Deriv: deriv.Buf != nil})
}

func (cost costModel) WeightGrad(S, m, n, k int, x, dy, dW, db kernels.Tensor) error {
	return cost.set(Call{Kernel: "WeightGrad", S: S, M: m, N: n, K: k, TA: true})
}

func (cost costModel) ColDotSum(S, rows, d int, a, b, dot, sum kernels.Tensor) error {
	return cost.set(Call{Kernel: "ColDotSum", S: S, Rows: rows, D: d})
}

func (cost costModel) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c kernels.Tensor, e kernels.Epilogue, x, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "MatMulThen", S: S, M: m, N: n, K: k, TA: tA, TB: tB, Bias: bias.Buf != nil, Epilogue: e, Keep: c.Buf != nil})
}

func (cost costModel) LayerNormGrad(S, rows, d int, gamma, dy, xh, inv, res, dx, dgamma, dbeta kernels.Tensor) error {
	return cost.set(Call{Kernel: "LayerNormGrad", S: S, Rows: rows, D: d, Res: res.Buf != nil})
}

func (cost costModel) EmbedAdd(S, rows, d int, ids, table, ids2, table2, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "EmbedAdd", S: S, Rows: rows, D: d})
}

func (cost costModel) Attend(S int, s kernels.Shape, q, k, v, g, p, o, og kernels.Tensor) error {
	return cost.set(Call{Kernel: "Attend", S: S, Shape: s, Keep: o.Buf != nil, Gated: og.Buf != nil})
}

func (cost costModel) AttendGrad(S int, s kernels.Shape, p, dO, q, k, v, dQ, dK, dV kernels.Tensor) error {
	return cost.set(Call{Kernel: "AttendGrad", S: S, Shape: s})
}

func (cost costModel) ColSum(S, rows, d int, x, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "ColSum", S: S, Rows: rows, D: d})
}

func (cost costModel) ColDot(S, rows, d int, a, b, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "ColDot", S: S, Rows: rows, D: d})
}

func (cost costModel) LayerNorm(S, rows, d int, x, gamma, beta, out, xh, inv kernels.Tensor) error {
	return cost.set(Call{Kernel: "LayerNorm", S: S, Rows: rows, D: d})
}

func (cost costModel) LayerNormGradX(S, rows, d int, gamma, dy, xh, inv, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "LayerNormGradX", S: S, Rows: rows, D: d})
}

func (cost costModel) GELU(S, n int, x, out, deriv kernels.Tensor) error {
	return cost.set(Call{Kernel: "GELU", S: S, Len: n})
}

func (cost costModel) Mul(S, n int, a, b, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "Mul", S: S, Len: n})
}

func (cost costModel) Add(S, n int, a, b, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "Add", S: S, Len: n})
}

func (cost costModel) ColScale(S, rows, d int, x, g, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "ColScale", S: S, Rows: rows, D: d})
}

func (cost costModel) Embed(S, rows, d int, ids, table, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "Embed", S: S, Rows: rows, D: d, V: table.Len / max(d, 1), SharedIDs: ids.Stride == 0})
}

func (cost costModel) EmbedGrad(S, rows, d, n int, ids, dy, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "EmbedGrad", S: S, Rows: rows, D: d, V: n, SharedIDs: ids.Stride == 0})
}

func (cost costModel) Probs(S int, s kernels.Shape, q, k, p kernels.Tensor) error {
	return cost.set(Call{Kernel: "Probs", S: S, Shape: s})
}

func (cost costModel) Mix(S int, s kernels.Shape, p, v, o kernels.Tensor) error {
	return cost.set(Call{Kernel: "Mix", S: S, Shape: s})
}

func (cost costModel) MixGradP(S int, s kernels.Shape, dO, v, dP kernels.Tensor) error {
	return cost.set(Call{Kernel: "MixGradP", S: S, Shape: s})
}

func (cost costModel) MixGradV(S int, s kernels.Shape, p, dO, dV kernels.Tensor) error {
	return cost.set(Call{Kernel: "MixGradV", S: S, Shape: s})
}

func (cost costModel) ProbsGradQ(S int, s kernels.Shape, p, dP, k, dQ kernels.Tensor) error {
	return cost.set(Call{Kernel: "ProbsGradQ", S: S, Shape: s})
}

func (cost costModel) ProbsGradK(S int, s kernels.Shape, p, dP, q, dK kernels.Tensor) error {
	return cost.set(Call{Kernel: "ProbsGradK", S: S, Shape: s})
}

func (cost costModel) SoftmaxXent(S, rows, v int, logits, targets, probs, loss kernels.Tensor) error {
	return cost.set(Call{Kernel: "SoftmaxXent", S: S, Rows: rows, V: v})
}

func (cost costModel) SoftmaxXentGrad(S, rows, v int, targets, probs, up, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "SoftmaxXentGrad", S: S, Rows: rows, V: v})
}

func (cost costModel) CountCorrect(S, rows, v int, logits, targets, out kernels.Tensor) error {
	return cost.set(Call{Kernel: "CountCorrect", S: S, Rows: rows, V: v})
}

func (cost costModel) Adam(S, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, c1, c2 float32) error {
	return cost.set(Call{Kernel: "Adam", S: S, Len: n})
}

func (cost costModel) MarkDiverged(S int, loss, failed kernels.Tensor, step int) error {
	return cost.set(Call{Kernel: "MarkDiverged", S: S})
}

const f4 = 4.0 // bytes per float

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// perSeed is a dispatch of wgs workgroups of 64 per seed.
func perSeed(c Call, prog string, wgs int) Dispatch {
	return Dispatch{Kernel: c.Kernel, Program: prog, Invocations: wgs * wg, GroupSize: wg, WorkgroupsPerSeed: true}
}

// flat is a dispatch of inv invocations per seed in one flattened grid.
func flat(c Call, prog string, inv int) Dispatch {
	return Dispatch{Kernel: c.Kernel, Program: prog, Invocations: inv, GroupSize: wg}
}

// warps is the share of a workgroup's two warps that run a phase with
// active invocations, as instructions per invocation count.
func warps(active int) float64 { return float64(min(ceilDiv(active, 32), 2)) / 2 }

// Staged loads: every element a workgroup stages costs about 5
// instructions (index, global load, shared store) spread over its 64
// invocations; a chunk loaded at once is one round trip, 4 chain steps.
const (
	stageInstr = 5
	chunkChain = 4
)

// matmulModel: matmul.comp, a workgroup of 32 per 32 x 32 tile of c, an
// 8 x 4 block per invocation, K in chunks of 32 through shared memory
// (the staged kernels a GPU runs).
func matmulModel(c Call) []Dispatch {
	if c.M*c.N == 0 {
		return nil
	}
	M, N, K := float64(c.M), float64(c.N), float64(c.K)
	sums := b2f(c.Kernel == "WeightGrad") // dy's column sums on the way
	// The epilogue's operand: the residual (Linear), or MatMulThen's x
	// (a column's gate, or an element's).
	x := M * N * b2f(c.Res || c.Epilogue == kernels.EpilogueAdd || c.Epilogue == kernels.EpilogueMul)
	if c.Epilogue == kernels.EpilogueColScale {
		x = N
	}
	then := b2f(c.Res || c.Epilogue != 0)
	chunks := float64(ceilDiv(c.K, 32))
	d := perSeed(c, "matmul", ceilDiv(c.M, 32)*ceilDiv(c.N, 32))
	d.Invocations, d.GroupSize = d.Invocations/2, 32
	// Per step of K: 3 vec4 shared loads, 32 fmas, the loop; per chunk:
	// 2 x 32 staged elements and two barriers; per stored element: the
	// store, GELU (about 80 with its double division), the epilogue's
	// load and operation, the product kept.
	d.Instr = K*(36+sums) + chunks*(64*stageInstr+10) + 32*(8+80*b2f(c.Deriv)+4*then+3*b2f(c.Keep)) + 40
	d.FLOPs = 2*M*N*K + sums*K*N + M*N*then
	d.Bytes = f4 * (M*K + K*N + M*N*(1+b2f(c.Deriv)+b2f(c.Keep)) + x + N*(b2f(c.Bias)+sums))
	d.Chain = chunks * chunkChain
	return []Dispatch{d}
}

// colModel: colsum.comp and coldot.comp, a workgroup per seed and 64
// columns, rows staged in chunks of 16 KiB, each column summed serially
// by its invocation.
func colModel(c Call) []Dispatch {
	if c.D == 0 {
		return nil
	}
	loads, prog, outs := 1.0, "colsum", 1.0
	switch c.Kernel {
	case "ColDot":
		loads, prog = 2, "coldot"
	case "ColDotSum": // ColDot's, a's column sums on the way
		loads, prog, outs = 2, "coldot", 2
	}
	cols := min(c.D, 64)
	rc := max(4096/(int(loads)*cols), 1) // rows a chunk
	R, D := float64(c.Rows), float64(c.D)
	d := perSeed(c, prog, ceilDiv(c.D, 64))
	d.Instr = stageInstr*loads*R*float64(cols)/64 + R*(2+2*loads+outs-1)*warps(cols)
	d.FLOPs, d.Bytes = (loads+outs-1)*R*D, f4*(loads*R*D+outs*D)
	d.Chain = float64(ceilDiv(c.Rows, rc)) * chunkChain
	d.Serial = R
	return []Dispatch{d}
}

// layerNormModel: layernorm.comp and layernormgradx.comp, a workgroup
// per block of rows staged through shared memory, a row an invocation
// for its sums, every element stored by neighbouring invocations.
func layerNormModel(c Call) []Dispatch {
	if c.Rows == 0 {
		return nil
	}
	grad := c.Kernel == "LayerNormGradX"
	prog := "layernorm"
	if grad {
		prog = "layernormgradx"
	}
	rw := max(min(64, 2048/max(c.D, 1)), 1) // rows a workgroup
	R, D, per := float64(c.Rows), float64(c.D), float64(rw*c.D)/64
	d := perSeed(c, prog, ceilDiv(c.Rows, rw))
	if grad {
		d.Instr = per*(2*stageInstr+10) + (14*D+60)*warps(rw)
		d.FLOPs, d.Bytes = 10*R*D, f4*(3*R*D+R+D)
	} else {
		d.Instr = per*(stageInstr+12) + (9*D+80)*warps(rw)
		d.FLOPs, d.Bytes = 8*R*D, f4*(3*R*D+R+2*D)
	}
	d.Chain, d.Serial = 2*chunkChain, D
	return []Dispatch{d}
}

// layerNormGradModel: layernormgrad.comp, a workgroup of 32 per seed
// streaming blocks of rw rows of dy and xh through shared memory, a row
// an invocation for its gradient, a column an invocation for its two
// sums, dx (with the residual's gradient added) stored by neighbouring
// invocations; rows longer than 1,024 take LayerNormGradX, Add and
// ColDotSum.
func layerNormGradModel(c Call) []Dispatch {
	if c.D == 0 || c.D > 1024 {
		var ds []Dispatch
		for _, k := range []string{"LayerNormGradX", "Add", "ColDotSum"} {
			if k == "Add" && !c.Res {
				continue
			}
			part := c
			part.Kernel, part.Len = k, c.Rows*c.D
			m, _ := Model(part)
			for i := range m {
				m[i].Kernel = c.Kernel
			}
			ds = append(ds, m...)
		}
		return ds
	}
	rw := max(min(32, 1024/c.D), 1)
	chunks := float64(ceilDiv(c.Rows, rw))
	R, D, RW, res := float64(c.Rows), float64(c.D), float64(rw), b2f(c.Res)
	per := RW * D / 32 // a block's elements per invocation
	d := perSeed(c, "layernormgrad", 1)
	d.Invocations, d.GroupSize = 32, 32
	// Per block: dy and xh staged; a row's sums and its gradient (as
	// LayerNormGradX's); each column's two sums over the block's rows
	// (two shared loads, a product, two adds); dx out, the residual's
	// gradient loaded and added.
	d.Instr = chunks*(2*per*stageInstr+14*D+60+math.Ceil(D/32)*RW*6+per*(10+2*res)) + math.Ceil(D/32)*6 + 40
	d.FLOPs = 10*R*D + 3*R*D + R*D*res
	d.Bytes = f4 * (R*D*(3+res) + R + 3*D)
	d.Chain = chunks * 2 * chunkChain
	d.Serial = R + chunks*D
	return []Dispatch{d}
}

// elementwiseModel: one invocation per element (or per seed), loads and
// stores coalesced.
func elementwiseModel(c Call) []Dispatch {
	n := c.Len
	var d Dispatch
	switch c.Kernel {
	case "GELU":
		d = flat(c, "gelu", n)
		d.Instr, d.FLOPs, d.Bytes = 120, 30*float64(n), f4*3*float64(n)
	case "Mul", "Add":
		d = flat(c, strings.ToLower(c.Kernel), n)
		d.Instr, d.FLOPs, d.Bytes = 35, float64(n), f4*3*float64(n)
	case "ColScale":
		n = c.Rows * c.D
		d = flat(c, "colscale", n)
		d.Instr, d.FLOPs, d.Bytes = 50, float64(n), f4*2*float64(n)
	case "Embed":
		n = c.Rows * c.D
		d = flat(c, "embed", n)
		d.Instr, d.Bytes = itemInstr+divInstr+12, f4*(float64(n)+float64(c.Rows))
	case "EmbedAdd": // a workgroup per 512 elements, 8 an invocation: two lookups and their sum, the row and column stepped on
		n = c.Rows * c.D
		d = perSeed(c, "embedadd", ceilDiv(n, 8*wg))
		d.Instr, d.FLOPs, d.Bytes = 2*divInstr+10+8*22, float64(n), f4*(float64(n)+2*float64(c.Rows))
	case "Adam":
		d = flat(c, "adam", n)
		d.Instr, d.FLOPs, d.Bytes = 100, 20*float64(n), 28*float64(n)
	case "MarkDiverged":
		n = 1
		d = flat(c, "markdiverged", 1)
		d.Instr, d.FLOPs, d.Bytes = 40, 1, 8
	}
	if n == 0 {
		return nil
	}
	return []Dispatch{d}
}

// embedGradModel: embedgrad.comp's two passes. The index (a workgroup
// per seed's ids, or one for ids every seed shares) lists each output
// row's rows in order, 64 rows at a time; the sum is an invocation per
// element of out adding its rows in that order.
func embedGradModel(c Call) []Dispatch {
	if c.V*c.D == 0 {
		return nil
	}
	R, D, V := float64(c.Rows), float64(c.D), float64(c.V)
	chunks := float64(ceilDiv(c.Rows, 64))
	ix := perSeed(c, "embedindex", 1)
	ix.Once = c.SharedIDs
	ix.Instr = chunks*2*(3*64+20) + V/64*8 + 100
	ix.Bytes = f4 * (2*R + 3*V + 1)
	ix.Chain = 2 * chunks * chunkChain
	sum := flat(c, "embedgrad", c.V*c.D)
	sum.Instr = 30 + 6*R/V
	sum.FLOPs, sum.Bytes = R*D, f4*(R*D+V*D+R+V)
	sum.Serial = R / V
	return []Dispatch{ix, sum}
}

// attnModel: a workgroup per (seed, sequence, head), its blocks of Q, K,
// V, O and P staged through shared memory and stored whole.
func attnModel(c Call) ([]Dispatch, error) {
	s := c.Shape
	if err := s.Validate(); err != nil {
		return nil, err
	}
	T, Dh := float64(s.T), float64(s.Dh)
	vis := 1.0 // the share of P's cells a query sees
	nk := T    // keys a query sees, on average
	if s.Causal {
		vis, nk = (T+1)/(2*T), (T+1)/2
	}
	cells, qd := T*T/64, T*Dh/64 // a block's P cells and Q rows per invocation
	rows := 33 * T * warps(s.T)  // a row an invocation: max, exp32 and the sum over its keys
	QKV, PR := float64(s.QKVLen()), float64(s.ProbsLen())
	d := perSeed(c, strings.ToLower(c.Kernel), s.B*s.H)
	switch c.Kernel {
	case "Probs": // dot products, row max and sum, the double division
		d.Instr = 2*qd*stageInstr + cells*vis*(3*Dh+8+45) + cells*stageInstr + rows
		d.FLOPs, d.Bytes = PR*vis*(2*Dh+20), f4*(2*QKV+PR)
	case "Mix": // the masked keys' finite test (maskedTerm) after the sum
		d.Instr = (cells+qd)*stageInstr + qd*(3*nk+2*(T-nk)+10)
		d.FLOPs, d.Bytes = 2*QKV*nk, f4*(PR+2*QKV)
	case "MixGradP":
		d.Instr = 2*qd*stageInstr + cells*vis*(3*Dh+8) + cells*stageInstr
		d.FLOPs, d.Bytes = 2*PR*vis*Dh, f4*(PR+2*QKV)
	case "MixGradV":
		d.Instr = (cells+qd)*stageInstr + qd*(3*nk+2*(T-nk)+10)
		d.FLOPs, d.Bytes = 2*QKV*nk, f4*(PR+2*QKV)
	case "ProbsGradQ", "ProbsGradK": // rowsum(P dP) per row, dS once per block, then the product
		d.Instr = (2*cells+qd)*stageInstr + 4*T*warps(s.T) + cells*vis*6 + qd*(3*nk+2*(T-nk)+10)
		d.FLOPs, d.Bytes = PR*vis*5+2*QKV*nk, f4*(2*PR+2*QKV)
	case "Attend": // Probs' steps (the exponentials a cell an invocation), P stored and kept, Mix's, O and its gated copy stored
		// Masked terms are skipped for a finite block (each staged
		// element of V checked): finite activations assumed.
		outs := b2f(c.Keep) + b2f(c.Gated)
		rows := (4+2)*nk*warps(s.T) + cells*vis*30
		// The scores' and exponentials' loops visit the masked cells too
		// (the division and the test).
		d.Instr = 3*qd*stageInstr + 2*qd + cells*vis*(3*Dh+8+45) + cells*stageInstr + rows + qd*(3*nk+10) + qd*(outs*stageInstr+2*b2f(c.Gated)) +
			2*cells*(1-vis)*(divInstr+4)
		d.FLOPs = PR*vis*(2*Dh+20) + 2*QKV*nk + QKV*b2f(c.Gated)
		d.Bytes = f4 * (3*QKV + PR + outs*QKV + float64(s.H*s.Dh)*b2f(c.Gated))
	case "AttendGrad": // dV, dP kept, rowsums, dS once per cell, dQ and dK, masked terms as Attend's
		d.Instr = (cells+4*qd)*stageInstr + 3*2*qd + 3*qd*(3*nk+10) + cells*vis*(3*Dh+8) + 4*T*warps(s.T) + cells*vis*6 + 3*qd*stageInstr +
			2*cells*(1-vis)*(divInstr+4) // dP's and dS's loops over the masked cells
		d.FLOPs = 6*QKV*nk + 2*PR*vis*Dh + PR*vis*5
		d.Bytes = f4 * (PR + 7*QKV)
	}
	d.Chain = chunkChain
	return []Dispatch{d}, nil
}

// lossModel: the loss kernels stage 64 rows of logits or probabilities
// at a time through shared memory, a row an invocation.
func lossModel(c Call) []Dispatch {
	R, V := float64(c.Rows), float64(c.V)
	chunks := float64(ceilDiv(c.Rows, 64))
	switch c.Kernel {
	case "SoftmaxXent": // a workgroup per seed; exp32, double sums, divisions and the log
		d := perSeed(c, "softmaxxent", 1)
		d.Instr = chunks*(2*V*stageInstr+80*V+150) + 300
		d.FLOPs, d.Bytes = 40*R*V, f4*(2*R*V+2*R)
		d.Chain = chunks * chunkChain
		return []Dispatch{d}
	case "SoftmaxXentGrad": // workgroups of 64 rows, each counting the seed's answers
		if c.Rows == 0 {
			return nil
		}
		d := perSeed(c, "softmaxxentgrad", ceilDiv(c.Rows, 64))
		d.Instr = V*(2*stageInstr+6) + chunks*4 + 100
		d.FLOPs, d.Bytes = 3*R*V, f4*(2*R*V+R)
		d.Chain = 2 * chunkChain
		return []Dispatch{d}
	}
	d := perSeed(c, "countcorrect", 1)
	d.Instr = chunks*(6*V+20) + 200
	d.FLOPs, d.Bytes = R*V, f4*(R*V+R)
	return []Dispatch{d}
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
	// (latency over the loads the compiler keeps in flight); AddStep the
	// seconds of one dependent add.
	ChainStep, AddStep float64
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
		ChainStep: 450.0 / 4 / 1.98e9, AddStep: 4 / 1.98e9, Overhead: 5e-6},
	{Name: "H200 (pessimistic)", FLOPs: 67e12 * 0.7, Issue: 132 * 4 * 1.98e9 * 0.55, Bandwidth: 3.0e12, Sectors: 110e9,
		ChainStep: 700.0 / 2 / 1.98e9, AddStep: 8 / 1.98e9, Overhead: 10e-6},
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
		Chain:     d.Chain*m.ChainStep + d.Serial*m.AddStep,
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

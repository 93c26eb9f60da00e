package bench

import (
	"math"
	"strings"
	"testing"

	"headlab/backend/cpu"
	glb "headlab/backend/gl"
	"headlab/kernels"
	"headlab/tasks"
)

// everyRowCalls records the training step of the next-token loss, which
// computes every row: StepCalls of its BenchConfig.
func everyRowCalls(t *testing.T, batch int) []Call {
	t.Helper()
	calls, err := StepCalls(BenchConfig(batch, tasks.NextToken))
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

// TestStepCallsAreTheStep: the recorder sees the Net's kernels as the GL
// device runs them, every group the graph shows as one fused kernel
// (graph/fused.go), then MarkDiverged and Adam on every parameter, each
// for one seed.
func TestStepCallsAreTheStep(t *testing.T) {
	c := BenchConfig(64, tasks.Answers)
	calls, err := StepCalls(c)
	if err != nil {
		t.Fatal(err)
	}
	_, k, err := SeedTraffic(c)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, c := range calls {
		n[c.Kernel]++
	}
	// 2 layers of q, k, v, out, fc1 and fc2 and the unembedding: dW with
	// db; 2 layers of two LayerNorms and the final one: dx, dgamma and
	// dbeta (and in the layers the residual's gradient added); the two
	// embeddings added; attention forward and backward a layer; each
	// layer's sums of q's, k's and v's input gradients (2), GELU's
	// derivative and the gate after their products.
	want := map[string]int{"WeightGrad": 13, "LayerNormGrad": 5, "EmbedAdd": 1, "Attend": 2, "AttendGrad": 2,
		"MatMulThen": 8, "ColSum": 0, "ColDotSum": 0, "Add": 0, "Probs": 0, "MixGradP": 0}
	for kernel, w := range want {
		if n[kernel] != w {
			t.Errorf("%d calls of %s, want %d (%v)", n[kernel], kernel, w, n)
		}
	}
	// The kernels the fused ones save: one each of the weight gradients
	// and the products with an epilogue, two each of the LayerNorms'
	// gradients (and one more for a residual's), the embeddings' and
	// attention's forward, three of attention's backward.
	fused := 13 + 8 + 2*5 + 4 + 2 + 2*2 + 3*2
	if len(calls) != k-fused+2 {
		t.Fatalf("%d calls (%v), want the Net's %d kernels less %d fused away, + 2", len(calls), n, k, fused)
	}
	last := calls[len(calls)-1]
	if calls[len(calls)-2].Kernel != "MarkDiverged" || last.Kernel != "Adam" || last.Len != 18704 {
		t.Errorf("the step ends %+v, %+v", calls[len(calls)-2], last)
	}
	for _, c := range calls {
		if c.S != 1 {
			t.Fatalf("%+v: S = %d", c, c.S)
		}
	}
}

// TestModelCountsTheProducts: every product's FLOPs are 2mnk (and its
// epilogue's, an operation an element), and the step's products add up
// to bench.StepFlops' count of them.
func TestModelCountsTheProducts(t *testing.T) {
	calls, err := StepCalls(BenchConfig(64, tasks.Answers))
	if err != nil {
		t.Fatal(err)
	}
	var prod float64
	for _, c := range calls {
		ds, err := Model(c)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kernel != "MatMul" && c.Kernel != "Linear" && c.Kernel != "WeightGrad" && c.Kernel != "MatMulThen" {
			continue
		}
		f := 2 * float64(c.M*c.N*c.K)
		if c.Kernel == "WeightGrad" {
			f += float64(c.N * c.K) // the column sums
		}
		if c.Res || c.Epilogue != 0 {
			f += float64(c.M * c.N) // the epilogue's add or product
		}
		if len(ds) != 1 || ds[0].FLOPs != f {
			t.Errorf("%+v: %+v", c, ds)
		}
		prod += 2 * float64(c.M*c.N*c.K)
	}
	if prod < 85e6 || prod > 95e6 {
		t.Errorf("the step's products: %.1f MFLOP", prod/1e6)
	}
}

// TestModelScalesWithS: a dispatch's predicted time grows with S (less
// than linearly where its fixed costs dominate), and the step at S = 1 is
// mostly dispatch overhead.
func TestModelScalesWithS(t *testing.T) {
	calls, err := StepCalls(BenchConfig(64, tasks.Answers))
	if err != nil {
		t.Fatal(err)
	}
	one, err := ModelStep(calls, 1)
	if err != nil {
		t.Fatal(err)
	}
	big, err := ModelStep(calls, 1024)
	if err != nil {
		t.Fatal(err)
	}
	// Per seed, the same work (a dispatch done once for every seed, as
	// an index of shared ids, shares its bytes out).
	if len(one.Dispatches) != len(big.Dispatches) || one.FLOPs != big.FLOPs || big.Bytes > one.Bytes || big.Bytes < 0.99*one.Bytes {
		t.Fatalf("S=1: %d dispatches, %g B, %g FLOP; S=1024: %d, %g, %g", len(one.Dispatches), one.Bytes, one.FLOPs,
			len(big.Dispatches), big.Bytes, big.FLOPs)
	}
	for i := range H200 {
		over := float64(len(one.Dispatches)) * H200[i].Overhead
		if one.Seconds[i] < over || one.Seconds[i] > 3*over {
			t.Errorf("%s: S=1 step %.3g s, overhead alone %.3g s", H200[i].Name, one.Seconds[i], over)
		}
		if big.Seconds[i] < 5*one.Seconds[i] {
			t.Errorf("%s: S=1024 step %.3g s, S=1 %.3g s", H200[i].Name, big.Seconds[i], one.Seconds[i])
		}
	}
	if r := big.SeedStepsPerS(); r[0] <= r[1] {
		t.Errorf("optimistic %v seed-steps/s not above pessimistic %v", r[0], r[1])
	}
}

// TestModelRefusesUnknownKernels: a call the model does not know is an
// error, not a silent zero.
func TestModelRefusesUnknownKernels(t *testing.T) {
	if _, err := Model(Call{Kernel: "Conv2D", S: 1}); err == nil || !strings.Contains(err.Error(), "Conv2D") {
		t.Errorf("Conv2D: %v", err)
	}
	if _, err := ModelStep([]Call{{Kernel: "Probs", S: 1, Shape: kernels.Shape{}}}, 4); err == nil {
		t.Error("an empty attention shape: no error")
	}
}

// TestProfileJoin: the profile pairs each modelled dispatch with the
// device's timing and refuses a device whose dispatches differ.
func TestProfileJoin(t *testing.T) {
	calls := []Call{{Kernel: "Add", S: 3, Len: 100}, {Kernel: "MatMul", S: 3, M: 40, N: 32, K: 8}}
	times := []kernels.DispatchTime{
		{Kernel: "Add", Program: "add", Seeds: 3, Groups: 5, GroupSize: 64, Nanos: 1500},
		{Kernel: "MatMul", Program: "matmul", Seeds: 3, Groups: 6, GroupSize: 32, Nanos: 2500},
	}
	rows, err := Profile(calls, times)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Micros != 1.5 || rows[1].Micros != 2.5 || rows[1].FLOP != 3*2*40*32*8 ||
		rows[0].Invocations != 5*64 || rows[1].Invocations != 6*32 || rows[0].Bytes != 3*4*300 || rows[1].H200Micros[0] <= 0 || rows[1].H200Bound == "" {
		t.Errorf("%+v", rows)
	}
	for _, bad := range [][]kernels.DispatchTime{
		times[:1],
		append(append([]kernels.DispatchTime(nil), times...), times[0]),
		{times[0], {Kernel: "MatMul", Program: "matmul", Seeds: 3, Groups: 7, GroupSize: 32}},
		{times[1], times[0]},
	} {
		if _, err := Profile(calls, bad); err == nil {
			t.Errorf("%+v: joined", bad)
		}
	}
}

// TestProfileGL: with Profile, a GL group's row holds every dispatch of
// one more step, timed, with the model's figures beside it; ProfileGroup
// gives the same dispatches.
func TestProfileGL(t *testing.T) {
	b := glBackend(t)
	b.Profile = true
	c := BenchConfig(4, tasks.Answers)
	r, err := Groups(b, c, 2, Timing{Steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Dispatches) == 0 || float64(len(r.Dispatches)) != r.DispatchesPerStep {
		t.Fatalf("%d dispatches profiled, %v per step", len(r.Dispatches), r.DispatchesPerStep)
	}
	var flop float64
	for i, d := range r.Dispatches {
		if d.Micros <= 0 || d.Bytes <= 0 || d.FLOP < 0 || d.Invocations != d.Workgroups*int64(d.GroupSize) || d.Workgroups <= 0 ||
			d.H200Micros[0] <= 0 || d.H200Micros[1] < d.H200Micros[0] || d.Kernel == "" || d.Program == "" {
			t.Errorf("dispatch %d: %+v", i, d)
		}
		flop += d.FLOP
	}
	if flop/2 < r.ModelFLOP*0.99 || flop/2 > r.ModelFLOP*1.01 {
		t.Errorf("the profile's FLOPs %g for 2 seeds, the model's %g per seed-step", flop, r.ModelFLOP)
	}
	rows, err := ProfileGroup(openGL(t), c, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(r.Dispatches) {
		t.Fatalf("ProfileGroup: %d dispatches, Groups %d", len(rows), len(r.Dispatches))
	}
	for i := range rows {
		if rows[i].Program != r.Dispatches[i].Program || rows[i].Micros <= 0 {
			t.Errorf("dispatch %d: %+v, then %+v", i, rows[i], r.Dispatches[i])
		}
	}
	if _, err := ProfileGroup(cpu.New(), c, 1); err == nil || !strings.Contains(err.Error(), "cannot time") {
		t.Errorf("ProfileGroup on the CPU: %v", err)
	}
}

// TestModelPredictsTheGoal: at S = 1,024, batch 64, the default model's
// step on an H200 makes at least 100,000 seed-steps/s at the pessimistic
// rates (so at the optimistic ones too), with the loss on the answer rows and on every row (the
// next-token loss's step, no answer-row lookup: its only EmbedGrads are
// the tokens' and the positions', each an index and a sum).
func TestModelPredictsTheGoal(t *testing.T) {
	answers, err := StepCalls(BenchConfig(64, tasks.Answers))
	if err != nil {
		t.Fatal(err)
	}
	every := everyRowCalls(t, 64)
	for _, s := range []struct {
		name  string
		calls []Call
	}{{"answer rows", answers}, {"every row", every}} {
		m, err := ModelStep(s.calls, 1024)
		if err != nil {
			t.Fatal(err)
		}
		r := m.SeedStepsPerS()
		t.Logf("%s: %d dispatches, %.1f-%.1f ms, %.0f-%.0f seed-steps/s", s.name, len(m.Dispatches), 1e3*m.Seconds[0], 1e3*m.Seconds[1], r[1], r[0])
		if r[1] < 100000 || r[0] < r[1] {
			t.Errorf("%s: %.0f-%.0f seed-steps/s", s.name, r[1], r[0])
		}
	}
	n := 0
	for _, c := range every {
		if c.Kernel == "EmbedGrad" {
			n++
			if c.Rows != 64*16 || c.V > 16 {
				t.Errorf("every row: %+v", c)
			}
		}
	}
	if n != 2 {
		t.Errorf("every row: %d EmbedGrads", n)
	}
}

// TestGLAttendsIsTheDevices: the recorder's stand-in for the GL device's
// fused attention takes the shapes the GL device takes, so that the
// modelled step fuses the heads the GL step fuses.
func TestGLAttendsIsTheDevices(t *testing.T) {
	yes := 0
	for T := 1; T <= 80; T++ {
		for _, dh := range []int{1, 4, 8, 16, 32, 64} {
			for _, causal := range []bool{false, true} {
				s := kernels.Shape{B: 2, T: T, H: 3, Dh: dh, Causal: causal}
				want := (&glb.Device{}).Attends(s)
				if got := GLAttends(s); got != want {
					t.Errorf("%+v: GLAttends %v, the GL device %v", s, got, want)
				}
				if want {
					yes++
				}
			}
		}
	}
	if yes == 0 || GLAttends(kernels.Shape{}) {
		t.Errorf("%d shapes taken; the empty one: %v", yes, GLAttends(kernels.Shape{}))
	}
}

// TestModelAtTheBigShape: at --layers 4 --heads 8 --d-model 256 --d-ff
// 1024 --seq-len 64 --vocab 64 and batch 32 the model's products are the
// hand count (every linear forward, then its input's and its weight's
// gradients: three products of 2mnk each), and the whole step, attention
// and elementwise work included, is the 39-41 GFLOP a seed-step,
// within 5% of StepFlops' count (which counts the embeddings as products
// and the causal mask's zeros, and leaves the elementwise work out).
func TestModelAtTheBigShape(t *testing.T) {
	c := BenchConfig(32, tasks.NextToken)
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab = 4, 8, 256, 1024, 64, 64
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	calls, err := StepCalls(c)
	if err != nil {
		t.Fatal(err)
	}
	var prod float64
	for _, k := range calls {
		if k.Kernel == "MatMul" || k.Kernel == "Linear" || k.Kernel == "WeightGrad" || k.Kernel == "MatMulThen" {
			prod += 2 * float64(k.M*k.N*k.K)
		}
	}
	n, d, f, v, L := 32.0*64, 256.0, 1024.0, 64.0, 4.0
	forward := L*(2*n*4*d*d+2*n*2*d*f) + 2*n*d*v
	if prod != 3*forward {
		t.Errorf("the step's products: %.0f FLOP, the hand count %.0f", prod, 3*forward)
	}
	m, err := ModelStep(calls, 64)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := c.NewTask()
	if err != nil {
		t.Fatal(err)
	}
	counted := StepFlops(c.Model(tk), 32, tasks.LossPositions(tk, c.Loss))
	if m.FLOPs < 39e9 || m.FLOPs > 41e9 || math.Abs(m.FLOPs-counted) > 0.05*counted {
		t.Errorf("the step: %.2f GFLOP a seed-step, StepFlops %.2f", m.FLOPs/1e9, counted/1e9)
	}
	if m.Bytes <= 0 || !(m.Seconds[0] > 0 && m.Seconds[0] < m.Seconds[1]) {
		t.Errorf("%.0f bytes, %v s", m.Bytes, m.Seconds)
	}
}

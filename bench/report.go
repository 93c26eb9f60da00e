package bench

import (
	"fmt"
	"io"
	"text/tabwriter"

	"headlab/graph"
)

// Report is what `headlab bench --json` prints.
type Report struct {
	// SIMD is the CPU's vector path that ran (internal/simd.Path).
	SIMD string `json:"simd"`
	// Loss is the training loss every step measured trains on: it says
	// which rows the step computes (tasks.LossPositions).
	Loss      string `json:"loss"`
	Renderer  string `json:"gl_renderer,omitempty"`
	GLContext string `json:"gl_context,omitempty"`
	GLError   string `json:"gl_error,omitempty"`
	// Steps is the groups curve: one row per backend and group size, at
	// Batch, with the CPU on CPUWorkers concurrent groups.
	Steps      []GroupResult `json:"steps,omitempty"`
	Batch      int           `json:"batch,omitempty"`
	CPUWorkers int           `json:"cpu_workers,omitempty"`
	// Skipped says, one line each, which group sizes were not measured.
	Skipped []string `json:"skipped,omitempty"`
	// GPUPaysFrom is the smallest group size from which on GL beat the CPU
	// in this run, 0 when it never did; absent unless both were measured.
	GPUPaysFrom *int           `json:"gpu_pays_from,omitempty"`
	Kernels     []KernelResult `json:"kernels,omitempty"`
	// Dispatches is the kernels part's per-dispatch profile of one GL
	// training step of DispatchGroup models.
	Dispatches    []DispatchProfile `json:"dispatches,omitempty"`
	DispatchGroup int               `json:"dispatch_group,omitempty"`
	// Model is the model part: the cost model's step at each S.
	Model      []ModelRow   `json:"model,omitempty"`
	TrainSteps []StepResult `json:"train_steps,omitempty"`
	Peak       *PeakResult  `json:"sgemm_peak,omitempty"`
	PyTorch    *VsPyTorch   `json:"vs_pytorch,omitempty"`
	// Shape is the model that steps, groups and model train or model
	// (bench's model flags).
	Shape *graph.Config `json:"shape,omitempty"`
	// ModelBatch is the batch of the model part's step.
	ModelBatch int `json:"model_batch,omitempty"`
}

// ModelRow is the model part at one S: every dispatch of the GL step
// as the cost model predicts it on an H200 (optimistic, pessimistic).
type ModelRow struct {
	Group         int               `json:"group"`
	Dispatches    []DispatchProfile `json:"dispatches"`
	FLOP          float64           `json:"flop_per_seed_step"`
	Bytes         float64           `json:"bytes_per_seed_step"`
	MsPerStep     [2]float64        `json:"h200_ms_per_step"`
	SeedStepsPerS [2]float64        `json:"h200_seed_steps_per_s"`
}

// VsPyTorch is the bench vs-pytorch part of the report.
type VsPyTorch struct {
	Error string `json:"error,omitempty"` // set when PyTorch is not installed
	// TrainRSSMB is this process's peak resident memory after one default
	// training run of --rss-steps steps (the first thing bench vs-pytorch does;
	// it includes the binary and its shared libraries).
	TrainRSSMB float64 `json:"train_peak_rss_mb"`
	// Shape is the model timed (the default unless the model flags say).
	Shape *graph.Config    `json:"shape,omitempty"`
	Steps []StepComparison `json:"steps,omitempty"`
	Sweep *SweepComparison `json:"sweep,omitempty"`
	// Instructions is headlab's instructions per step under callgrind
	// (absent without valgrind, or with --callgrind=false).
	Instructions []InstructionCount `json:"instructions,omitempty"`
	// InstructionsError says why Instructions is absent.
	InstructionsError string `json:"instructions_error,omitempty"`
}

// ModelRows is the model part: the cost model's step of calls (StepCalls)
// at each group size S of groups.
func ModelRows(calls []Call, groups []int) ([]ModelRow, error) {
	var rows []ModelRow
	for _, S := range groups {
		m, err := ModelStep(calls, S)
		if err != nil {
			return nil, err
		}
		rows = append(rows, ModelRow{Group: S, Dispatches: m.Rows(), FLOP: m.FLOPs, Bytes: m.Bytes,
			MsPerStep: [2]float64{1e3 * m.Seconds[0], 1e3 * m.Seconds[1]}, SeedStepsPerS: m.SeedStepsPerS()})
	}
	return rows, nil
}

// WriteText writes the report as tables.
func (rep *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "CPU vector path: %s\n", rep.SIMD)
	if rep.Renderer != "" {
		fmt.Fprintf(w, "GL renderer: %s (%s)\n\n", rep.Renderer, rep.GLContext)
	}
	if len(rep.Kernels) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "backend\tkernel\tshape\tus/call\tGFLOP/s\tx CPU time\t")
		for _, k := range rep.Kernels {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.2f\t%.2f\t\n", k.Backend, k.Kernel, k.Shape, k.MicrosPerOp, k.GFLOPs, k.RatioToCPU)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(rep.TrainSteps) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "backend\tbatch\tms/step\tsteps/s\tallocs/step\tMB/step\t")
		for _, s := range rep.TrainSteps {
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.0f\t%.1f\t\n", s.Backend, s.Batch, s.MsPerStep, s.StepsPerSec, s.AllocsPerStep, s.BytesPerStep/(1<<20))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(rep.Dispatches) > 0 {
		fmt.Fprintf(w, "every dispatch of one gl training step of %d models, timed on the GPU, beside the cost model:\n", rep.DispatchGroup)
		writeDispatches(w, rep.Dispatches, true)
		fmt.Fprintln(w)
	}
	if rep.Batch > 0 {
		if err := rep.writeGroups(w); err != nil {
			return err
		}
	}
	for _, m := range rep.Model {
		fmt.Fprintf(w, "\nthe cost model's gl training step of %d models%s at batch %d on an H200 (optimistic, pessimistic):\n", m.Group, rep.shapeName(), rep.ModelBatch)
		writeDispatches(w, m.Dispatches, false)
		fmt.Fprintf(w, "%d dispatches; per seed-step %.1f MFLOP, %.1f MB; step %.2f-%.2f ms: %.0f-%.0f seed-steps/s\n",
			len(m.Dispatches), m.FLOP/1e6, m.Bytes/1e6, m.MsPerStep[0], m.MsPerStep[1], m.SeedStepsPerS[1], m.SeedStepsPerS[0])
	}
	return nil
}

// shapeName is " of L x H x D (d-ff F, seq-len T, vocab V)", the
// report's model, or "" when it has none.
func (rep *Report) shapeName() string {
	if rep.Shape == nil {
		return ""
	}
	c := rep.Shape
	return fmt.Sprintf(" of %d x %d x %d (d-ff %d, seq-len %d, vocab %d)", c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab)
}

// writeDispatches writes a per-dispatch table: the device's time when
// measured, then the model's figures.
func writeDispatches(w io.Writer, rows []DispatchProfile, measured bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "#\tkernel\tprogram\tworkgroups\tsize\t"
	if measured {
		head += "us\t"
	}
	fmt.Fprintln(tw, head+"GFLOP\tMB\tH200 us\tbound\t")
	var us, lo, hi float64
	for i, d := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t", i, d.Kernel, d.Program, d.Workgroups, d.GroupSize)
		if measured {
			fmt.Fprintf(tw, "%.1f\t", d.Micros)
		}
		fmt.Fprintf(tw, "%.3f\t%.2f\t%.1f-%.1f\t%s\t\n", d.FLOP/1e9, d.Bytes/1e6, d.H200Micros[0], d.H200Micros[1], d.H200Bound)
		us, lo, hi = us+d.Micros, lo+d.H200Micros[0], hi+d.H200Micros[1]
	}
	fmt.Fprintf(tw, "\tall\t\t\t\t")
	if measured {
		fmt.Fprintf(tw, "%.1f\t", us)
	}
	fmt.Fprintf(tw, "\t\t%.0f-%.0f\t\t\n", lo, hi)
	tw.Flush()
}

// writeGroups writes the groups curve.
func (rep *Report) writeGroups(w io.Writer) error {
	fmt.Fprintf(w, "groups of S default models at batch %d (cpu: %d groups stepping at once):\n", rep.Batch, rep.CPUWorkers)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tS\tseed-steps/s\tms/step\tdispatches/step\tupload B/step\treadback B/step\tGFLOP/s\tGB/s\t")
	for _, s := range rep.Steps {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t\n", s.Backend, s.Group, s.SeedStepsPerS, s.MsPerStep,
			s.DispatchesPerStep, s.UploadBytesPerStep, s.ReadbackBytesPerStep, s.GFLOPs, s.GBs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.GPUPaysFrom != nil {
		if *rep.GPUPaysFrom > 0 {
			fmt.Fprintf(w, "gl beats the cpu from S = %d on, in this run\n", *rep.GPUPaysFrom)
		} else {
			fmt.Fprintf(w, "gl never beat the cpu in this run (at the largest S both measured; renderer %s)\n", rep.Renderer)
		}
	}
	for _, s := range rep.Steps {
		if len(s.Dispatches) > 0 {
			fmt.Fprintf(w, "\nevery dispatch of one more %s step of %d models, timed on the device, beside the cost model:\n", s.Backend, s.Group)
			writeDispatches(w, s.Dispatches, true)
		}
	}
	return nil
}

// WriteVsPyTorch writes the bench vs-pytorch report as text: python is the
// interpreter asked for, rounds and rssSteps what was measured.
func (rep *Report) WriteVsPyTorch(w io.Writer, python string, rounds, rssSteps int) error {
	vs := rep.PyTorch
	if s := vs.Shape; s != nil {
		mlp := fmt.Sprintf("d-ff %d", s.DFF)
		if s.NoMLP {
			mlp = "no MLP"
		}
		fmt.Fprintf(w, "model: %d layers, %d heads, d-model %d, %s, seq-len %d, vocab %d\n", s.Layers, s.Heads, s.DModel, mlp, s.SeqLen, s.Vocab)
	}
	fmt.Fprintf(w, "loss: %s (both sides compute the same rows)\n", rep.Loss)
	fmt.Fprintf(w, "sgemm peak (one core, %s, %d^3): %.1f GFLOP/s\n", rep.Peak.Kernel, rep.Peak.Size, rep.Peak.GFLOPs)
	fmt.Fprintf(w, "peak resident memory after one default training run (%d steps): %.1f MB\n", rssSteps, vs.TrainRSSMB)
	if vs.Error != "" {
		fmt.Fprintf(w, "PyTorch: not installed (%s); headlab alone:\n", python)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "batch\tms/step\tsteps/s\tGFLOP/s\tallocs/step\t")
		for _, s := range rep.TrainSteps {
			fmt.Fprintf(tw, "%d\t%.2f\t%.1f\t%.1f\t%.0f\t\n", s.Batch, s.MsPerStep, s.StepsPerSec, s.GFLOPs, s.AllocsPerStep)
		}
		err := tw.Flush()
		vs.writeInstructions(w)
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "medians of %d alternating rounds; ratio against the faster PyTorch (its BLAS named)\n", rounds)
	fmt.Fprintln(tw, "batch\theadlab ms/step\tPyTorch default\tPyTorch Haswell\tfaster\tratio\theadlab GFLOP/s\t% of peak\t")
	for _, s := range vs.Steps {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.2f\t%s\t%.2f\t%.1f\t%.0f%%\t\n", s.Batch, s.HeadlabMsPerStep, s.PyTorchDefaultMs, s.PyTorchHaswellMs,
			s.FasterBLAS, s.Ratio, s.HeadlabGFLOPs, 100*s.HeadlabGFLOPs/rep.Peak.GFLOPs)
	}
	tw.Flush()
	sw := vs.Sweep
	fmt.Fprintf(w, "\nsweep, batch %d, %d workers for %.0f s: headlab %.0f steps/s, PyTorch (%s BLAS) %.0f steps/s, ratio %.2f\n",
		sw.Batch, sw.Workers, sw.Seconds, sw.HeadlabStepsPerS, sw.BLAS, sw.PyTorchStepsPerS, sw.Ratio)
	vs.writeInstructions(w)
	return nil
}

func (vs *VsPyTorch) writeInstructions(w io.Writer) {
	for _, n := range vs.Instructions {
		fmt.Fprintf(w, "instructions per step at batch %d (callgrind, %s path): %.2fM\n", n.Batch, n.SIMD, n.PerStep/1e6)
	}
}

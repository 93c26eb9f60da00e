package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/bench"
	"headlab/kernels"
	"headlab/train"
)

func init() { commands = append(commands, benchCmd) }

// benchReport is what `headlab bench --json` prints.
type benchReport struct {
	Renderer string               `json:"gl_renderer,omitempty"`
	GLError  string               `json:"gl_error,omitempty"`
	Kernels  []bench.KernelResult `json:"kernels"`
	Steps    []bench.StepResult   `json:"train_steps"`
	Peak     *bench.PeakResult    `json:"sgemm_peak,omitempty"`
	PyTorch  *vsPyTorch           `json:"vs_pytorch,omitempty"`
}

// vsPyTorch is the --vs-pytorch part of the report.
type vsPyTorch struct {
	Error string `json:"error,omitempty"` // set when PyTorch is not installed
	Torch string `json:"torch,omitempty"`
	// TrainRSSMB is this process's peak resident memory after one default
	// training run of --rss-steps steps (the first thing --vs-pytorch does;
	// it includes the binary and its shared libraries).
	TrainRSSMB float64                `json:"train_peak_rss_mb"`
	Steps      []bench.StepComparison `json:"steps,omitempty"`
	Sweep      *bench.SweepComparison `json:"sweep,omitempty"`
}

func benchCmd(e *env) *cobra.Command {
	var (
		asJSON   bool
		backends string
		budget   time.Duration
		steps    int
		profile  string
		vs       bool
		python   string
		rounds   int
		window   time.Duration
		workers  int
		rssSteps int
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the attention kernels and training steps on each backend",
		Long: `Times each attention kernel on each backend and shape (microseconds per
call, GFLOP/s counted as 2*T*T*Dh per sequence-head, ratio to the CPU), then
whole training steps of the default induction model at batch 32 and 64.
GL times include uploads and readbacks. Under Mesa's llvmpipe (no GPU) the
GL backend is expected to be slower than the CPU.

With --vs-pytorch it instead measures headlab's CPU training against the
same model in PyTorch eager on one thread (bench/pytorch/train_step.py, run
with --python): one default training run first (its peak resident memory),
the single-core sgemm peak, ms per step at batch 32 and 64 (best of
--rounds, alternating the two), achieved GFLOP/s, and sweep throughput with
--workers trainers (goroutines) against as many PyTorch processes, each side
training for --window. Without PyTorch it says so in one line and reports
headlab alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if budget <= 0 || steps <= 0 {
				return usagef("--budget and --steps must be positive")
			}
			var bes []kernels.Backend
			var rep benchReport
			switch backends {
			case "cpu", "all":
				bes = append(bes, cpu.New())
			case "gl":
			default:
				return usagef("unknown --backends %q (want all, cpu or gl)", backends)
			}
			if backends != "cpu" && !vs {
				g, err := gl.New(gl.Options{})
				switch {
				case err == nil:
					defer g.Close()
					bes = append(bes, g)
					rep.Renderer = g.Renderer()
				case backends == "gl":
					return usageError{fmt.Errorf("--backends gl: %w", err)}
				default:
					rep.GLError = err.Error()
					fmt.Fprintf(e.stderr, "headlab: benchmarking the cpu backend only: %v\n", err)
				}
			}
			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return usageError{err}
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if vs {
				return benchVsPyTorch(e, asJSON, python, steps, rounds, rssSteps, window, workers)
			}
			fmt.Fprintln(e.stderr, "timing kernels...")
			var err error
			if rep.Kernels, err = bench.Kernels(bes, bench.Shapes, budget); err != nil {
				return err
			}
			for _, be := range bes {
				for _, batch := range []int{32, 64} {
					fmt.Fprintf(e.stderr, "timing %d training steps on %s at batch %d...\n", steps, be.Name(), batch)
					r, err := bench.TrainSteps(be, batch, steps)
					if err != nil {
						return err
					}
					rep.Steps = append(rep.Steps, r)
				}
			}
			if asJSON {
				return writeJSON(e.stdout, rep)
			}
			if rep.Renderer != "" {
				fmt.Fprintf(e.stdout, "GL renderer: %s\n\n", rep.Renderer)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "backend\tkernel\tshape\tus/call\tGFLOP/s\tx CPU time\t")
			for _, k := range rep.Kernels {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.2f\t%.2f\t\n", k.Backend, k.Kernel, k.Shape, k.MicrosPerOp, k.GFLOPs, k.RatioToCPU)
			}
			tw.Flush()
			fmt.Fprintln(e.stdout)
			tw = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "backend\tbatch\tms/step\tsteps/s\tallocs/step\tMB/step\t")
			for _, s := range rep.Steps {
				fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.0f\t%.1f\t\n", s.Backend, s.Batch, s.MsPerStep, s.StepsPerSec, s.AllocsPerStep, s.BytesPerStep/(1<<20))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	cmd.Flags().StringVar(&backends, "backends", "all", "which backends: all (cpu, and gl when a context can be made), cpu or gl")
	cmd.Flags().DurationVar(&budget, "budget", 200*time.Millisecond, "time spent measuring each kernel and shape")
	cmd.Flags().IntVar(&steps, "steps", 50, "training steps timed per backend and batch")
	cmd.Flags().StringVar(&profile, "profile", "", "write a CPU profile of the whole benchmark to this file (go tool pprof)")
	cmd.Flags().BoolVar(&vs, "vs-pytorch", false, "compare CPU training steps and sweep throughput with PyTorch eager")
	cmd.Flags().StringVar(&python, "python", defaultPython(), "Python interpreter with torch, for --vs-pytorch")
	cmd.Flags().IntVar(&rounds, "rounds", 3, "--vs-pytorch: alternating rounds per batch size (best kept)")
	cmd.Flags().DurationVar(&window, "window", 5*time.Second, "--vs-pytorch: how long each side of the sweep trains")
	cmd.Flags().IntVar(&workers, "workers", runtime.NumCPU(), "--vs-pytorch: concurrent trainers (and PyTorch processes) in the sweep")
	cmd.Flags().IntVar(&rssSteps, "rss-steps", 1000, "--vs-pytorch: steps of the training run whose peak resident memory is reported")
	return cmd
}

// defaultPython is Debian's interpreter (where python3-torch installs)
// when present: a python3 earlier on PATH may be another one without torch.
func defaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// benchVsPyTorch is `headlab bench --vs-pytorch`.
func benchVsPyTorch(e *env, asJSON bool, python string, steps, rounds, rssSteps int, window time.Duration, workers int) error {
	if rounds <= 0 || window <= 0 || workers <= 0 || rssSteps < 0 {
		return usagef("--rounds, --window and --workers must be positive, --rss-steps not negative")
	}
	rep := benchReport{PyTorch: &vsPyTorch{}}
	vs := rep.PyTorch
	fmt.Fprintf(e.stderr, "one default training run of %d steps (memory)...\n", rssSteps)
	c := train.Defaults("induction")
	c.Steps = rssSteps
	if _, _, err := train.Run(c, cpu.New(), 0, nil); err != nil {
		return err
	}
	_, vs.TrainRSSMB = bench.ResidentMB()
	fmt.Fprintln(e.stderr, "sgemm peak...")
	peak := bench.SgemmPeak(512, time.Second)
	rep.Peak = &peak
	pt, err := bench.NewPyTorch(python)
	switch {
	case errors.Is(err, bench.ErrNoPyTorch):
		vs.Error = err.Error()
		fmt.Fprintf(e.stderr, "headlab: %v; timing headlab alone\n", err)
	case err != nil:
		return err
	default:
		defer pt.Close()
	}
	if pt == nil {
		for _, batch := range []int{32, 64} {
			r, err := bench.TrainSteps(cpu.New(), batch, steps)
			if err != nil {
				return err
			}
			rep.Steps = append(rep.Steps, r)
		}
	} else {
		fmt.Fprintf(e.stderr, "timing training steps, %d rounds...\n", rounds)
		if vs.Steps, err = bench.CompareSteps(pt, []int{32, 64}, steps, rounds); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "sweep throughput, %d workers, %v each side...\n", workers, window)
		sw, err := bench.CompareSweep(pt, workers, 32, window)
		if err != nil {
			return err
		}
		vs.Sweep = &sw
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	fmt.Fprintf(e.stdout, "sgemm peak (one core, %s, %d^3): %.1f GFLOP/s\n", peak.Kernel, peak.Size, peak.GFLOPs)
	fmt.Fprintf(e.stdout, "peak resident memory after one default training run (%d steps): %.1f MB\n", rssSteps, vs.TrainRSSMB)
	if pt == nil {
		fmt.Fprintf(e.stdout, "PyTorch: not installed (%s); headlab alone:\n", python)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "batch\tms/step\tsteps/s\tGFLOP/s\tallocs/step\t")
		for _, s := range rep.Steps {
			fmt.Fprintf(tw, "%d\t%.2f\t%.1f\t%.1f\t%.0f\t\n", s.Batch, s.MsPerStep, s.StepsPerSec, s.GFLOPs, s.AllocsPerStep)
		}
		return tw.Flush()
	}
	fmt.Fprintln(e.stdout)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "batch\theadlab ms/step\tPyTorch ms/step\theadlab steps/s\tPyTorch steps/s\tratio\theadlab GFLOP/s\t% of peak\t")
	for _, s := range vs.Steps {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t%.1f\t%.0f%%\t\n", s.Batch, s.HeadlabMsPerStep, s.PyTorchMsPerStep,
			s.HeadlabStepsPerS, s.PyTorchStepsPerS, s.Ratio, s.HeadlabGFLOPs, 100*s.HeadlabGFLOPs/peak.GFLOPs)
	}
	tw.Flush()
	sw := vs.Sweep
	fmt.Fprintf(e.stdout, "\nsweep, batch %d, %d workers for %.0f s: headlab %.0f steps/s, PyTorch %.0f steps/s, ratio %.2f\n",
		sw.Batch, sw.Workers, sw.Seconds, sw.HeadlabStepsPerS, sw.PyTorchStepsPerS, sw.Ratio)
	return nil
}

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/bench"
	"headlab/kernels"
)

func init() { commands = append(commands, benchCmd) }

// benchReport is what `headlab bench --json` prints.
type benchReport struct {
	Renderer string               `json:"gl_renderer,omitempty"`
	GLError  string               `json:"gl_error,omitempty"`
	Kernels  []bench.KernelResult `json:"kernels"`
	Steps    []bench.StepResult   `json:"train_steps"`
}

func benchCmd(e *env) *cobra.Command {
	var (
		asJSON   bool
		backends string
		budget   time.Duration
		steps    int
		profile  string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the attention kernels and training steps on each backend",
		Long: `Times each attention kernel on each backend and shape (microseconds per
call, GFLOP/s counted as 2*T*T*Dh per sequence-head, ratio to the CPU), then
whole training steps of the default induction model at batch 32 and 64.
GL times include uploads and readbacks. Under Mesa's llvmpipe (no GPU) the
GL backend is expected to be slower than the CPU.`,
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
			if backends != "cpu" {
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
	return cmd
}

package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"headlab/backend/gl"
	"headlab/bench"
	"headlab/internal/atomicfile"
	"headlab/tasks"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newBenchCmd(e, nil) })
}

// benchCommon are the flags bench and bench vs-pytorch share.
type benchCommon struct {
	json          bool
	steps         int
	loss, profile string
}

// addFlags declares the shared flags on cmd; steps says what --steps 0
// means.
func (c *benchCommon) addFlags(cmd *cobra.Command, steps string) {
	fs := cmd.Flags()
	fs.BoolVar(&c.json, "json", false, "print one JSON object on stdout")
	fs.IntVar(&c.steps, "steps", 0, "training steps timed per measurement after the warm-up (0: "+steps+")")
	fs.StringVar(&c.profile, "profile", "", "write a CPU profile of the whole benchmark to this file (go tool pprof)")
	fs.StringVar(&c.loss, "loss", tasks.NextToken, "the training loss every step measured trains on: next-token (every row) or answers (the last block's MLP and the unembedding on the answer rows only)")
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
}

// check refuses a bad --loss or --profile path.
func (c *benchCommon) check() error {
	if err := tasks.CheckLoss(c.loss); err != nil {
		return usageError{err}
	}
	return checkOutputs(fileOut("profile", c.profile))
}

// run runs a benchmark, under a CPU profile with --profile: the profile is
// kept in memory and written whole at the end (to a file through a rename,
// or to stdout for "-", the report then going to stderr).
func (c *benchCommon) run(e *env, run func(*env) error) error {
	if c.profile == "" {
		return run(e)
	}
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return err
	}
	re := *e
	re.stdout = e.reportTo(c.profile)
	err := run(&re)
	pprof.StopCPUProfile()
	werr := atomicfile.WriteStdout(c.profile, e.stdout, func(w io.Writer) error { _, err := w.Write(prof.Bytes()); return err })
	return cmp.Or(err, werr)
}

// benchOptions are bench's flags, and what check makes of them.
type benchOptions struct {
	benchCommon
	bench.Flags
	// vsPyTorch is the old spelling of bench vs-pytorch, refused with the new.
	vsPyTorch bool

	own bench.Options
}

func newBenchCmd(e *env, runF func(*benchOptions) error) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark training groups of S models, training steps and kernels on each backend",
		Long:  longHelp("bench"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, func(e *env, o *benchOptions) error { return o.run(e, func(e *env) error { return runBench(e, o) }) }),
	}
	o.register(cmd)
	vs := newBenchVsCmd(e, nil)
	cmd.AddCommand(vs)
	cmd.SetFlagErrorFunc(flagOf(vs))
	vs.SetFlagErrorFunc(flagOf(cmd))
	return cmd
}

// register declares bench's flags on cmd.
func (o *benchOptions) register(cmd *cobra.Command) {
	o.addFlags(cmd, "about --step-time of them")
	fs := cmd.Flags()
	o.AddFlags(fs)
	fs.BoolVar(&o.vsPyTorch, "vs-pytorch", false, "")
	_ = fs.MarkHidden("vs-pytorch")
}

// flagOf is a FlagErrorFunc that names the command an unknown flag
// belongs to when it is other's.
func flagOf(other *cobra.Command) func(*cobra.Command, error) error {
	return func(_ *cobra.Command, err error) error {
		var name string
		if _, serr := fmt.Sscanf(err.Error(), "unknown flag: --%s", &name); serr == nil {
			if f := other.Flags().Lookup(name); f != nil && !f.Hidden {
				err = fmt.Errorf("--%s is for %s", name, other.CommandPath())
			}
		}
		return usageError{err}
	}
}

func (o *benchOptions) check(cmd *cobra.Command, _ []string) error {
	if o.vsPyTorch {
		return usagef("bench --vs-pytorch is a command of its own now: headlab bench vs-pytorch (its --help says which flags it takes)")
	}
	var err error
	if o.own, err = o.Options(o.steps, o.loss, cmd.Flags().Changed); err != nil {
		return usageError{err}
	}
	return checkOutputs(fileOut("profile", o.profile)) // Options checked --loss
}

// runBench is `headlab bench`: bench.Run on the devices of the one
// factory (bench.OpenBackend); a gl refused is bad input.
func runBench(e *env, o *benchOptions) error {
	r := o.own
	r.Profile, r.Log = gl.EnvProfile(), e.stderr
	r.Open = bench.OpenBackend(e.stderr, r.GLOptional)
	rep, err := bench.Run(r)
	if err != nil {
		return refusal(err)
	}
	if o.json {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}

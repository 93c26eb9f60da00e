package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"headlab/internal/preflight"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
	"headlab/trainrun"
)

// trainFlags are the flags that define a training run (train.Flags);
// sweep and view reuse them.
type trainFlags struct {
	train.Flags
	// names are the flags' names, in the order registered.
	names []string
}

func (f *trainFlags) register(cmd *cobra.Command) {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	fs.SortFlags = false
	f.AddFlags(fs)
	fs.VisitAll(func(fl *pflag.Flag) { f.names = append(f.names, fl.Name) })
	cmd.Flags().AddFlagSet(fs)
	_ = cmd.RegisterFlagCompletionFunc("task", cobra.FixedCompletions(tasks.Names(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
}

// config resolves the flags into a validated configuration (train.Flags).
func (f *trainFlags) config(cmd *cobra.Command) (train.Config, error) {
	c, err := f.Config(cmd.Flags().Changed)
	if err != nil {
		return c, usageError{err}
	}
	return c, nil
}

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newTrainCmd(e, nil) })
}

// trainOptions are train's flags, and what check makes of them.
type trainOptions struct {
	model       trainFlags
	backend     backendFlag
	save        string
	json, quiet bool
	every       int
	pics        pictureFlags
	recordEvery int
	seeds       string
	group       int
	relation    relationFlag

	config train.Config
	rel    int
	// many is --seeds (or --group): every seed of seedList at once.
	many     bool
	seedList []uint64
}

func newTrainCmd(e *env, runF func(*trainOptions) error) *cobra.Command {
	o := &trainOptions{}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a model on a task and report its accuracy and heads",
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runTrain),
	}
	o.model.register(cmd)
	o.backend.register(cmd)
	cmd.Flags().StringVar(&o.save, "save", "", "write a checkpoint (config.json + model.safetensors) to this directory")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object on stdout")
	cmd.Flags().BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	cmd.Flags().IntVar(&o.every, "progress-every", 250, "steps between progress lines")
	cmd.Flags().StringVar(&o.seeds, "seeds", "", "train these seeds at once instead of --seed, e.g. 1-64: one summary line (or JSON object) per seed")
	cmd.Flags().IntVar(&o.group, "group", 0, "with --seeds: models trained in lockstep (default: on cpu the seeds spread evenly over the cores; on gl as many as fit, at most 1024)")
	cmd.Flags().IntVar(&o.recordEvery, "record-every", 0, "every K steps record loss, accuracy and every head's scores (JSON history, history.json in the checkpoint)")
	o.pics.register(cmd)
	o.relation.register(cmd)
	return cmd
}

func (o *trainOptions) check(cmd *cobra.Command, _ []string) error {
	o.relation.read(cmd)
	var err error
	if o.config, err = o.model.config(cmd); err != nil {
		return err
	}
	if o.every <= 0 {
		return usagef("--progress-every must be positive, got %d", o.every)
	}
	if err := o.pics.check(); err != nil {
		return err
	}
	if err := checkOutputs(append(o.pics.outputs(), checkpointOut("save", o.save))...); err != nil {
		return err
	}
	o.config = o.config.Sized()
	task, _ := o.config.NewTask()
	if o.rel, err = o.relation.index(task); err != nil {
		return err
	}
	o.many = cmd.Flags().Changed("seeds") || cmd.Flags().Changed("group")
	if !o.many {
		if o.recordEvery < 0 {
			return usagef("--record-every must be >= 0, got %d", o.recordEvery)
		}
		return nil
	}
	for _, one := range []string{"seed", "save", "record-every", "png", "figure", "arcs"} {
		if cmd.Flags().Changed(one) {
			return usagef("--seeds trains many models at once; --%s is for one model (--seed)", one)
		}
	}
	if cmd.Flags().Changed("group") && o.group < 1 {
		return usagef("--group must be at least 1, got %d", o.group)
	}
	if o.seedList, err = sweep.ParseSeeds(o.seeds); err != nil {
		return usageError{err}
	}
	return nil
}

// runTrain trains one model, or with --seeds many (trainMany).
func runTrain(e *env, o *trainOptions) error {
	if o.many {
		return trainMany(e, o)
	}
	c := o.config
	be, closeBackend, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeBackend()
	if err := preflight.Memory(e.stderr, be, []train.Config{c}, 1, false); err != nil {
		return err
	}
	m, report, heads, att, err := trainrun.Run(trainrun.Options{Config: c, Device: be, Stderr: e.stderr, Every: o.every, Quiet: o.quiet,
		RecordEvery: o.recordEvery, Save: o.save, Relation: o.rel})
	if err != nil {
		return err
	}
	if err := o.pics.write(e, runTitle(c), att, heads.Scores(), m.Task); err != nil {
		return err
	}
	if err := report.AddUnseen(m, be); err != nil {
		return err
	}
	return e.report(o.json, report, func(w io.Writer) { report.Write(w, m, heads) }, o.pics.paths()...)
}

// trainMany trains every seed of o.seedList with o.config at once and
// prints one summary per seed (sweep.SeedsResult.Write).
func trainMany(e *env, o *trainOptions) error {
	dev, closeDev, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	s := sweep.Seeds{Config: o.config, Seeds: o.seedList, Group: o.group, Stderr: e.stderr}
	if !o.quiet {
		s.Every = o.every
	}
	res, err := sweep.TrainSeeds(s, sweep.PlatformOf(dev))
	if err != nil {
		return err
	}
	return e.report(o.json, res.Records, func(w io.Writer) { res.Write(w, e.stderr, dev.Name()) })
}

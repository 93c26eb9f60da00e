package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/progress"
	"headlab/internal/simd"
	"headlab/internal/workers"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// trainFlags are the flags that define a training run; sweep and view
// reuse them.
type trainFlags struct {
	cfg         train.Config
	noPositions bool
	noCausal    bool
	// names are the flags' names, in the order registered.
	names []string
}

func (f *trainFlags) register(cmd *cobra.Command) {
	d := train.Defaults("induction")
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVar(&f.cfg.Task, "task", "induction", "task: "+strings.Join(tasks.Names(), ", "))
	fs.IntVar(&f.cfg.SeqLen, "seq-len", 0, "sequence length (default: the task's, induction 16; docs/tasks.md says which each task takes)")
	fs.IntVar(&f.cfg.Vocab, "vocab", 0, "vocabulary size (default: the task's, induction 16)")
	fs.Uint64Var(&f.cfg.Seed, "seed", d.Seed, "random seed for weights and data")
	fs.IntVar(&f.cfg.Steps, "steps", 0, "training steps (default: the task's plateau, induction 2500)")
	fs.IntVar(&f.cfg.Batch, "batch", d.Batch, "sequences per step")
	fs.Float64Var(&f.cfg.LR, "lr", d.LR, "Adam learning rate")
	fs.StringVar(&f.cfg.Loss, "loss", d.Loss, "training loss: next-token (every position: the answer where there is one, else the next token) or answers (the answer positions alone)")
	fs.IntVar(&f.cfg.TrainExamples, "train-examples", 0, "train on a finite set of this many sequences, drawn once and sampled with replacement (0: a fresh stream)")
	fs.Float64Var(&f.cfg.WeightDecay, "weight-decay", 0, "decoupled (AdamW) weight decay")
	fs.IntVar(&f.cfg.Layers, "layers", d.Layers, "transformer blocks")
	fs.IntVar(&f.cfg.Heads, "heads", d.Heads, "attention heads per block (must divide --d-model)")
	fs.IntVar(&f.cfg.DModel, "d-model", d.DModel, "residual stream width")
	fs.IntVar(&f.cfg.DFF, "d-ff", d.DFF, "feed-forward hidden width")
	fs.BoolVar(&f.noPositions, "no-positions", false, "switch positional embeddings off")
	fs.BoolVar(&f.noCausal, "no-causal", false, "switch the causal mask off")
	fs.BoolVar(&f.cfg.TiedEmbeddings, "tied-embeddings", false, "unembed with the token embedding transposed (no separate unembedding matrix)")
	fs.BoolVar(&f.cfg.NoMLP, "no-mlp", false, "attention-only: no MLP (and no LayerNorm before it) in any block")
	fs.VisitAll(func(fl *pflag.Flag) { f.names = append(f.names, fl.Name) })
	cmd.Flags().AddFlagSet(fs)
	_ = cmd.RegisterFlagCompletionFunc("task", cobra.FixedCompletions(tasks.Names(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
}

// config resolves the flags into a validated configuration; sizes not
// given stay 0, the task's own (train.Config.Sized writes them in), so
// that a sweep's grid over tasks gives each its own.
func (f *trainFlags) config(cmd *cobra.Command) (train.Config, error) {
	c := f.cfg
	c.Positions, c.Causal = !f.noPositions, !f.noCausal
	if !cmd.Flags().Changed("steps") {
		c.Steps = train.Defaults(c.Task).Steps
	}
	if c.NoMLP && !cmd.Flags().Changed("d-ff") {
		c.DFF = 0 // an attention-only model has no MLP to size
	}
	if err := c.Validate(); err != nil {
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
	if err := checkMemory(e.stderr, be, []train.Config{c}, 1, false); err != nil {
		return err
	}
	var hooks []train.Hook
	var onProgress func(train.Progress)
	var bar *progress.Bar
	if !o.quiet {
		onProgress, hooks, bar = trainProgress(e.stderr, c.Steps, c.Loss)
	}
	var rec inspect.Recorder
	if o.recordEvery > 0 {
		hooks = append(hooks, rec.Hook(o.recordEvery))
	}
	m, res, err := train.Run(c, be, o.every, onProgress, hooks...)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	var extra []train.File
	if rec.History != nil {
		f, err := rec.History.File()
		if err != nil {
			return err
		}
		extra = append(extra, f)
	}
	if o.save != "" {
		if err := train.Save(o.save, m, &res, extra...); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "saved checkpoint to %s\n", o.save)
	}
	heads, att, err := inspect.Analyze(m, be, inspect.Options{Relation: o.rel})
	if err != nil {
		return err
	}
	if err := o.pics.write(e, runTitle(c), att, heads.Scores(), m.Task); err != nil {
		return err
	}
	report := trainReport{Config: configReport{Config: c, Backend: be.Name(), SIMD: simd.Path()}, Result: res, Heads: heads.Heads, ByKind: heads.ByKind, History: rec.History}
	if rec.History != nil {
		p := rec.History.Phase()
		report.Phase = &p
	}
	if res.UnseenAccuracy != nil {
		if report.UnseenHeads, err = inspect.UnseenScores(m, be); err != nil {
			return err
		}
	}
	return e.report(o.json, report, func(w io.Writer) {
		printTrainReport(w, m, report)
		fmt.Fprintln(w)
		printHeads(w, heads)
		if report.Phase != nil {
			fmt.Fprintln(w)
			printPhase(w, *report.Phase)
		}
	}, o.pics.paths()...)
}

type configReport struct {
	train.Config
	Backend string `json:"backend"`
	// SIMD is the CPU's vector path that ran (internal/simd.Path).
	SIMD string `json:"simd"`
}

type trainReport struct {
	Config configReport `json:"config"`
	train.Result
	Heads []inspect.Head `json:"heads"`
	// ByKind is accuracy by kind of example (agreement: with and without
	// an attractor), intact and with the relation's best head off.
	ByKind *inspect.ByKind `json:"by_kind,omitempty"`
	// UnseenHeads scores the heads on sequences of never-trained tokens.
	UnseenHeads []analysis.HeadScore `json:"unseen_heads,omitempty"`
	History     inspect.History      `json:"history,omitempty"`
	Phase       *analysis.Phase      `json:"phase_change,omitempty"`
}

func printTrainReport(w io.Writer, m *train.Model, r trainReport) {
	fmt.Fprintf(w, "task        %s: %s\n", m.Task.Name(), m.Task.Describe())
	mlp := fmt.Sprintf("d-ff %d", m.Shape.DFF)
	if m.Shape.NoMLP {
		mlp = "no MLP"
	}
	fmt.Fprintf(w, "model       %d layers, %d heads, d-model %d, %s, positions %v, causal %v, tied embeddings %v\n",
		m.Shape.Layers, m.Shape.Heads, m.Shape.DModel, mlp, m.Shape.Positions, m.Shape.Causal, m.Shape.TiedEmbeddings)
	fmt.Fprintf(w, "parameters  %d\n", r.Params)
	fmt.Fprintf(w, "training    %s\n", trainingLine(r.Config.Config))
	fmt.Fprintf(w, "accuracy    %.4f on %d held-out examples (chance %.4f)\n", r.Accuracy, train.HeldOutExamples, r.Chance)
	fmt.Fprintf(w, "loss        %.4f held-out on the answers; last training batch %s\n", r.Loss, lossPair(r.Config.Loss, r.TrainLoss, r.TrainAnswerLoss))
	if r.UnseenAccuracy != nil {
		fmt.Fprintf(w, "unseen      %.4f on %d held-out examples made only of tokens training never showed\n", *r.UnseenAccuracy, train.HeldOutExamples)
		fmt.Fprint(w, "            heads on those sequences:")
		for _, h := range r.UnseenHeads {
			fmt.Fprintf(w, " %s %s;", h.Name, h.Title())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "time        %.1f s for %d steps (%.2f ms/step, backend %s, simd %s)\n", r.TrainSeconds, r.Config.Steps, r.MsPerStep, r.Config.Backend, r.Config.SIMD)
}

// trainingLine says how c trains: the loss, the data and the optimiser.
func trainingLine(c train.Config) string {
	return fmt.Sprintf("%s; %d steps of batch %d, Adam lr %g", sweep.Objective(c), c.Steps, c.Batch, c.LR)
}

// lossPair is a training loss, with its answers' loss beside it when the
// loss counts more than the answers.
func lossPair(loss string, l, answers float64) string {
	if loss == tasks.Answers {
		return fmt.Sprintf("%.4f (answers)", l)
	}
	return fmt.Sprintf("%.4f (%s), %.4f on its answers", l, loss, answers)
}

// trainProgress is train's progress: a line every --progress-every steps
// with the loss and the held-out accuracy of a quick check, and on a
// terminal a bar redrawn about every hundredth of the run between them.
func trainProgress(stderr io.Writer, steps int, loss string) (func(train.Progress), []train.Hook, *progress.Bar) {
	bar := progress.New(stderr, "train", "steps", steps)
	var mu sync.Mutex
	note := ""
	report := func(p train.Progress) {
		mu.Lock()
		note = fmt.Sprintf("loss %.4f", p.Loss)
		if loss != tasks.Answers {
			note += fmt.Sprintf(" (answers %.4f)", p.AnswerLoss)
		}
		note += fmt.Sprintf(", held-out acc %.3f", p.Accuracy)
		mu.Unlock()
		bar.Update(p.Step, note)
	}
	var hooks []train.Hook
	if bar.OnTerminal() {
		// A hook copies the weights off the device first: a hundred small
		// copies a run, while every step already reads its loss back.
		hooks = append(hooks, train.Hook{Every: max(1, steps/100), Fn: func(step int, _ *train.Model, _ *train.Evaluator, _ float64) error {
			mu.Lock()
			n := note
			mu.Unlock()
			bar.Update(step, n)
			return nil
		}})
	}
	return report, hooks, bar
}

func printPhase(w io.Writer, p analysis.Phase) {
	together := "together"
	if !p.Together {
		together = "apart"
	}
	fmt.Fprintf(w, "phase change: induction score rises (20%% to 80%% of the way) over steps %d-%d (+%.2f), accuracy over steps %d-%d (+%.2f): %s\n",
		p.InductionFrom, p.InductionTo, p.InductionRise, p.AccuracyFrom, p.AccuracyTo, p.AccuracyRise, together)
}

// trainMany trains every seed of o.seedList with o.config, in groups on
// one device (laid out as sweep.Layout says, every seed at once), and
// prints one summary per seed.
func trainMany(e *env, o *trainOptions) error {
	c := o.config
	dev, closeDev, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	pairs := sweep.Pairs([]train.Config{c}, o.seedList)
	lay, err := layOut(e.stderr, dev, pairs, sweep.Ask{Group: o.group, Spread: true}, false)
	if err != nil {
		return err
	}
	groups := sweep.Groups(pairs, lay.Group)
	outs := make([][]*sweep.Outcome, len(groups))
	errs := make([]error, len(groups))
	start := time.Now()
	bar := progress.New(e.stderr, "train", "seed-steps", len(pairs)*c.Steps)
	var mu sync.Mutex                // guards done
	done := make([]int, len(groups)) // seed-steps each group has trained
	pl := platform(dev)
	// The groups share dev: on the host all at once, elsewhere in turn.
	workers.Each(len(groups), lay.Sharing(), func(i int) {
		g := groups[i]
		h := sweep.GroupHooks{}
		if !o.quiet {
			h.Every = o.every
			h.Progress = func(step, _ int, losses []float64) {
				mean := 0.0
				for _, l := range losses {
					mean += l / float64(len(losses))
				}
				mu.Lock()
				done[i] = step * len(losses)
				sum := 0
				for _, d := range done {
					sum += d
				}
				mu.Unlock()
				bar.Update(sum, fmt.Sprintf("seeds %d-%d at step %d, mean loss %.4f", g[0].Index+1, g[len(g)-1].Index+1, step, mean))
			}
		}
		outs[i], errs[i] = sweep.RunGroup(g, pl, sweep.Analysis{}, h)
	})
	bar.Finish()
	var recs []sweep.Record
	for i := range groups {
		if errs[i] != nil {
			return errs[i]
		}
		for _, out := range outs[i] {
			recs = append(recs, out.Record)
		}
	}
	if o.json {
		return writeJSON(e.stdout, recs)
	}
	for _, r := range recs {
		if r.Status != sweep.StatusOK {
			fmt.Fprintf(e.stdout, "seed %d  FAILED: %s\n", r.Config.Seed, r.Error)
			continue
		}
		var heads []string
		for _, h := range r.Heads {
			heads = append(heads, h.Name+" "+h.Title())
		}
		fmt.Fprintf(e.stdout, "seed %d  accuracy %.4f (chance %.4f)  loss %.4f  heads: %s\n",
			r.Config.Seed, r.Accuracy, r.Chance, r.Loss, strings.Join(heads, "; "))
	}
	fmt.Fprintf(e.stderr, "trained %d seeds in %.1f s on %s, groups of up to %d\n", len(recs), time.Since(start).Seconds(), dev.Name(), lay.Group)
	return nil
}

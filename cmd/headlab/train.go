package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/progress"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// trainFlags are the flags that define a training run; sweep reuses them.
type trainFlags struct {
	cfg         train.Config
	noPositions bool
	noCausal    bool
}

func (f *trainFlags) register(cmd *cobra.Command) {
	d := train.Defaults("induction")
	fs := cmd.Flags()
	fs.StringVar(&f.cfg.Task, "task", "induction", "task: "+strings.Join(tasks.Names(), ", "))
	_ = cmd.RegisterFlagCompletionFunc("task", cobra.FixedCompletions(tasks.Names(), cobra.ShellCompDirectiveNoFileComp))
	fs.Uint64Var(&f.cfg.Seed, "seed", d.Seed, "random seed for weights and data")
	fs.IntVar(&f.cfg.Steps, "steps", 0, "training steps (default: the task's plateau, induction 2500)")
	fs.IntVar(&f.cfg.Batch, "batch", d.Batch, "sequences per step")
	fs.Float64Var(&f.cfg.LR, "lr", d.LR, "Adam learning rate")
	fs.StringVar(&f.cfg.Loss, "loss", d.Loss, "training loss: next-token (every position: the answer where there is one, else the next token) or answers (the answer positions alone)")
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
	fs.IntVar(&f.cfg.TrainExamples, "train-examples", 0, "train on a finite set of this many sequences, drawn once and sampled with replacement (0: a fresh stream)")
	fs.Float64Var(&f.cfg.WeightDecay, "weight-decay", 0, "decoupled (AdamW) weight decay")
	fs.IntVar(&f.cfg.Layers, "layers", d.Layers, "transformer blocks")
	fs.IntVar(&f.cfg.Heads, "heads", d.Heads, "attention heads per block (must divide --d-model)")
	fs.IntVar(&f.cfg.DModel, "d-model", d.DModel, "residual stream width")
	fs.IntVar(&f.cfg.DFF, "d-ff", d.DFF, "feed-forward hidden width")
	fs.BoolVar(&f.noPositions, "no-positions", false, "switch positional embeddings off")
	fs.BoolVar(&f.noCausal, "no-causal", false, "switch the causal mask off")
	fs.BoolVar(&f.cfg.TiedEmbeddings, "tied-embeddings", false, "unembed with the token embedding transposed (no separate unembedding matrix)")
}

// config resolves the flags into a validated configuration.
func (f *trainFlags) config(cmd *cobra.Command) (train.Config, error) {
	c := f.cfg
	c.Positions, c.Causal = !f.noPositions, !f.noCausal
	if !cmd.Flags().Changed("steps") {
		c.Steps = train.Defaults(c.Task).Steps
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c, nil
}

func init() { commands = append(commands, trainCmd) }

func trainCmd(e *env) *cobra.Command {
	var (
		tf     trainFlags
		bf     backendFlag
		save   string
		asJSON bool
		quiet  bool
		every  int
		pics   pictureFlags

		recordEvery int
		seeds       string
		group       int
		rf          relationFlag
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a model on a task and report its accuracy and heads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := tf.config(cmd)
			if err != nil {
				return err
			}
			if every <= 0 {
				return usagef("--progress-every must be positive, got %d", every)
			}
			if err := pics.check(); err != nil {
				return err
			}
			if err := checkOutputs(append(pics.outputs(), checkpointOut("save", save))...); err != nil {
				return err
			}
			task, _ := tasks.New(c.Task)
			rel, err := rf.index(cmd, task)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("seeds") || cmd.Flags().Changed("group") {
				for _, one := range []string{"seed", "save", "record-every", "png", "figure", "arcs"} {
					if cmd.Flags().Changed(one) {
						return usagef("--seeds trains many models at once; --%s is for one model (--seed)", one)
					}
				}
				f := sweepFlags{bf: bf, seeds: seeds, group: group, groupGiven: cmd.Flags().Changed("group"),
					workers: 1, workersGiven: true}
				return trainMany(e, c, f, every, quiet, asJSON)
			}
			be, closeBackend, err := bf.open(e.stderr)
			if err != nil {
				return err
			}
			defer closeBackend()
			if err := checkMemory(e.stderr, be, []train.Config{c}, 1, false); err != nil {
				return err
			}
			if recordEvery < 0 {
				return usagef("--record-every must be >= 0, got %d", recordEvery)
			}
			var hooks []train.Hook
			var onProgress func(train.Progress)
			var bar *progress.Bar
			if !quiet {
				onProgress, hooks, bar = trainProgress(e.stderr, c.Steps, c.Loss)
			}
			var rec inspect.Recorder
			if recordEvery > 0 {
				hooks = append(hooks, rec.Hook(recordEvery))
			}
			m, res, err := train.Run(c, be, every, onProgress, hooks...)
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
			if save != "" {
				if err := train.Save(save, m, &res, extra...); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "saved checkpoint to %s\n", save)
			}
			heads, att, err := inspect.Analyze(m, be, inspect.Options{Relation: rel})
			if err != nil {
				return err
			}
			if err := pics.write(e.stdout, runTitle(c), att, heads.Scores()); err != nil {
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
			w := e.reportTo(pics.paths()...)
			if asJSON {
				return writeJSON(w, report)
			}
			printTrainReport(w, m, report)
			fmt.Fprintln(w)
			printHeads(w, heads)
			if report.Phase != nil {
				fmt.Fprintln(w)
				printPhase(w, *report.Phase)
			}
			return nil
		},
	}
	tf.register(cmd)
	bf.register(cmd)
	cmd.Flags().StringVar(&save, "save", "", "write a checkpoint (config.json + model.safetensors) to this directory")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress on stderr")
	cmd.Flags().IntVar(&every, "progress-every", 250, "steps between progress lines")
	cmd.Flags().StringVar(&seeds, "seeds", "", "train these seeds at once instead of --seed, e.g. 1-64: one summary line (or JSON object) per seed")
	cmd.Flags().IntVar(&group, "group", 0, "with --seeds: models trained in lockstep (default: 1 on cpu; on gl as many as fit, at most 1024)")
	cmd.Flags().IntVar(&recordEvery, "record-every", 0, "every K steps record loss, accuracy and every head's scores (JSON history, history.json in the checkpoint)")
	pics.register(cmd)
	rf.register(cmd)
	return cmd
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printTrainReport(w io.Writer, m *train.Model, r trainReport) {
	fmt.Fprintf(w, "task        %s: %s\n", m.Task.Name(), m.Task.Describe())
	fmt.Fprintf(w, "model       %d layers, %d heads, d-model %d, d-ff %d, positions %v, causal %v, tied embeddings %v\n",
		m.Shape.Layers, m.Shape.Heads, m.Shape.DModel, m.Shape.DFF, m.Shape.Positions, m.Shape.Causal, m.Shape.TiedEmbeddings)
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

// trainMany trains every seed of f.seeds with configuration c, in groups
// on one device, and prints one summary per seed.
func trainMany(e *env, c train.Config, f sweepFlags, every int, quiet, asJSON bool) error {
	if f.groupGiven && f.group < 1 {
		return usagef("--group must be at least 1, got %d", f.group)
	}
	list, err := sweep.ParseSeeds(f.seeds)
	if err != nil {
		return usageError{err}
	}
	dev, closeDev, err := f.bf.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	pairs := sweep.Pairs([]train.Config{c}, list)
	run, err := f.plan(e.stderr, dev, pairs)
	if err != nil {
		return err
	}
	// On the host (the CPU) a group computes on one goroutine: one group
	// per core, all at once. On GL one device runs the groups one after
	// another.
	par := 1
	if _, host := dev.(kernels.Host); host {
		par = min(runtime.NumCPU(), len(pairs))
		if !f.groupGiven {
			run.group = min((len(pairs)+par-1)/par, train.MaxGroup)
		}
		// Every seed trains at once.
		if err := checkMemory(e.stderr, dev, []train.Config{c}, len(pairs), false); err != nil {
			return err
		}
	}
	groups := sweep.Groups(pairs, run.group)
	outs := make([][]*sweep.Outcome, len(groups))
	errs := make([]error, len(groups))
	start := time.Now()
	bar := progress.New(e.stderr, "train", "seed-steps", len(pairs)*c.Steps)
	var mu sync.Mutex                // guards done
	done := make([]int, len(groups)) // seed-steps each group has trained
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(par, len(groups)) {
		wg.Go(func() {
			pl := platform(dev)
			for i := range next {
				g := groups[i]
				h := sweep.GroupHooks{}
				if !quiet {
					h.Every = every
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
			}
		})
	}
	for i := range groups {
		next <- i
	}
	close(next)
	wg.Wait()
	bar.Finish()
	var recs []sweep.Record
	for i := range groups {
		if errs[i] != nil {
			return errs[i]
		}
		for _, o := range outs[i] {
			recs = append(recs, o.Record)
		}
	}
	if asJSON {
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
	fmt.Fprintf(e.stderr, "trained %d seeds in %.1f s on %s, groups of up to %d\n", len(recs), time.Since(start).Seconds(), dev.Name(), run.group)
	return nil
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"headlab/bench"
	"headlab/findings"
	"headlab/inspect"
	"headlab/interop"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// parse runs headlab's command line as run does, with the command
// args[0] built by newCmd around a run that only keeps its options: the
// options a command line gives, and its refusals, with no work done. It
// returns the options (ok false when refused), the exit status and
// stderr; a refusal must be one line, and nothing may reach stdout.
func parse[O any](t *testing.T, newCmd func(*env, func(O) error) *cobra.Command, line ...string) (opts O, ok bool, code int, stderr string) {
	t.Helper()
	var out, errs strings.Builder
	e := &env{stdout: &out, stderr: &errs}
	root := rootCmd(e)
	for _, c := range root.Commands() {
		if c.Name() == line[0] {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newCmd(e, func(o O) error { opts, ok = o, true; return nil }))
	code = execute(root, line, &errs)
	if out.Len() > 0 {
		t.Errorf("%v: wrote %q to stdout", line, out.String())
	}
	if !ok && (code != exitBadInput || strings.Count(errs.String(), "\n") != 1 || !strings.HasPrefix(errs.String(), "headlab: ")) {
		t.Errorf("%v: refused with exit %d and %q, want exit 2 and one line", line, code, errs.String())
	}
	return opts, ok, code, errs.String()
}

// refused checks that line is refused by its options alone with a line
// that holds want.
func refused[O any](t *testing.T, newCmd func(*env, func(O) error) *cobra.Command, want string, line ...string) {
	t.Helper()
	if _, ok, _, errs := parse(t, newCmd, line...); ok || !strings.Contains(errs, want) {
		t.Errorf("%v: ran %v, stderr %q; want refused with %q", line, ok, errs, want)
	}
}

// accepted returns the options of line, failing the test when it is
// refused or writes anything.
func accepted[O any](t *testing.T, newCmd func(*env, func(O) error) *cobra.Command, line ...string) O {
	t.Helper()
	o, ok, code, errs := parse(t, newCmd, line...)
	if !ok || code != 0 || errs != "" {
		t.Fatalf("%v: exit %d, stderr %q", line, code, errs)
	}
	return o
}

func TestTrainOptions(t *testing.T) {
	dir := t.TempDir()
	o := accepted(t, newTrainCmd, "train", "--task", "majority", "--steps", "10", "--save", filepath.Join(dir, "ckpt"), "--record-every", "5")
	if o.many || o.config.Task != "majority" || o.config.Steps != 10 || !o.config.Positions || !o.config.Causal || o.recordEvery != 5 {
		t.Errorf("one model: %+v", o)
	}
	o = accepted(t, newTrainCmd, "train", "--no-positions")
	if want := train.Defaults("induction").Steps; o.config.Steps != want || o.config.Positions {
		t.Errorf("defaults: steps %d (want the plateau, %d), positions %v", o.config.Steps, want, o.config.Positions)
	}
	o = accepted(t, newTrainCmd, "train", "--task", "agreement", "--relation", "adjective->noun")
	if o.rel != 1 {
		t.Errorf("--relation adjective->noun is relation %d", o.rel)
	}
	o = accepted(t, newTrainCmd, "train", "--seeds", "3-5", "--group", "2")
	if !o.many || !slices.Equal(o.seedList, []uint64{3, 4, 5}) || o.group != 2 {
		t.Errorf("--seeds 3-5 --group 2: %+v", o)
	}
	refused(t, newTrainCmd, "--seeds trains many models at once; --save is for one model (--seed)", "train", "--seeds", "1-4", "--save", filepath.Join(dir, "x"))
	refused(t, newTrainCmd, "--arcs is for one model", "train", "--seeds", "1-4", "--arcs", "a.png")
	refused(t, newTrainCmd, "--group must be at least 1, got 0", "train", "--seeds", "1-4", "--group", "0")
	refused(t, newTrainCmd, "seeds", "train", "--group", "2") // no seeds to group
	// Refused before the device is opened: GL cannot be here.
	t.Setenv("HEADLAB_GL_CONTEXT", "no-such-context")
	refused(t, newTrainCmd, "--record-every must be >= 0, got -1", "train", "--record-every", "-1", "--backend", "gl")
	refused(t, newTrainCmd, "--progress-every must be positive", "train", "--progress-every", "0")
	refused(t, newTrainCmd, "--relation", "train", "--relation", "verb->subject")
}

func TestSweepOptions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	o := accepted(t, newSweepCmd, "sweep", "--task", "majority", "--seeds", "1-3", "--grid", "layers=1,2", "--db", db)
	if len(o.db.Pairs) != 6 || o.db.Ask != (sweep.Ask{}) || o.shardNote != "" || !o.db.Analysis.Measure.Has(sweep.MeasureCircuit) || o.db.Analysis.Ablation != inspect.AblateZero {
		t.Errorf("defaults: %d pairs, ask %+v, shard %q, analysis %+v", len(o.db.Pairs), o.db.Ask, o.shardNote, o.db.Analysis)
	}
	o = accepted(t, newSweepCmd, "sweep", "--seeds", "1-4", "--db", db, "--workers", "2", "--group", "3", "--measure", "none", "--ablation", "mean")
	if o.db.Ask != (sweep.Ask{Workers: 2, Group: 3}) || o.db.Analysis.Probed() != true || o.db.Analysis.Measure.Has(sweep.MeasureCircuit) {
		t.Errorf("asked: ask %+v, analysis %+v", o.db.Ask, o.db.Analysis)
	}
	// The shard's line is said when the sweep runs, not before a refusal.
	o = accepted(t, newSweepCmd, "sweep", "--seeds", "1-4", "--db", db, "--shard", "1/2")
	if len(o.db.Pairs) != 2 || o.shardNote != "sweep: shard 1/2: 2 of 4 pairs" {
		t.Errorf("--shard 1/2: %d pairs, note %q", len(o.db.Pairs), o.shardNote)
	}
	refused(t, newSweepCmd, "--db FILE is required", "sweep", "--shard", "1/2")
	refused(t, newSweepCmd, "sweep takes --seeds", "sweep", "--seed", "2", "--db", db)
	refused(t, newSweepCmd, "--workers must be at least 1", "sweep", "--workers", "0", "--db", db)
	refused(t, newSweepCmd, "--group must be at least 1", "sweep", "--group", "0", "--db", db)
	refused(t, newSweepCmd, "unknown --backend", "sweep", "--backend", "tpu", "--db", db)
	refused(t, newSweepCmd, "is a directory", "sweep", "--db", t.TempDir())
}

func TestReproduceOptions(t *testing.T) {
	out := t.TempDir()
	o := accepted(t, newReproduceCmd, "reproduce", "--quick", "--out", out)
	if o.Seeds != 4 || o.Small != 2 || o.Scale != 0.02 || o.ask != (sweep.Ask{}) || len(o.plan.Pairs()) == 0 {
		t.Errorf("--quick: %+v", o)
	}
	o = accepted(t, newReproduceCmd, "reproduce", "--out", out, "--workers", "3", "--loss", tasks.Answers)
	if o.ask.Workers != 3 || o.Seeds != 32 || o.Loss != tasks.Answers {
		t.Errorf("--workers 3: %+v", o)
	}
	if len(o.plan.AtlasSeeds) != findings.DefaultAtlasSeeds || o.plan.AtlasSeeds[127] != 128 {
		t.Errorf("the default atlas: seeds %v", o.plan.AtlasSeeds)
	}
	if o = accepted(t, newReproduceCmd, "reproduce", "--out", out, "--atlas-seeds", "0"); len(o.plan.AtlasSeeds) != 0 || len(o.plan.Signed()) != 0 {
		t.Errorf("--atlas-seeds 0: %v", o.plan.AtlasSeeds)
	}
	refused(t, newReproduceCmd, "--quick sets --seeds", "reproduce", "--quick", "--seeds", "3", "--out", out)
	refused(t, newReproduceCmd, "--quick sets --atlas-seeds", "reproduce", "--quick", "--atlas-seeds", "3", "--out", out)
	refused(t, newReproduceCmd, "--atlas-seeds must be at least 0", "reproduce", "--atlas-seeds", "-1", "--out", out)
	refused(t, newReproduceCmd, "--steps-scale must be in (0, 10]", "reproduce", "--steps-scale", "11", "--out", out)
	refused(t, newReproduceCmd, "unknown --backend", "reproduce", "--backend", "tpu", "--out", out)
}

// TestBenchCommandsRefuseEachOthersFlags: bench and bench vs-pytorch each
// refuse, in one line, a flag only the other reads, and the old
// --vs-pytorch names the command that replaced it.
func TestBenchCommandsRefuseEachOthersFlags(t *testing.T) {
	o := accepted(t, newBenchCmd, "bench", "--parts", "groups,model", "--groups", "1,4", "--backends", "cpu", "--steps", "3", "--json")
	if !slices.Equal(o.own.Backends, []string{"cpu"}) || !slices.Equal(o.own.Groups, []int{1, 4}) ||
		!o.own.Parts["groups"] || !o.own.Parts["model"] || o.own.Parts["kernels"] || o.own.Timing.Steps != 3 || !o.json {
		t.Errorf("bench: %+v", o.own)
	}
	vs := accepted(t, newBenchVsCmd, "vs-pytorch", "--rounds", "2", "--python", "/nonexistent", "--callgrind=false", "--steps", "3", "--loss", tasks.Answers)
	if vs.rounds != 2 || vs.python != "/nonexistent" || vs.callgrind || vs.steps != 3 || vs.loss != tasks.Answers {
		t.Errorf("vs-pytorch: %+v", vs)
	}
	for _, f := range [][]string{{"--backends", "cpu"}, {"--parts", "groups"}, {"--groups", "4"}, {"--batch", "32"}, {"--step-batches", "32"},
		{"--budget", "1s"}, {"--dispatch-group", "4"}, {"--step-time", "1s"}, {"--max-step", "1s"}, {"--vs-pytorch"}} {
		want := f[0] + " is for headlab bench\n"
		if f[0] == "--vs-pytorch" {
			want = "unknown flag: --vs-pytorch"
		}
		refused(t, newBenchCmd, want, append([]string{"bench", "vs-pytorch"}, f...)...)
	}
	for _, f := range [][]string{{"--python", "python3"}, {"--rounds", "3"}, {"--callgrind=false"}, {"--window", "1s"}, {"--workers", "2"}, {"--rss-steps", "5"}} {
		refused(t, newBenchCmd, f[0][:strings.IndexAny(f[0]+"=", "=")]+" is for headlab bench vs-pytorch", append([]string{"bench"}, f...)...)
	}
	refused(t, newBenchCmd, "headlab bench vs-pytorch", "bench", "--vs-pytorch")
	refused(t, newBenchVsCmd, "--rounds, --window and --workers must be positive", "vs-pytorch", "--rounds", "0")
	refused(t, newBenchVsCmd, "--steps and --rss-steps not negative", "vs-pytorch", "--steps", "-1")
	refused(t, newBenchVsCmd, "unknown --loss", "vs-pytorch", "--loss", "all")
	// --parts' help names every part (it once left the model out).
	usage := newBenchCmd(&env{}, nil).Flags().Lookup("parts").Usage
	for _, p := range bench.Parts {
		if !strings.Contains(usage, p) {
			t.Errorf("--parts' help %q does not name %s", usage, p)
		}
	}
}

func TestViewOptions(t *testing.T) {
	o := accepted(t, newViewCmd, "view", "--task", "majority", "--after-steps", "5")
	if o.window.Config.Task != "majority" || o.window.Steps != 5 || o.window.Model != nil {
		t.Errorf("training: %+v", o.window)
	}
	o = accepted(t, newViewCmd, "view", "--run", "ckpt")
	if o.run.dir != "ckpt" || o.window.Steps != 0 {
		t.Errorf("--run: %+v", o)
	}
	// Every flag of a training run is refused beside --run, these four
	// too (the list once missed them, and view ignored them).
	for _, f := range []string{"--loss=answers", "--train-examples=64", "--weight-decay=0.1", "--tied-embeddings", "--task=copy"} {
		name := strings.SplitN(f, "=", 2)[0]
		refused(t, newViewCmd, name+" cannot be used with --run", "view", "--run", "ckpt", f)
	}
	refused(t, newViewCmd, "--after-steps cannot be used with --run", "view", "--run", "ckpt", "--after-steps", "3")
}

// TestCheckpointCommandsOptions: the commands that read a checkpoint
// check their flags before loading it (the checkpoint here does not
// exist: a command that loaded it would be refused for that).
func TestCheckpointCommandsOptions(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "no-checkpoint")
	png := filepath.Join(dir, "f.svg")

	a := accepted(t, newAttributeCmd, "attribute", "--run", run, "--examples", "7", "--figure", png)
	if a.run.dir != run || a.examples != 7 || a.out.png != png {
		t.Errorf("attribute: %+v", a)
	}
	refused(t, newAttributeCmd, "--run DIR is required", "attribute")
	refused(t, newAttributeCmd, "--examples 0: want 1 to 1000", "attribute", "--run", run, "--examples", "0")

	p := accepted(t, newPatchCmd, "patch", "--run", run, "--layer", "1")
	if !p.only.layerAsked || p.only.layer != 1 || p.only.positionAsked || p.examples != train.EvalChunk {
		t.Errorf("patch: %+v", p)
	}
	if p = accepted(t, newPatchCmd, "patch", "--run", run, "--position", "-1"); !p.only.positionAsked {
		t.Error("patch --position -1 is not noted as given, so it would mean every position")
	}
	refused(t, newPatchCmd, "--examples 1: want 2 to 1000", "patch", "--run", run, "--examples", "1")

	pr := accepted(t, newPruneCmd, "prune", "--run", run, "--order", "greedy,random", "--ablation", "mean")
	if !slices.Equal(pr.orderList, []string{inspect.OrderGreedy, inspect.OrderRandom}) || pr.method != inspect.AblateMean {
		t.Errorf("prune: %+v", pr)
	}
	refused(t, newPruneCmd, "resample ablation needs at least", "prune", "--run", run, "--ablation", "resample", "--examples", "1")
	refused(t, newPruneCmd, "--order", "prune", "--run", run, "--order", "sideways")

	d := accepted(t, newDumpCmd, "dump", "--run", run, "--out", filepath.Join(dir, "d.npz"), "--ablate", "L0H0")
	if d.outFormat != interop.NPZ || d.ablate != "L0H0" || d.method != inspect.AblateZero {
		t.Errorf("dump: %+v", d)
	}
	refused(t, newDumpCmd, "--run DIR and --out FILE are required", "dump", "--run", run)
	refused(t, newDumpCmd, "unknown --format", "dump", "--run", run, "--out", "x.json", "--format", "csv")

	x := accepted(t, newExportCmd, "export", "--run", run, "--out", filepath.Join(dir, "e.safetensors"))
	if x.layout != interop.TransformerLens || x.outFormat != interop.Safetensors || !x.beside {
		t.Errorf("export: %+v", x)
	}
	if x = accepted(t, newExportCmd, "export", "--run", run, "--out", "-", "--format", "hf"); x.beside {
		t.Error("export to stdout writes a config beside it")
	}
	refused(t, newExportCmd, "--format", "export", "--run", run, "--out", "e.npz", "--format", "keras")

	h := accepted(t, newHeadsCmd, "heads", "--run", run, "--relation", "verb->subject", "--ablation", "resample", "--composition")
	if !h.relation.asked || h.method != inspect.AblateResample || !h.composition {
		t.Errorf("heads: %+v", h)
	}
	if h = accepted(t, newHeadsCmd, "heads", "--run", run); h.relation.asked {
		t.Error("heads without --relation notes it as given")
	}
	refused(t, newHeadsCmd, "give a file ending in .html", "heads", "--run", run, "--html", "page.txt")

	c := accepted(t, newCurvesCmd, "curves", "--run", run, "--png", png, "--json")
	if c.out.png != png || !c.out.json {
		t.Errorf("curves: %+v", c)
	}
	refused(t, newCurvesCmd, "x.gif", "curves", "--run", run, "--png", "x.gif")
}

func TestFileCommandsOptions(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.db")
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := accepted(t, newMergeCmd, "merge", "--db", filepath.Join(dir, "out.db"), in, in)
	if !slices.Equal(m.ins, []string{in, in}) {
		t.Errorf("merge: %+v", m)
	}
	refused(t, newMergeCmd, "name at least one database", "merge", "--db", filepath.Join(dir, "out.db"))
	refused(t, newMergeCmd, "does not exist", "merge", "--db", filepath.Join(dir, "out.db"), filepath.Join(dir, "missing.db"))

	r := accepted(t, newReportCmd, "report", "--db", in, "--figure-format", "svg", "--figure", filepath.Join(dir, "hist"))
	if r.ext != ".svg" || r.pngDir != filepath.Join(dir, "hist") {
		t.Errorf("report: %+v", r)
	}
	refused(t, newReportCmd, "--figure-format \"gif\"", "report", "--db", in, "--figure-format", "gif")

	s := accepted(t, newScoreCmd, "score", "--attention", filepath.Join(dir, "missing.json"), "--arcs", filepath.Join(dir, "a.pdf"))
	if s.pics.arcs != filepath.Join(dir, "a.pdf") {
		t.Errorf("score: %+v", s)
	}
	refused(t, newScoreCmd, "--attention FILE is required", "score")
}

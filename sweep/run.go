package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/simd"
	"headlab/internal/version"
	"headlab/internal/workers"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// FormsCircuit reports whether the run formed the induction circuit, by
// analysis.FormsCircuit on its heads and joint ablations (by its
// AblationMethod).
func (r *Record) FormsCircuit() bool {
	return analysis.FormsCircuit(scoresOf(r.Heads), r.Ablation.Intact, r.Ablation.Induction.Accuracy, r.Ablation.PreviousToken.Accuracy)
}

// Outcome is everything a run learned: the record, and for a run that
// finished training the model, its head report and the attention scored.
type Outcome struct {
	Record    Record
	Model     *train.Model
	Report    *inspect.Report
	Attention *analysis.Attention
}

// Platform says where runs compute, for the records.
type Platform struct {
	Device   kernels.Device
	Renderer string // the GL renderer, "" on the CPU
	SIMD     string // the host's vector path
}

// Platforms is an Options.NewPlatform: the first worker gets first (the
// device a layout was made on), each later one a device of its own from
// open.
func Platforms(first kernels.Device, open func() (kernels.Device, error)) func() (Platform, error) {
	var mu sync.Mutex
	return func() (Platform, error) {
		mu.Lock()
		dev := first
		first = nil
		mu.Unlock()
		if dev == nil {
			var err error
			if dev, err = open(); err != nil {
				return Platform{}, err
			}
		}
		return PlatformOf(dev), nil
	}
}

// PlatformOf describes dev, and this host's vector path, for the records.
func PlatformOf(dev kernels.Device) Platform {
	p := Platform{Device: dev, SIMD: simd.Path()}
	if dr, ok := dev.(kernels.Driver); ok {
		p.Renderer = dr.Renderer()
	}
	return p
}

// RunOne is RunGroup for one pair.
func RunOne(p Pair, pl Platform, a Analysis, abort <-chan struct{}) (*Outcome, error) {
	outs, err := RunGroup([]Pair{p}, pl, a, GroupHooks{Abort: abort})
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// GroupHooks are what a caller of RunGroup may watch and stop it by.
type GroupHooks struct {
	// Abort, when closed, abandons the group; it may be nil.
	Abort <-chan struct{}
	// Progress, if set, is called every Every steps and after the last
	// with every model's last batch loss: the only read-back during
	// training.
	Every    int
	Progress func(step, steps int, losses []float64)
}

// RunGroup trains the pairs as one train.Group on pl.Device (their
// configurations may differ in seed, lr and weight decay only) and analyses every
// model as a says: held-out accuracy and loss, every head's label and
// scores, each head switched off alone, and the induction and
// previous-token heads switched off together (by a's ablation method,
// with each head alone by zero ablation too), and a's measurements, all
// as passes over every model at once. A run
// that fails (a diverged loss, anything training or analysis returns) is
// a record with status failed and the reason, not an error; the others
// of its group carry on. The error is train.ErrAborted when abort closes
// before the group ends.
//
// A model's numbers do not depend on its group: on the CPU they are those
// `headlab train` prints for the same flags, bit for bit.
func RunGroup(ps []Pair, pl Platform, a Analysis, hooks GroupHooks) ([]*Outcome, error) {
	start := time.Now()
	outs := make(outcomes, len(ps))
	cs := make([]train.Config, len(ps))
	for i, p := range ps {
		outs[i] = &Outcome{Record: Record{Key: p.Key, Config: p.Config, Status: StatusOK,
			Backend: pl.Device.Name(), Renderer: pl.Renderer, SIMD: pl.SIMD, Group: len(ps),
			Version: version.Module(), Revision: version.Revision()}}
		cs[i] = p.Config
	}
	g, err := train.NewGroup(cs, pl.Device)
	if err != nil {
		return outs.failAll(start, err)
	}
	defer g.Close()
	var watch []train.GroupHook
	if hooks.Progress != nil {
		watch = append(watch, train.GroupHook{Every: hooks.Every, Fn: func(step int) error {
			l, err := g.Losses()
			if err != nil {
				return err
			}
			hooks.Progress(step, cs[0].Steps, l)
			return nil
		}})
	}
	diverged, err := g.Train(hooks.Abort, watch...)
	if errors.Is(err, train.ErrAborted) {
		return nil, err
	}
	if err != nil {
		return outs.failAll(start, err)
	}
	if err := outs.trained(g, diverged, start); err != nil {
		return outs.failAll(start, err)
	}
	ev, err := g.Evaluator()
	if err != nil {
		return outs.failAll(start, err)
	}
	defer ev.Close()
	gm, err := measureGroup(ev, g, a)
	if err != nil {
		return outs.failAll(start, err)
	}
	for s, o := range outs {
		if o.Record.Status == StatusOK {
			gm.fill(o, s, g.Models[s], pl, a)
		}
	}
	return outs.finish(start), nil
}

// outcomes are a group's outcomes, in its pairs' order: RunGroup's steps
// write them in place.
type outcomes []*Outcome

// finish stamps every record with the group's time, now.
func (outs outcomes) finish(start time.Time) []*Outcome {
	for _, o := range outs {
		o.Record.Seconds = time.Since(start).Seconds()
		o.Record.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	}
	return outs
}

// failAll fails every run of the group with err: a group-wide failure
// is each run's record, not RunGroup's error.
func (outs outcomes) failAll(start time.Time, err error) ([]*Outcome, error) {
	for _, o := range outs {
		o.Record.Status, o.Record.Error = StatusFailed, err.Error()
	}
	return outs.finish(start), nil
}

// trained records the group's training: its last losses, its time, and
// each model, but for those that diverged, which fail.
func (outs outcomes) trained(g *train.Group, diverged []error, start time.Time) error {
	losses, err := g.Losses()
	if err != nil {
		return err
	}
	answerLosses, err := g.AnswerLosses()
	if err != nil {
		return err
	}
	trained := time.Since(start).Seconds()
	for i, o := range outs {
		o.Record.TrainLoss, o.Record.TrainAnswerLoss, o.Record.TrainSeconds = losses[i], answerLosses[i], trained
		o.Model = g.Models[i]
		if diverged[i] != nil {
			o.Model = nil
			o.Record.Status, o.Record.Error = StatusFailed, diverged[i].Error()
		}
	}
	return nil
}

// groupMeasures are the analysis passes of a group, every model at
// once; fill hands each model its part.
type groupMeasures struct {
	method    inspect.Ablation
	reps      []*inspect.Report
	atts      []*analysis.Attention
	circ      []inspect.ModelCircuits      // nil unless measured
	attr      []*inspect.AttributionReport // nil unless measured
	ind, prev []Joint
	first     []RuleAblation
}

// measureGroup runs a's analysis passes over every model of ev (g's).
func measureGroup(ev *train.Evaluator, g *train.Group, a Analysis) (*groupMeasures, error) {
	gm := &groupMeasures{method: a.method()}
	var err error
	if gm.reps, gm.atts, err = inspect.AnalyzeAll(ev, inspect.Options{Methods: a.methods()}); err != nil {
		return nil, err
	}
	if a.Measure.Has(MeasureCircuit) {
		if gm.circ, err = inspect.Circuits(ev); err != nil {
			return nil, err
		}
	}
	if a.Measure.Has(MeasureAttribution) {
		if gm.attr, err = inspect.Attribute(ev, train.HeldOutExamples, 0); err != nil {
			return nil, err
		}
	}
	held := ev.HeldOutAll()
	ab, err := inspect.NewAblator(ev, held, gm.method)
	if err != nil {
		return nil, err
	}
	heads := make([][]inspect.Head, len(gm.reps))
	for s, rep := range gm.reps {
		heads[s] = rep.Heads
	}
	if gm.ind, err = JointOff(ab, held, heads, analysis.LabelInduction); err != nil {
		return nil, err
	}
	if gm.prev, err = JointOff(ab, held, heads, analysis.LabelPreviousToken); err != nil {
		return nil, err
	}
	if gm.first, err = firstRuleOff(ab, held, heads, g.Models[0].Task.SeqLen(), gm.ind, gm.prev); err != nil {
		return nil, err
	}
	return gm, nil
}

// fill writes model s's measurements (m, trained to the end) into its
// outcome o, measuring its circuit's edges when a signs it.
func (gm *groupMeasures) fill(o *Outcome, s int, m *train.Model, pl Platform, a Analysis) {
	r := &o.Record
	if gm.circ != nil && gm.circ[s].Err != nil {
		// A measurement that fails fails its run, not the group.
		r.Status, r.Error, o.Model = StatusFailed, "circuit scores: "+gm.circ[s].Err.Error(), nil
		return
	}
	rep := gm.reps[s]
	r.Accuracy, r.Loss = rep.Accuracy, rep.Loss
	r.Params, r.Chance = m.Weights.Count(), m.Task.Chance()
	o.Report, o.Attention = rep, gm.atts[s]
	r.Heads, r.AblationMethod = rep.Heads, gm.method
	if gm.circ != nil {
		for i := range r.Heads {
			r.Heads[i].Circuit = &gm.circ[s].Heads[r.Heads[i].Layer*m.Shape.Heads+r.Heads[i].Head]
		}
		r.ICL = gm.circ[s].ICL
	}
	if gm.attr != nil {
		lens := gm.attr[s].LensLayer()
		r.LensLayer = &lens
		for i := range r.Heads {
			if v, ok := gm.attr[s].HeadLogit(r.Heads[i].Layer, r.Heads[i].Head); ok {
				r.Heads[i].DirectLogit = &v
			}
		}
	}
	r.Ablation.Intact = r.Accuracy
	for i, h := range r.Heads {
		r.Ablation.Single = append(r.Ablation.Single, Single{Head: h.Name, Label: h.Label, Accuracy: r.OffAlone(&r.Heads[i])})
	}
	r.Ablation.Induction, r.Ablation.PreviousToken = gm.ind[s], gm.prev[s]
	r.Ablation.LabelRule = analysis.CurrentRule
	r.Circuit = r.FormsCircuit()
	f := gm.first[s]
	fh := Relabelled(r.Heads, analysis.FirstRule, m.Task.SeqLen())
	f.Circuit = analysis.FormsCircuit(scoresOf(fh), r.Accuracy, f.Induction.Accuracy, f.PreviousToken.Accuracy)
	r.Ablation.FirstRule = &f
	if a.Signs(r.Key) {
		var err error
		if r.EdgeCircuit, err = measureEdgeCircuit(m, pl.Device, r.Heads); err != nil {
			r.Status, r.Error, o.Model, r.EdgeCircuit = StatusFailed, "circuit edges: "+err.Error(), nil, nil
		}
	}
}

// firstRuleOff is every model's circuit ablations under
// analysis.FirstRule's labels (the verdict left to the caller): where a
// label's heads are the same under both rules, the ablation measured
// for the current labels (ind, prev) is reused, so only models whose
// sets differ cost a pass.
func firstRuleOff(ab *inspect.Ablator, held []*tasks.Batch, heads [][]inspect.Head, T int, ind, prev []Joint) ([]RuleAblation, error) {
	out := make([]RuleAblation, len(heads))
	for _, half := range []struct {
		label string
		cur   []Joint
		set   func(*RuleAblation, Joint)
	}{
		{analysis.LabelInduction, ind, func(r *RuleAblation, j Joint) { r.Induction = j }},
		{analysis.LabelPreviousToken, prev, func(r *RuleAblation, j Joint) { r.PreviousToken = j }},
	} {
		// A model whose set is the same joins the pass with no head of
		// the label (so nothing switched off), and keeps its own.
		fhs, same := make([][]inspect.Head, len(heads)), make([]bool, len(heads))
		for s, hs := range heads {
			fhs[s] = Relabelled(hs, analysis.FirstRule, T)
			if same[s] = slices.Equal(labelSet(fhs[s], half.label), half.cur[s].Heads); same[s] {
				for i := range fhs[s] {
					fhs[s][i].Label = ""
				}
			}
		}
		js, err := JointOff(ab, held, fhs, half.label)
		if err != nil {
			return nil, err
		}
		for s := range heads {
			if same[s] {
				half.set(&out[s], half.cur[s])
			} else {
				half.set(&out[s], js[s])
			}
		}
	}
	return out, nil
}

// scoresOf is the HeadScores of heads.
func scoresOf(heads []inspect.Head) []analysis.HeadScore {
	out := make([]analysis.HeadScore, len(heads))
	for i, h := range heads {
		out[i] = h.HeadScore
	}
	return out
}

// JointOff is held-out accuracy (on held, the batches ab was made with)
// of every model with all of its heads labelled label switched off
// together by ab's method, all models in one pass: heads[s] are model
// s's heads, every one of them. A model with no such head has a nil
// accuracy; when no model has one, no pass runs.
func JointOff(ab *inspect.Ablator, held []*tasks.Batch, heads [][]inspect.Head, label string) ([]Joint, error) {
	js := make([]Joint, len(heads))
	offs := make([][][]bool, len(heads))
	some := false
	for s, hs := range heads {
		js[s].Heads = []string{}
		L, H := 0, 0
		for _, h := range hs {
			L, H = max(L, h.Layer+1), max(H, h.Head+1)
		}
		off := analysis.NewMask(L, H, nil)
		for _, h := range hs {
			if h.Label == label {
				off[h.Layer][h.Head] = true
				js[s].Heads = append(js[s].Heads, h.Name)
				some = true
			}
		}
		offs[s] = off
	}
	if !some {
		return js, nil
	}
	snaps, err := ab.Snapshot(held, train.SnapshotOptions{Off: offs})
	if err != nil {
		return nil, err
	}
	for s := range js {
		if len(js[s].Heads) > 0 {
			js[s].Accuracy = &snaps[s].Accuracy
		}
	}
	return js, nil
}

// Options configure Run.
type Options struct {
	// Workers is the number of groups in flight at once (at least 1).
	// Each group computes on one goroutine: on the CPU, the CPU count is a
	// good choice; on a GPU, one.
	Workers int
	// Group is the most pairs trained together as one train.Group (at
	// least 1); pairs that differ in more than seed, lr and weight
	// decay never share one.
	Group int
	// NewPlatform makes the device of one worker; it is called once per
	// worker.
	NewPlatform func() (Platform, error)
	// Abort, when closed, abandons the runs in flight (their pairs stay
	// unfinished). Cancelling Run's context only stops new runs starting.
	Abort <-chan struct{}
	// Progress, if set, is called after every stored run, once at the
	// start, and when pairs are found stored by another process; one call
	// at a time.
	Progress func(Progress)
	// Note, if set, is told once what the store said on reading its runs
	// (Store.Note: runs relabelled on read, those trained again).
	Note func(string)
	// Keep, if set, is called in the worker with each run that trained to
	// the end, before its record is stored (reproduce draws pictures of
	// models this way).
	Keep func(*Outcome)
	// RetryFailed reruns pairs recorded as failed instead of skipping them.
	RetryFailed bool
	// Analysis is what every run measures after training.
	Analysis Analysis
	// Lease is how long a claim on a pair lasts without renewal
	// (DefaultLease when 0).
	Lease time.Duration
}

// Progress is the state of a sweep after a run lands.
type Progress struct {
	// Total pairs in this shard; Skipped were in the database already
	// or were stored by another process; Done and Failed finished in this
	// invocation (Failed is counted in Done too); Running are in flight;
	// Elsewhere are being trained by another process.
	Total, Skipped, Done, Failed, Running, Elsewhere int
	Elapsed                                          time.Duration
	// ETA is the estimated time to finish, 0 while unknown.
	ETA time.Duration
	// Last is the record that just landed (nil at the start).
	Last *Record
}

// Summary is how a sweep ended.
type Summary struct {
	Total, Skipped, Done, Failed int
	// Interrupted is true when the context was cancelled before every
	// pair ran; Abandoned counts runs in flight that Abort stopped.
	Interrupted bool
	Abandoned   int
}

// Run trains every pair of pairs that st does not hold yet and stores
// each record the moment its run ends, through one writer goroutine; a
// crash at any moment loses at most the runs in flight. Cancelling ctx
// stops new runs from starting; the runs in flight finish and are stored
// (or are abandoned, if opt.Abort closes). The error is a storage failure,
// never a failed run.
//
// Several processes may run the same pairs into one database at once:
// each claims a group just before training it (see claim), skips pairs
// another has claimed or stored, and at the end waits for the pairs
// others are still training, taking over any whose claim lapses.
func Run(ctx context.Context, st *Store, pairs []Pair, opt Options) (Summary, error) {
	sum := Summary{Total: len(pairs)}
	todo, err := pending(st, pairs, opt, &sum)
	if err != nil {
		return sum, err
	}
	groups := Groups(todo, opt.Group)

	sr := &sweepRun{opt: opt, start: time.Now(), sum: sum, prog: Progress{Total: sum.Total, Skipped: sum.Skipped}}
	lease := cmp.Or(opt.Lease, DefaultLease)
	owner := newOwner()
	defer keepClaims(st, owner, lease)()
	f := &feeder{st: st, owner: owner, lease: lease, size: opt.Group, groups: groups, busy: map[RunID]bool{}, seen: sr.seen}

	// A storage or device error stops the feeder too.
	ctx, sr.cancel = context.WithCancel(ctx)
	defer sr.cancel()
	results := make(chan []*Outcome)
	// Each worker opens its own device and trains the groups the feeder
	// hands it; an error of either stops the feeder for every worker.
	next := func() ([]Pair, bool) {
		ps, err := f.next(ctx)
		if err != nil {
			sr.fail(err)
		}
		return ps, ps != nil
	}
	go func() {
		workers.Run(min(opt.Workers, max(1, len(groups))), next, func(jobs iter.Seq[[]Pair]) { sr.work(jobs, results) })
		close(results)
	}()

	sr.mu.Lock()
	sr.report(nil)
	sr.mu.Unlock()
	werr := sr.land(st, owner, results)
	sum = sr.sum
	sum.Skipped, sum.Done, sum.Failed = sr.prog.Skipped, sr.prog.Done, sr.prog.Failed
	sum.Interrupted = sum.Skipped+sum.Done < sum.Total
	if werr == nil {
		werr = sr.derr
	}
	return sum, werr
}

// pending is the pairs of pairs that Run trains: those st does not hold,
// those whose stored run is stale (relabelled with changed circuit heads,
// or unsigned where opt.Analysis signs), and failed ones when
// opt.RetryFailed (their rows deleted first). It counts the rest in
// sum.Skipped.
func pending(st *Store, pairs []Pair, opt Options, sum *Summary) ([]Pair, error) {
	done, err := st.Finished()
	if err != nil {
		return nil, err
	}
	// Runs relabelled on read whose circuit heads changed are trained
	// again and replace their rows as they land (never deleted first).
	stale, err := st.Stale()
	if err != nil {
		return nil, err
	}
	unsigned, err := st.Unsigned(opt.Analysis)
	if err != nil {
		return nil, err
	}
	stale = append(stale, unsigned...)
	st.replace.set(stale)
	if n := st.relabel.String(); n != "" && opt.Note != nil {
		opt.Note(n)
	}
	var todo []Pair
	var retry []RunID
	for _, p := range pairs {
		id := RunID{p.Key, p.Config.Seed}
		switch status, ok := done[id]; {
		case slices.Contains(stale, id):
			todo = append(todo, p)
		case ok && status == StatusFailed && opt.RetryFailed:
			retry = append(retry, id)
			todo = append(todo, p)
		case ok:
			sum.Skipped++
		default:
			todo = append(todo, p)
		}
	}
	if opt.Workers < 1 || opt.Group < 1 {
		return nil, fmt.Errorf("sweep: %d workers, groups of %d", opt.Workers, opt.Group)
	}
	if err := st.Delete(retry); err != nil {
		return nil, err
	}
	return todo, nil
}

// keepClaims renews owner's claims every third of lease until the
// returned stop is called, which also releases them.
func keepClaims(st *Store, owner string, lease time.Duration) (stop func()) {
	renewing := make(chan struct{})
	go func() {
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-renewing:
				return
			case <-t.C:
				_ = st.renew(owner, lease) // a lapsed claim costs a run trained twice, never a row
			}
		}
	}()
	return func() {
		close(renewing)
		_ = st.release(owner)
	}
}

// sweepRun is what Run's feeder, workers and writer share: the progress
// reported and the first device or feeder error.
type sweepRun struct {
	opt    Options
	start  time.Time
	cancel context.CancelFunc
	mu     sync.Mutex // guards prog, sum.Abandoned and derr across goroutines
	prog   Progress
	sum    Summary
	derr   error
}

// report tells opt.Progress where the sweep stands; the caller holds mu.
func (sr *sweepRun) report(last *Record) {
	if sr.opt.Progress == nil {
		return
	}
	prog := &sr.prog
	prog.Elapsed, prog.Last, prog.ETA = time.Since(sr.start), last, 0
	if prog.Done > 0 {
		left := prog.Total - prog.Skipped - prog.Done
		prog.ETA = time.Duration(float64(prog.Elapsed) / float64(prog.Done) * float64(left))
	}
	sr.opt.Progress(sr.prog)
}

// seen is the feeder's word on pairs found stored by another process,
// and how many another now holds.
func (sr *sweepRun) seen(stored, elsewhere int) {
	sr.mu.Lock()
	sr.prog.Skipped += stored
	sr.prog.Elapsed, sr.prog.Elsewhere = time.Since(sr.start), elsewhere
	if stored > 0 {
		sr.report(nil)
	}
	sr.mu.Unlock()
}

// fail keeps the first error and stops the feeder.
func (sr *sweepRun) fail(err error) {
	sr.mu.Lock()
	if sr.derr == nil {
		sr.derr = err
	}
	sr.mu.Unlock()
	sr.cancel()
}

// work is one worker: it opens its own device and runs the groups of
// jobs on it, sending each finished group to results.
func (sr *sweepRun) work(jobs iter.Seq[[]Pair], results chan<- []*Outcome) {
	pl, err := sr.opt.NewPlatform()
	if err != nil {
		sr.fail(err)
		return
	}
	defer pl.Device.Close()
	for ps := range jobs {
		sr.mu.Lock()
		sr.prog.Running += len(ps)
		sr.mu.Unlock()
		outs, err := RunGroup(ps, pl, sr.opt.Analysis, GroupHooks{Abort: sr.opt.Abort})
		if err == nil && sr.opt.Keep != nil {
			for _, o := range outs {
				if o.Model != nil {
					sr.opt.Keep(o)
				}
			}
		}
		sr.mu.Lock()
		sr.prog.Running -= len(ps)
		if err != nil {
			sr.sum.Abandoned += len(ps)
		}
		sr.mu.Unlock()
		if err == nil {
			results <- outs
		}
	}
}

// land is the only writer: each group of results lands in one
// transaction. After a storage error it drains the workers in flight and
// returns the error.
func (sr *sweepRun) land(st *Store, owner string, results <-chan []*Outcome) error {
	var werr error
	for outs := range results {
		if werr != nil {
			continue // drain the workers in flight; the error ends the sweep
		}
		recs := make([]*Record, len(outs))
		for i, o := range outs {
			recs[i] = &o.Record
		}
		landed, err := st.storeClaimed(recs, owner)
		if err != nil {
			werr = err
			sr.cancel()
			continue
		}
		sr.mu.Lock()
		sr.prog.Skipped += len(recs) - len(landed)
		for _, r := range landed {
			sr.prog.Done++
			if r.Status != StatusOK {
				sr.prog.Failed++
			}
			sr.report(r)
		}
		sr.mu.Unlock()
	}
	return werr
}

// feeder hands the workers their groups, claiming each group just before
// it trains, and keeps the pairs another process holds to look at again.
type feeder struct {
	st     *Store
	owner  string
	lease  time.Duration
	size   int
	mu     sync.Mutex
	groups [][]Pair
	// waiting are pairs found claimed by another process; busy holds
	// every such pair until it lands or is claimed here.
	waiting []Pair
	busy    map[RunID]bool
	// seen is told how many pairs a claim found stored, and how many
	// are now another's.
	seen func(stored, elsewhere int)
}

// next claims and returns the next group to train (the pairs of it that
// were free), or nil when nothing is left or ctx ends. When all that is
// left is another process's, it waits and looks again: runs land, or a
// claim lapses and the pair is taken over.
func (f *feeder) next(ctx context.Context) ([]Pair, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ctx.Err() == nil {
		if len(f.groups) == 0 {
			if len(f.waiting) == 0 {
				return nil, nil
			}
			f.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(max(min(f.lease/4, 5*time.Second), 10*time.Millisecond)):
			}
			f.mu.Lock()
			f.groups = append(f.groups, Groups(f.waiting, f.size)...)
			f.waiting = nil
			continue
		}
		g := f.groups[0]
		f.groups = f.groups[1:]
		mine, busy, stored, err := f.st.claim(g, f.owner, f.lease)
		if err != nil {
			return nil, err
		}
		for _, p := range g {
			delete(f.busy, RunID{p.Key, p.Config.Seed})
		}
		for _, p := range busy {
			f.busy[RunID{p.Key, p.Config.Seed}] = true
		}
		f.waiting = append(f.waiting, busy...)
		f.seen(stored, len(f.busy))
		if len(mine) > 0 {
			return mine, nil
		}
	}
	return nil, nil
}

// GroupLimit is the largest group that fits dev for every shape among
// pairs, each model with the probed evaluation graph too when probed (an
// Analysis that runs it: Analysis.Probed): the smallest train.GroupLimit
// over them, and why names what bounds it (train.MaxGroup where nothing
// smaller does). Split reports whether some shape has more pairs than
// that, so that its seeds train in several groups.
func GroupLimit(dev kernels.Device, pairs []Pair, probed bool) (limit int, why string, split bool, err error) {
	limit, why = train.MaxGroup, fmt.Sprintf("headlab's cap is %d", train.MaxGroup)
	most := 0
	for _, g := range Groups(pairs, len(pairs)+1) {
		n, w, err := train.GroupLimit(dev, g[0].Config, probed)
		if err != nil {
			return 0, "", false, err
		}
		if n < limit {
			limit, why = n, w
		}
		most = max(most, len(g))
	}
	return limit, why, most > limit, nil
}

// Groups splits pairs into groups of at most size that can train
// together (train.SameShape), keeping their order within each group.
func Groups(pairs []Pair, size int) [][]Pair {
	var out [][]Pair
	open := map[int]int{} // index in out of the group still filling, by shape class
	var shapes []train.Config
	for _, p := range pairs {
		class := -1
		for i, c := range shapes {
			if train.SameShape(c, p.Config) {
				class = i
				break
			}
		}
		if class < 0 {
			class = len(shapes)
			shapes = append(shapes, p.Config)
		}
		if i, ok := open[class]; ok && len(out[i]) < size {
			out[i] = append(out[i], p)
			continue
		}
		open[class] = len(out)
		out = append(out, []Pair{p})
	}
	return out
}

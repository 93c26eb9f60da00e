package sweep

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/train"
)

// Labels of the two halves of the induction circuit (analysis.Patterns).
const (
	LabelInduction     = "induction"
	LabelPreviousToken = "previous-token"
)

// CircuitDrop is how much held-out accuracy (a fraction: 0.20 is 20
// points) switching off all heads of one half of the circuit must cost for
// that half to count as load-bearing.
const CircuitDrop = 0.20

// FormsCircuit reports whether a run formed the induction circuit: a
// previous-token head in an earlier layer than an induction head, and
// both groups load-bearing: switching off all induction heads together
// costs at least CircuitDrop of accuracy, and so does switching off all
// previous-token heads together.
func FormsCircuit(heads []inspect.Head, a Ablation) bool {
	firstPrev, lastInd := -1, -1
	for _, h := range heads {
		switch h.Label {
		case LabelPreviousToken:
			if firstPrev < 0 || h.Layer < firstPrev {
				firstPrev = h.Layer
			}
		case LabelInduction:
			lastInd = max(lastInd, h.Layer)
		}
	}
	if firstPrev < 0 || lastInd <= firstPrev {
		return false
	}
	costs := func(j Joint) bool { return j.Accuracy != nil && a.Intact-*j.Accuracy >= CircuitDrop }
	return costs(a.Induction) && costs(a.PreviousToken)
}

// ErrAborted is returned by RunOne when abort closed mid-run.
var ErrAborted = errors.New("run abandoned")

// Outcome is everything RunOne learned: the record, and for a run that
// finished training the model, its head report and the attention scored.
type Outcome struct {
	Record    Record
	Model     *train.Model
	Report    *inspect.Report
	Attention *analysis.Attention
}

// RunOne trains the pair on be and analyses the model: held-out accuracy
// and loss, every head's label and scores, each head switched off alone,
// and the induction and previous-token heads switched off together. A run
// that fails (a diverged loss, anything training or analysis returns) is a
// record with status failed and the reason, not an error. The error is
// ErrAborted when abort closes before the run ends; abort may be nil.
//
// Training steps a train.Trainer exactly as train.Run does, so the numbers
// are those `headlab train` prints for the same flags, bit for bit.
func RunOne(p Pair, be kernels.Backend, abort <-chan struct{}) (*Outcome, error) {
	start := time.Now()
	out := &Outcome{Record: Record{Key: p.Key, Config: p.Config, Status: StatusOK}}
	r := &out.Record
	fail := func(err error) (*Outcome, error) {
		r.Status, r.Error = StatusFailed, err.Error()
		r.Seconds = time.Since(start).Seconds()
		r.FinishedAt = time.Now().UTC().Format(time.RFC3339)
		return out, nil
	}
	tr, err := train.NewTrainer(p.Config, be)
	if err != nil {
		return fail(err)
	}
	defer tr.Close()
	for tr.Step < p.Config.Steps {
		select {
		case <-abort:
			return nil, ErrAborted
		default:
		}
		if r.TrainLoss, err = tr.TrainStep(); err != nil {
			return fail(err)
		}
	}
	r.TrainSeconds = time.Since(start).Seconds()
	m := tr.Model
	out.Model = m

	ev, err := train.NewEvaluator(m, be)
	if err != nil {
		return fail(err)
	}
	defer ev.Close()
	rep, att, err := inspect.AnalyzeWith(ev, m, nil)
	if err != nil {
		return fail(err)
	}
	r.Accuracy, r.Loss = rep.Accuracy, rep.Loss
	r.Params, r.Chance = m.Weights.Count(), m.Task.Chance()
	out.Report, out.Attention = rep, att
	held := train.HeldOut(m)
	r.Heads = rep.Heads
	r.Ablation.Intact = r.Accuracy
	for _, h := range rep.Heads {
		r.Ablation.Single = append(r.Ablation.Single, Single{Head: h.Name, Label: h.Label, Accuracy: h.AblatedAccuracy})
	}
	joint := func(label string) (Joint, error) {
		j := Joint{Heads: []string{}}
		off := make([][]bool, m.Shape.Layers)
		for l := range off {
			off[l] = make([]bool, m.Shape.Heads)
		}
		for _, h := range rep.Heads {
			if h.Label == label {
				off[h.Layer][h.Head] = true
				j.Heads = append(j.Heads, h.Name)
			}
		}
		if len(j.Heads) == 0 {
			return j, nil
		}
		acc, _, err := ev.Accuracy(held, off)
		j.Accuracy = &acc
		return j, err
	}
	if r.Ablation.Induction, err = joint(LabelInduction); err != nil {
		return fail(err)
	}
	if r.Ablation.PreviousToken, err = joint(LabelPreviousToken); err != nil {
		return fail(err)
	}
	r.Circuit = FormsCircuit(r.Heads, r.Ablation)
	r.Seconds = time.Since(start).Seconds()
	r.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	return out, nil
}

// Options configure Run.
type Options struct {
	// Workers is the number of runs in flight at once (at least 1). Each
	// run computes on one goroutine, so the CPU count is a good choice.
	Workers int
	// NewBackend makes the backend of one worker; it is called once per
	// worker.
	NewBackend func() kernels.Backend
	// Abort, when closed, abandons the runs in flight (their pairs stay
	// unfinished). Cancelling Run's context only stops new runs starting.
	Abort <-chan struct{}
	// Progress, if set, is called after every stored run and once at the
	// start, from one goroutine.
	Progress func(Progress)
	// Keep, if set, is called in the worker with each run that trained to
	// the end, before its record is stored (reproduce draws pictures of
	// models this way).
	Keep func(*Outcome)
	// RetryFailed reruns pairs recorded as failed instead of skipping them.
	RetryFailed bool
}

// Progress is the state of a sweep after a run lands.
type Progress struct {
	// Total pairs in this shard; Skipped were in the database already;
	// Done and Failed finished in this invocation (Failed is counted in
	// Done too); Running are in flight.
	Total, Skipped, Done, Failed, Running int
	Elapsed                               time.Duration
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
func Run(ctx context.Context, st *Store, pairs []Pair, opt Options) (Summary, error) {
	sum := Summary{Total: len(pairs)}
	done, err := st.Finished()
	if err != nil {
		return sum, err
	}
	var todo []Pair
	var retry []RunID
	for _, p := range pairs {
		id := RunID{p.Key, p.Config.Seed}
		switch status, ok := done[id]; {
		case ok && status == StatusFailed && opt.RetryFailed:
			retry = append(retry, id)
			todo = append(todo, p)
		case ok:
			sum.Skipped++
		default:
			todo = append(todo, p)
		}
	}
	if opt.Workers < 1 {
		return sum, fmt.Errorf("sweep: %d workers", opt.Workers)
	}
	if err := st.Delete(retry); err != nil {
		return sum, err
	}

	start := time.Now()
	prog := Progress{Total: sum.Total, Skipped: sum.Skipped}
	report := func(last *Record) {
		if opt.Progress == nil {
			return
		}
		prog.Elapsed, prog.Last, prog.ETA = time.Since(start), last, 0
		if prog.Done > 0 {
			left := len(todo) - prog.Done
			prog.ETA = time.Duration(float64(prog.Elapsed) / float64(prog.Done) * float64(left))
		}
		opt.Progress(prog)
	}

	// A storage error stops the feeder too.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan Pair)
	results := make(chan *Outcome)
	var mu sync.Mutex // guards prog and sum.Abandoned across goroutines
	var workers sync.WaitGroup
	for range min(opt.Workers, max(1, len(todo))) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			be := opt.NewBackend()
			for p := range jobs {
				mu.Lock()
				prog.Running++
				mu.Unlock()
				o, err := RunOne(p, be, opt.Abort)
				if err == nil && opt.Keep != nil && o.Model != nil {
					opt.Keep(o)
				}
				mu.Lock()
				prog.Running--
				if err != nil {
					sum.Abandoned++
				}
				mu.Unlock()
				if err == nil {
					results <- o
				}
			}
		}()
	}

	// The feeder hands out pairs until they run out or ctx is cancelled.
	go func() {
		defer close(jobs)
		for _, p := range todo {
			if ctx.Err() != nil {
				return
			}
			select {
			case jobs <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		workers.Wait()
		close(results)
	}()

	// This goroutine is the only writer.
	mu.Lock()
	report(nil)
	mu.Unlock()
	var werr error
	for o := range results {
		if werr != nil {
			continue // drain the workers in flight; the error ends the sweep
		}
		if werr = st.Put(&o.Record); werr != nil {
			cancel()
			continue
		}
		mu.Lock()
		prog.Done++
		if o.Record.Status != StatusOK {
			prog.Failed++
		}
		report(&o.Record)
		mu.Unlock()
	}
	sum.Done, sum.Failed = prog.Done, prog.Failed
	sum.Interrupted = sum.Skipped+sum.Done < sum.Total
	return sum, werr
}

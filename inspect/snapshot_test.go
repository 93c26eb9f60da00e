package inspect

import (
	"math"
	"reflect"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/faultdev"
	"headlab/train"
)

// TestRecorderOnePass: a history entry is one pass over the held-out set
// (the accuracy on all of it, the heads scored on its first
// ScoredExamples) and one over the training sample (training accuracy),
// and says what Analyze says of the same model.
func TestRecorderOnePass(t *testing.T) {
	m := trained(t, 60)
	dev := &faultdev.Passes{Device: cpu.New()}
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var r Recorder
	if err := r.record(60, m, e, 0.5); err != nil {
		t.Fatal(err)
	}
	first := dev.N
	if err := r.record(60, m, e, math.NaN()); err != nil {
		t.Fatal(err)
	}
	chunks := func(n int) int { return (n + train.EvalChunk - 1) / train.EvalChunk }
	want := chunks(train.HeldOutExamples) + chunks(train.TrainingSample(m).N)
	if first != want || dev.N != 2*want {
		t.Errorf("recording took %d passes, then %d, want %d each", first, dev.N-first, want)
	}
	rep, _, err := Analyze(m, cpu.New(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range r.History {
		if s.Accuracy != rep.Accuracy {
			t.Errorf("entry %d: accuracy %v, Analyze %v", k, s.Accuracy, rep.Accuracy)
		}
		if !reflect.DeepEqual(s.Heads, rep.Scores()) {
			t.Errorf("entry %d: heads %+v, Analyze %+v", k, s.Heads, rep.Scores())
		}
	}
	if r.History[0].Loss == nil || *r.History[0].Loss != 0.5 || r.History[1].Loss != nil {
		t.Errorf("losses %v, %v", r.History[0].Loss, r.History[1].Loss)
	}
}

// TestAnalyzePasses: Analyze reads accuracy and attention in one pass,
// then one pass per head switched off.
func TestAnalyzePasses(t *testing.T) {
	m := trained(t, 20)
	dev := &faultdev.Passes{Device: cpu.New()}
	if _, _, err := Analyze(m, dev, Options{}); err != nil {
		t.Fatal(err)
	}
	per := (train.HeldOutExamples + train.EvalChunk - 1) / train.EvalChunk
	if want := per * (1 + m.Shape.Layers*m.Shape.Heads); dev.N != want {
		t.Errorf("Analyze took %d passes, want %d", dev.N, want)
	}
}

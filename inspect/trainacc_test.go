package inspect

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/train"
)

// TestTrainAccuracyRecorded: every record of a history holds training
// accuracy, and the last one is the trained model's accuracy on
// train.TrainingSample measured afresh; a finite set of 40 sequences
// is measured on those 40.
func TestTrainAccuracyRecorded(t *testing.T) {
	c := train.Defaults("modular-addition")
	c.Vocab, c.Layers, c.Heads, c.DModel, c.DFF = 13, 1, 1, 16, 16
	c.Steps, c.Batch, c.TrainExamples = 6, 8, 40
	var rec Recorder
	m, _, err := train.Run(c, cpu.New(), 0, nil, rec.Hook(3))
	if err != nil {
		t.Fatal(err)
	}
	s := rec.History.TrainAccuracy()
	if len(s.Steps) != len(rec.History) || len(s.Steps) < 2 || s.Name != "training accuracy" {
		t.Fatalf("training accuracy at %v of %d records", s.Steps, len(rec.History))
	}
	if b := train.TrainingSample(m); b.N != 40 {
		t.Errorf("a training set of 40 is sampled as %d sequences", b.N)
	}
	e, err := train.NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want, _, err := e.Accuracy(train.TrainingSample(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Values[len(s.Values)-1]; got != want {
		t.Errorf("last recorded training accuracy %v, measured afresh %v", got, want)
	}
}

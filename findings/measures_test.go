package findings

import (
	"slices"
	"testing"

	"headlab/analysis"
	"headlab/backend/cpu"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// TestMeasureTheCircuit: a default-model circuit seed's extra holds what
// the causal tools measure on its model, with its record's labels: each
// label's heads off together by mean and resample ablation, the heads
// patching locates under the first-half corruption, and every head's
// copying and prefix-matching scores; a seed beyond the circuit seeds is
// measured for nothing.
func TestMeasureTheCircuit(t *testing.T) {
	p := NewPlan(1, 2, 0.02, false, tasks.NextToken) // 50 steps
	for _, seed := range []uint64{1, 2} {
		c := p.Induction
		c.Seed = seed
		o, err := sweep.RunOne(sweep.Pair{Key: sweep.Key(c), Config: c}, sweep.Platform{Device: cpu.New()}, sweep.Analysis{}, nil)
		if err != nil || o.Model == nil {
			t.Fatalf("seed %d: %v %+v", seed, err, o.Record)
		}
		// Two heads carry each label, so that every joint ablation runs.
		o.Report.Heads[0].Label, o.Report.Heads[1].Label = analysis.LabelPreviousToken, analysis.LabelPreviousToken
		o.Report.Heads[2].Label, o.Report.Heads[3].Label = analysis.LabelInduction, analysis.LabelInduction
		x, err := p.Measure(o, cpu.New())
		if err != nil {
			t.Fatal(err)
		}
		if seed == 2 {
			if x != nil {
				t.Errorf("seed 2, beyond the circuit seeds: %+v", x)
			}
			continue
		}
		m := x.Circuit
		if m == nil || !x.Complete() || len(m.Joint) != 2 || len(m.Heads) != 4 || m.Corruption != inspect.CorruptFirstHalf {
			t.Fatalf("extra %+v", x)
		}
		e, err := train.NewEvaluator(o.Model, cpu.New())
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		held := e.HeldOutAll()
		for i, method := range []inspect.Ablation{inspect.AblateMean, inspect.AblateResample} {
			ab, err := inspect.NewAblator(e, held, method)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				heads string
				got   *float64
			}{{"L1H0,L1H1", m.Joint[i].Induction}, {"L0H0,L0H1", m.Joint[i].PreviousToken}} {
				off, err := analysis.ParseHeads(c.heads, 2, 2)
				if err != nil {
					t.Fatal(err)
				}
				sn, err := ab.Snapshot(held, train.SnapshotOptions{Off: [][][]bool{off}})
				if err != nil {
					t.Fatal(err)
				}
				if m.Joint[i].Method != method || c.got == nil || *c.got != sn[0].Accuracy {
					t.Errorf("%s off together by %s: %v, want %v", c.heads, method, c.got, sn[0].Accuracy)
				}
			}
		}
		pr, err := inspect.Patch(e, inspect.PatchOptions{Examples: train.EvalChunk})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.Located, pr[0].Located) {
			t.Errorf("located %v, patching locates %v", m.Located, pr[0].Located)
		}
		ms, err := inspect.Circuits(e)
		if err != nil || ms[0].Err != nil {
			t.Fatal(err, ms[0].Err)
		}
		for k, h := range m.Heads {
			c := ms[0].Heads[k]
			if h.Name != o.Report.Heads[k].Name || h.Copying != c.OVCopying || h.Prefix != c.PrefixMatching {
				t.Errorf("head %d: %+v, want %s %+v", k, h, o.Report.Heads[k].Name, c)
			}
		}
	}
}

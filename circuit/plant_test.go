package circuit

import (
	"slices"
	"testing"

	"headlab/backend/cpu"
	"headlab/inspect"
)

// TestPlantedCircuitsRecovered: on each planted model, under each of the
// induction task's corruptions and in both directions, circuit keeps
// exactly the planted edges at the default threshold (precision and
// recall 1). Under denoising the last edge alone is sufficient (the
// induction head's output into the logits restores everything), so the
// planted path is what noising recovers (docs/circuits.md).
func TestPlantedCircuitsRecovered(t *testing.T) {
	for _, c := range []struct{ kind, corr, dir string }{
		{PlantInduction, inspect.CorruptFirstHalf, Noising}, {PlantInduction, inspect.CorruptOther, Noising},
		{PlantRedundant, inspect.CorruptFirstHalf, Noising},
	} {
		kind, corr, dir := c.kind, c.corr, c.dir
		{
			{
				m, planted, err := Plant(kind, 1, corr)
				if err != nil {
					t.Fatal(err)
				}
				r, err := NewRunner(m, cpu.New(), Options{Examples: 8, Corruption: corr, Direction: dir})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := Find(r, DefaultThreshold, false, nil)
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, e := range planted {
					want = append(want, e.String())
				}
				got := slices.Clone(rep.Circuit)
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s, %s, %s: circuit %v (faithfulness %.3f), planted %v", kind, corr, dir, got, rep.Faithfulness, want)
				}
			}
		}
	}
}

// TestPlantedHeads: the heads table labels the planted heads
// (previous-token L0H0, induction L1H0, and L1H1 in the redundant model),
// and each answers as built (held-out accuracy 100%); in the redundant
// model switching either induction head off alone costs no accuracy
// (ablation misses both), while the circuit's edges name both
// (TestPlantedCircuitsRecovered).
func TestPlantedHeads(t *testing.T) {
	for _, kind := range PlantKinds {
		m, _, err := Plant(kind, 1, "")
		if err != nil {
			t.Fatal(err)
		}
		rep, _, err := inspect.Analyze(m, cpu.New(), inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Accuracy != 1 {
			t.Errorf("%s: held-out accuracy %.4f", kind, rep.Accuracy)
		}
		want := map[string]string{"L0H0": "previous-token", "L1H0": "induction"}
		if kind == PlantRedundant {
			want["L1H1"] = "induction"
		}
		for _, h := range rep.Heads {
			if l, ok := want[h.Name]; ok && h.Label != l {
				t.Errorf("%s: %s labelled %q (%.2f), planted %s", kind, h.Name, h.Label, h.Score, l)
			}
			if kind == PlantRedundant && h.Layer == 1 && h.Head < 2 && h.AblatedAccuracy < 0.99 {
				t.Errorf("redundant: %s off alone leaves %.4f: ablation should miss the redundant pair", h.Name, h.AblatedAccuracy)
			}
			if kind == PlantInduction && (h.Name == "L1H0" || h.Name == "L0H0") && h.AblatedAccuracy > 0.5 {
				t.Errorf("induction: %s off alone leaves %.4f", h.Name, h.AblatedAccuracy)
			}
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"headlab/sweep"
)

// TestTrainManySeeds: train --seeds gives, for every seed, the numbers
// train --seed gives alone (on the CPU, bit for bit), one JSON object per
// seed, and one summary line per seed as text.
func TestTrainManySeeds(t *testing.T) {
	base := []string{"train", "--task", "majority", "--steps", "30", "--d-model", "16", "--d-ff", "16", "--quiet"}
	code, out, errs := headlab(t, append(base, "--seeds", "2-4", "--group", "2", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var recs []sweep.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for i, r := range recs {
		seed := []string{"2", "3", "4"}[i]
		if r.Config.Seed != uint64(i+2) || r.Status != sweep.StatusOK || r.Group != []int{2, 2, 1}[i] {
			t.Fatalf("record %d: seed %d, %s, group %d", i, r.Config.Seed, r.Status, r.Group)
		}
		code, one, errs := headlab(t, append(base, "--seed", seed, "--json")...)
		if code != 0 {
			t.Fatalf("seed %s alone: exit %d: %s", seed, code, errs)
		}
		var alone struct {
			Accuracy  float64 `json:"accuracy"`
			Loss      float64 `json:"loss"`
			TrainLoss float64 `json:"train_loss"`
		}
		if err := json.Unmarshal([]byte(one), &alone); err != nil {
			t.Fatal(err)
		}
		if r.Accuracy != alone.Accuracy || r.Loss != alone.Loss || r.TrainLoss != alone.TrainLoss {
			t.Errorf("seed %s: %v/%v/%v in a group, %v/%v/%v alone", seed, r.Accuracy, r.Loss, r.TrainLoss, alone.Accuracy, alone.Loss, alone.TrainLoss)
		}
	}
	code, out, errs = headlab(t, append(base, "--seeds", "1,5")...)
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.HasPrefix(out, "seed 1  accuracy ") || !strings.Contains(out, "\nseed 5  accuracy ") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	// By default the CPU spreads the seeds over its cores, every seed at
	// once: groups of one on two cores or more (--group's help says so).
	group := 2 / min(runtime.NumCPU(), 2)
	if !strings.Contains(errs, fmt.Sprintf(", groups of up to %d\n", group)) {
		t.Errorf("2 seeds on %d cores, want groups of %d: %q", runtime.NumCPU(), group, errs)
	}
}

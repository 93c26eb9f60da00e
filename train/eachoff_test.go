package train

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/tasks"
)

// TestEachOffIsSnapshot: every mask's accuracy and loss from EachOff
// (the tails of a resumable Net for a lone model) have the bits of a
// Snapshot with that mask, for masks whose first head off is in each
// block, none, and several blocks, over a held-out set whose last chunk
// is partial; a group of two takes each mask's Snapshot.
func TestEachOffIsSnapshot(t *testing.T) {
	c := Defaults("induction")
	c.Layers, c.Steps = 3, 30
	g, err := NewGroup([]Config{c}, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for range c.Steps {
		if err := g.TrainStep(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	e := evaluator(t, g)
	held := tasks.NewStream(g.Models[0].Task, c.Seed, tasks.HeldOut).Next(EvalChunk + 37)
	off := func(heads ...[2]int) [][]bool {
		m := [][]bool{{false, false}, {false, false}, {false, false}}
		for _, h := range heads {
			m[h[0]][h[1]] = true
		}
		return m
	}
	masks := [][][]bool{nil, off([2]int{0, 1}), off([2]int{1, 0}), off([2]int{2, 1}), off([2]int{2, 0}, [2]int{2, 1}), off([2]int{1, 1}, [2]int{2, 0}), off([2]int{0, 0}, [2]int{2, 1})}
	// Twice: the second call reuses the Nets the first built.
	for range 2 {
		got, err := e.EachOff([]*tasks.Batch{held}, masks)
		if err != nil {
			t.Fatal(err)
		}
		if e.resumable == nil || len(e.tails) != c.Layers {
			t.Fatal("EachOff ran no tails")
		}
		distinct := map[float64]bool{}
		for i, m := range masks {
			want, err := e.Snapshot([]*tasks.Batch{held}, SnapshotOptions{Off: [][][]bool{m}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got[i]) != 1 || got[i][0].Accuracy != want[0].Accuracy || got[i][0].Loss != want[0].Loss {
				t.Errorf("mask %d %v: %+v, Snapshot %+v", i, m, got[i], want[0])
			}
			distinct[want[0].Loss] = true
		}
		if len(distinct) < len(masks)-1 {
			t.Errorf("%d distinct losses of %d masks: the masks change too little to test", len(distinct), len(masks))
		}
	}

	two := trained(t, cpu.New(), 5, 1, 2)
	e2 := evaluator(t, two)
	bs := e2.HeldOutAll()
	got, err := e2.EachOff(bs, masks[:3])
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range masks[:3] {
		want, err := e2.Snapshot(bs, SnapshotOptions{Off: [][][]bool{m}})
		if err != nil {
			t.Fatal(err)
		}
		for s := range want {
			if got[i][s].Accuracy != want[s].Accuracy || got[i][s].Loss != want[s].Loss {
				t.Errorf("group, mask %d, model %d: %+v, Snapshot %+v", i, s, got[i][s], want[s])
			}
		}
	}
}

package sweep

import (
	"encoding/json"
	"fmt"
	"slices"
)

// MergeResult counts what Merge did.
type MergeResult struct {
	// Added rows were new to the output; Duplicates were already there
	// with the same results and were skipped.
	Added, Duplicates int
	// Backends are those the merged runs used, sorted: more than one is
	// worth a word to the user, since results agree across backends only
	// as distributions (docs/model.md).
	Backends []string
}

// Merge copies the rows of the databases ins into out (created if
// needed). A pair present twice with the same results is kept once; with
// different results (see Differ) it is a conflict: Merge returns an error
// naming the pair and the field and writes nothing.
func Merge(out string, ins []string) (MergeResult, error) {
	var res MergeResult
	dst, err := Create(out)
	if err != nil {
		return res, err
	}
	defer dst.Close()
	have := map[RunID]Record{}
	from := map[RunID]string{}
	old, err := dst.Records()
	if err != nil {
		return res, err
	}
	backends := map[string]bool{}
	for _, r := range old {
		have[r.ID()], from[r.ID()] = r, out
		backends[r.Backend] = true
	}
	tx, err := dst.db.Begin()
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	for _, in := range ins {
		src, err := OpenExisting(in)
		if err != nil {
			return res, err
		}
		recs, err := src.Records()
		src.Close()
		if err != nil {
			return res, err
		}
		for _, r := range recs {
			backends[r.Backend] = true
			id := r.ID()
			if prev, ok := have[id]; ok {
				if field, a, b := Differ(&prev, &r); field != "" {
					return res, fmt.Errorf("merge refused: seed %d of %s has different %s in %s (%s) and %s (%s)",
						id.Seed, id.Key, field, from[id], a, in, b)
				}
				res.Duplicates++
				continue
			}
			if err := put(tx, &r); err != nil {
				return res, err
			}
			have[id], from[id] = r, in
			res.Added++
		}
	}
	for b := range backends {
		res.Backends = append(res.Backends, b)
	}
	slices.Sort(res.Backends)
	return res, tx.Commit()
}

// Differ compares the results of two records of the same pair, timing
// aside, and returns the first field that differs with both values, or ""
// when they agree. Training is deterministic, so two runs of one pair
// differ only if something is wrong (different code, a different build).
func Differ(a, b *Record) (field, va, vb string) {
	js := func(v any) string {
		s, _ := json.Marshal(v)
		return string(s)
	}
	pairs := []struct {
		name   string
		va, vb any
	}{
		{"config", a.Config, b.Config},
		{"status", a.Status, b.Status},
		{"error", a.Error, b.Error},
		{"accuracy", a.Accuracy, b.Accuracy},
		{"loss", a.Loss, b.Loss},
		{"train_loss", a.TrainLoss, b.TrainLoss},
		{"params", a.Params, b.Params},
		{"chance", a.Chance, b.Chance},
		{"heads", a.Heads, b.Heads},
		{"ablations", a.Ablation, b.Ablation},
		{"circuit", a.Circuit, b.Circuit},
	}
	for _, p := range pairs {
		if x, y := js(p.va), js(p.vb); x != y {
			const max = 60 // keep the error on one readable line
			if len(x) > max {
				x = x[:max] + "…"
			}
			if len(y) > max {
				y = y[:max] + "…"
			}
			return p.name, x, y
		}
	}
	return "", "", ""
}

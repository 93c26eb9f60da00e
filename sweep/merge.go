package sweep

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// MergeResult counts what Merge did.
type MergeResult struct {
	// Added rows were new to the output; Duplicates were already there
	// with the same results and were skipped; Total is the output's rows.
	Added, Duplicates, Total int
	// Backends are those the merged runs used, sorted: more than one is
	// worth a word to the user, since results agree across backends only
	// as distributions (docs/model.md).
	Backends []string
	// Notes are what the inputs said on reading their runs (Store.Note:
	// runs relabelled on read), one per input that said something.
	Notes []string
}

// Merge copies the rows of the databases ins and of out (when it exists)
// into a new database that replaces out. The inputs are opened read-only
// and never change; the output is built in a temporary file beside out
// and renamed over it only when every row is in. A pair present twice
// with the same results is kept once; with different results (see
// Differ) it is a conflict. A conflict, an input or out that is not a
// headlab sweep database or is damaged (Intact), or shards of different
// sweeps (MarkShard) are refused (ErrRefused) with out left as it was;
// out carries the inputs' sweep mark, if they have one.
func Merge(out string, ins []string) (res MergeResult, err error) {
	// Every file is checked before anything is written.
	var srcs []*Store
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	fresh, _, err := sniff(out)
	if err != nil {
		return res, err
	}
	var before os.FileInfo
	names := ins
	if !fresh {
		names = append([]string{out}, ins...)
		if before, err = os.Stat(out); err != nil {
			return res, err
		}
	}
	srcs, mark, err := openShards(names)
	if err != nil {
		return res, err
	}

	dir, base := filepath.Split(out)
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.merge-%d.tmp", base, os.Getpid()))
	removeTmp := func() {
		for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
	}
	removeTmp()
	removeStale(dir, base)
	dst, err := openWrite(tmp, false)
	if err != nil {
		removeTmp()
		return res, refusef("merge: cannot write beside %s: %v", out, err)
	}
	defer func() {
		if dst != nil {
			dst.db.Close()
		}
		if err != nil {
			removeTmp()
		}
	}()

	backends, err := copyRecords(dst, srcs, before != nil, &res)
	if err != nil {
		return res, err
	}
	// The shards of one sweep merge into a part of it, or all of it.
	if mark != 0 {
		if err := dst.setShardMark(mark); err != nil {
			return res, err
		}
	}
	// Our own readers would keep out busy.
	for _, s := range srcs {
		s.Close()
	}
	srcs = nil
	err = dst.db.Close()
	dst = nil
	if err != nil {
		return res, err
	}
	if err := replace(out, tmp, before); err != nil {
		return res, err
	}
	for b := range backends {
		res.Backends = append(res.Backends, b)
	}
	slices.Sort(res.Backends)
	return res, nil
}

// openShards opens every file of names, refusing one that is not intact
// or shards of two different sweeps; mark is the sweep whose shards they
// are, 0 when none says. The stores opened are returned even on error,
// for the caller to close.
func openShards(names []string) (srcs []*Store, mark int32, err error) {
	var marked string
	for _, in := range names {
		s, err := OpenExisting(in)
		if err != nil {
			return srcs, 0, err
		}
		srcs = append(srcs, s)
		if err := s.Intact(); err != nil {
			return srcs, 0, refusef("merge refused: %v", err)
		}
		m, err := s.shardMark()
		if err != nil {
			return srcs, 0, err
		}
		if m != 0 && mark != 0 && m != mark {
			return srcs, 0, refusef("merge refused: %s and %s are shards of different sweeps (other seeds, grid or flags); merge one sweep's shards at a time", marked, in)
		}
		if m != 0 {
			mark, marked = m, in
		}
	}
	return srcs, mark, nil
}

// copyRecords writes every record of srcs into dst in one transaction,
// each run once (refusing two that differ), counting in res; a run of
// srcs[0] is not added when hadOut (srcs[0] is the output itself). It
// returns the backends seen.
func copyRecords(dst *Store, srcs []*Store, hadOut bool, res *MergeResult) (map[string]bool, error) {
	have := map[RunID]Record{}
	from := map[RunID]string{}
	backends := map[string]bool{}
	tx, err := dst.db.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for i, src := range srcs {
		recs, err := src.Records()
		if err != nil {
			return nil, refusef("merge refused: reading %s: %v", src.path, err)
		}
		if n := src.relabel.String(); n != "" {
			res.Notes = append(res.Notes, src.path+": "+n)
		}
		for _, r := range recs {
			backends[r.Backend] = true
			id := r.ID()
			if prev, ok := have[id]; ok {
				if field, a, b := Differ(&prev, &r); field != "" {
					return nil, refusef("merge refused: seed %d of %s has different %s in %s (%s) and %s (%s)",
						id.Seed, id.Key, field, from[id], a, src.path, b)
				}
				res.Duplicates++
				continue
			}
			if err := put(tx, &r); err != nil {
				return nil, err
			}
			have[id], from[id] = r, src.path
			res.Total++
			if !hadOut || i > 0 {
				res.Added++
			}
		}
	}
	return backends, tx.Commit()
}

// Intact refuses a database that SQLite's integrity check finds damaged
// (a disk error, a copy cut short), rather than have it read as far as it
// reads, merged or resumed.
func (s *Store) Intact() error {
	if err := s.Check(); err != nil {
		return refusef("%s is damaged (%v)", s.path, err)
	}
	return nil
}

// removeStale removes the temporary files of merges into base that were
// killed: those whose PID no longer exists. A live merge's are left.
func removeStale(dir, base string) {
	prefix := "." + base + ".merge-"
	matches, _ := filepath.Glob(filepath.Join(dir, prefix+"*.tmp*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), prefix)
		pid, err := strconv.Atoi(rest[:max(strings.Index(rest, "."), 0)])
		if err == nil && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.Remove(m)
		}
	}
}

// replace renames tmp over out, which was as before when it was read (nil:
// it did not exist). An out in WAL mode may be open in a sweep (sweeps
// keep their file in WAL mode), and a log beside it would be replayed
// into the new file, so it is first checkpointed into itself and left in
// rollback-journal mode, which needs exclusive access: while another
// process has out open the merge is refused. It is refused too when out
// changed since it was read.
func replace(out, tmp string, before os.FileInfo) error {
	if before != nil {
		_, wal, err := sniff(out)
		if err != nil {
			return err
		}
		if _, err := os.Stat(out + "-wal"); wal || err == nil {
			if err := settle(out); err != nil {
				return refusef("merge refused: %s is open in another process (a sweep still writing it?): %v", out, err)
			}
		} else if now, err := os.Stat(out); err != nil || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
			return refusef("merge refused: %s changed while it was merged; merge again", out)
		}
		if err := os.Chmod(tmp, before.Mode().Perm()); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(out))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// settle checkpoints the log of the headlab database at path into it and
// leaves it in rollback-journal mode, or fails at once when another
// connection has it open.
func settle(path string) error {
	u, err := uri(path, "_pragma=busy_timeout(0)")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", u)
	if err != nil {
		return err
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode = DELETE").Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("journal mode stays %s", mode)
	}
	return db.Close()
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
		{"train_answer_loss", a.TrainAnswerLoss, b.TrainAnswerLoss},
		{"params", a.Params, b.Params},
		{"chance", a.Chance, b.Chance},
		{"heads", a.Heads, b.Heads},
		{"ablations", a.Ablation, b.Ablation},
		{"ablation_method", a.method(), b.method()},
		{"circuit", a.Circuit, b.Circuit},
		{"lens_layer", a.LensLayer, b.LensLayer},
		{"icl_score", a.ICL, b.ICL},
		{"edge_circuit", a.EdgeCircuit, b.EdgeCircuit},
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

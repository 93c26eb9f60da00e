package sweep

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"headlab/train"
)

// writeDB stores recs in a new database at dir/name, marked as shard sh
// of sweep id.
func writeDB(t *testing.T, dir, name string, sh Shard, id int32, recs ...Record) string {
	t.Helper()
	p := filepath.Join(dir, name)
	st, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.MarkShard(sh, id); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := st.Put(&r); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// refusedUntouched checks that merging ins into out is refused in one line
// naming want, with every file of dir as it was.
func refusedUntouched(t *testing.T, dir, out string, ins []string, want ...string) {
	t.Helper()
	sums := map[string]string{}
	for _, p := range append([]string{out}, ins...) {
		if _, err := os.Stat(p); err == nil {
			sums[p] = fileSum(t, p)
		}
	}
	files := dirNames(t, dir)
	_, err := Merge(out, ins)
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Merge(%s, %v) = %v, want a one-line refusal", out, ins, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not name %s", err, w)
		}
	}
	for p, s := range sums {
		if fileSum(t, p) != s {
			t.Errorf("a refused merge changed %s", p)
		}
	}
	if !slices.Equal(dirNames(t, dir), files) {
		t.Errorf("a refused merge left %v, was %v", dirNames(t, dir), files)
	}
}

func TestSweepID(t *testing.T) {
	c := train.Defaults("induction")
	a := Pairs([]train.Config{c}, []uint64{1, 2, 3, 4})
	if SweepID(a) != SweepID(Pairs([]train.Config{c}, []uint64{1, 2, 3, 4})) {
		t.Error("the same pairs give two ids")
	}
	c2 := c
	c2.Steps++
	for name, other := range map[string][]Pair{
		"more seeds":         Pairs([]train.Config{c}, []uint64{1, 2, 3, 4, 5}),
		"other seeds":        Pairs([]train.Config{c}, []uint64{2, 3, 4, 5}),
		"another config":     Pairs([]train.Config{c2}, []uint64{1, 2, 3, 4}),
		"one more config":    Pairs([]train.Config{c, c2}, []uint64{1, 2, 3, 4}),
		"configs reordered":  Pairs([]train.Config{c2, c}, []uint64{1, 2, 3, 4}),
		"nothing (0 pairs)":  nil,
		"the shard, not all": Shard{0, 2}.Select(a),
	} {
		if id := SweepID(other); id == SweepID(a) || id == 0 {
			t.Errorf("%s: id %d, the sweep's %d", name, id, SweepID(a))
		}
	}
}

// Shards carry their sweep's id: shards of one sweep merge (and the
// merged file carries it on), of two are refused; a whole sweep carries
// none and merges with anything.
func TestMergeRefusesShardsOfDifferentSweeps(t *testing.T) {
	dir := t.TempDir()
	k := knownRecords()
	const sweepA, sweepB int32 = 11, 23
	s0 := writeDB(t, dir, "a0.db", Shard{0, 2}, sweepA, k[0])
	s1 := writeDB(t, dir, "a1.db", Shard{1, 2}, sweepA, k[1])
	b1 := writeDB(t, dir, "b1.db", Shard{1, 2}, sweepB, k[2])
	whole := writeDB(t, dir, "whole.db", All, sweepB, k[3])

	out := filepath.Join(dir, "all.db")
	if res, err := Merge(out, []string{s0, s1}); err != nil || res.Total != 2 {
		t.Fatalf("shards of one sweep: %+v, %v", res, err)
	}
	for path, want := range map[string]int32{s0: sweepA, out: sweepA, whole: 0} {
		st, err := OpenExisting(path)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := st.shardMark(); err != nil || m != want {
			t.Errorf("%s is marked %d (%v), want %d", path, m, err, want)
		}
		st.Close()
	}

	refusedUntouched(t, dir, filepath.Join(dir, "new.db"), []string{s0, b1}, s0, b1, "different sweeps")
	refusedUntouched(t, dir, out, []string{b1}, out, b1, "different sweeps")
	if res, err := Merge(filepath.Join(dir, "mixed.db"), []string{s0, whole, s1}); err != nil || res.Total != 3 {
		t.Errorf("shards with a whole sweep: %+v, %v", res, err)
	}
}

// A damaged input, whose header and schema read well, is refused before
// anything is merged.
func TestMergeRefusesDamagedShard(t *testing.T) {
	dir := t.TempDir()
	k := knownRecords()
	good := writeDB(t, dir, "good.db", All, 0, k[0])
	// A page overwritten, as a disk error might: the runs table's root,
	// which every read of runs goes through, or an index's that merging
	// never reads.
	for _, name := range []string{"runs", "runs_task"} {
		path := writeDB(t, dir, name+".db", All, 0, k[1], k[2], k[3])
		st, err := OpenExisting(path)
		if err != nil {
			t.Fatal(err)
		}
		var root, pageSize int64
		if err := st.db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = ?", name).Scan(&root); err != nil {
			t.Fatal(err)
		}
		if err := st.db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
			t.Fatal(err)
		}
		st.Close()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, int(pageSize)), (root-1)*pageSize); err != nil {
			t.Fatal(err)
		}
		f.Close()
		refusedUntouched(t, dir, filepath.Join(dir, "out.db"), []string{good, path}, path)
		// Nor does a sweep resume it.
		sum := fileSum(t, path)
		if err := CheckIntact(path); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("CheckIntact(%s) = %v, want a refusal", name, err)
		}
		if fileSum(t, path) != sum {
			t.Errorf("CheckIntact changed %s", path)
		}
	}
	for _, p := range []string{good, filepath.Join(dir, "new.db")} {
		if err := CheckIntact(p); err != nil {
			t.Errorf("CheckIntact(%s) = %v", p, err)
		}
	}

	// A copy cut short.
	short := filepath.Join(dir, "short.db")
	b, err := os.ReadFile(writeDB(t, dir, "whole.db", All, 0, k[1], k[2], k[3]))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	refusedUntouched(t, dir, filepath.Join(dir, "out.db"), []string{good, short}, short)
}

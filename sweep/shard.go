package sweep

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is slice Index of Count of a sweep: the pairs whose Index modulo
// Count is Index. Interleaving, rather than cutting the list into blocks,
// gives every shard its share of each configuration, so shards take about
// the same time even when configurations differ in cost.
type Shard struct{ Index, Count int }

// All is the whole sweep as one shard.
var All = Shard{0, 1}

// String writes the shard as --shard reads it, "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Select returns the pairs of the shard, in order.
func (s Shard) Select(pairs []Pair) []Pair {
	var out []Pair
	for _, p := range pairs {
		if p.Index%s.Count == s.Index {
			out = append(out, p)
		}
	}
	return out
}

// ParseShard reads "i/n" with 0 <= i < n.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 0/4", v)
	}
	return newShard(i, n, fmt.Sprintf("shard %q", v))
}

func newShard(i, n int, what string) (Shard, error) {
	if n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%s: want 0 <= index < count, got index %d of %d", what, i, n)
	}
	return Shard{i, n}, nil
}

// ShardFromEnv picks the shard from a batch system's environment, for
// when --shard is not given (getenv is os.Getenv outside tests):
//
//   - a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX; Kubernetes does
//     not export the completions count, so the manifest must pass it as
//     JOB_COMPLETIONS (deploy/kubernetes-job.yaml does);
//   - a Slurm job array sets SLURM_ARRAY_TASK_ID and
//     SLURM_ARRAY_TASK_COUNT; the index is counted from
//     SLURM_ARRAY_TASK_MIN when set, so --array=1-8 works like 0-7. The
//     array's ids must be contiguous (no step such as 0-15:2).
//
// found is false when neither is present: the whole sweep is one shard.
func ShardFromEnv(getenv func(string) string) (s Shard, found bool, err error) {
	num := func(name string) (int, error) {
		v := strings.TrimSpace(getenv(name))
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not a number", name, v)
		}
		return n, nil
	}
	if getenv("JOB_COMPLETION_INDEX") != "" {
		i, err := num("JOB_COMPLETION_INDEX")
		if err != nil {
			return Shard{}, true, err
		}
		if getenv("JOB_COMPLETIONS") == "" {
			return Shard{}, true, fmt.Errorf("JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not: pass the Job's completions count in JOB_COMPLETIONS, or use --shard")
		}
		n, err := num("JOB_COMPLETIONS")
		if err != nil {
			return Shard{}, true, err
		}
		s, err := newShard(i, n, "Kubernetes JOB_COMPLETION_INDEX/JOB_COMPLETIONS")
		return s, true, err
	}
	if getenv("SLURM_ARRAY_TASK_ID") != "" {
		i, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return Shard{}, true, err
		}
		n, err := num("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return Shard{}, true, err
		}
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			lo, err := num("SLURM_ARRAY_TASK_MIN")
			if err != nil {
				return Shard{}, true, err
			}
			i -= lo
		}
		s, err := newShard(i, n, "Slurm SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT")
		return s, true, err
	}
	return All, false, nil
}

// SweepID names the sweep the pairs make up, all of them in order (every
// shard of one sweep has the same): a hash of each pair's configuration
// key and seed, never 0.
func SweepID(all []Pair) int32 {
	h := fnv.New32a()
	for _, p := range all {
		fmt.Fprintf(h, "%s\x00%d\x00", p.Key, p.Config.Seed)
	}
	return int32(h.Sum32()) | 1
}

// MarkShard records in the database that it holds shard sh of the sweep
// id, for Merge to refuse shards of different sweeps. The mark is SQLite's
// application id (a header field headlab uses for nothing else), so the
// schema does not change; the whole sweep (sh.Count 1) leaves it as it is.
// A later sweep with other pairs sharded into the same file replaces it.
func (s *Store) MarkShard(sh Shard, id int32) error {
	if sh.Count < 2 {
		return nil
	}
	return s.setShardMark(id)
}

func (s *Store) setShardMark(id int32) error {
	_, err := s.db.Exec(fmt.Sprintf("PRAGMA application_id = %d", id))
	return err
}

// shardMark is the sweep id MarkShard recorded, 0 when none was.
func (s *Store) shardMark() (int32, error) {
	var id int32
	err := s.db.QueryRow("PRAGMA application_id").Scan(&id)
	return id, err
}

// CheckIntact refuses the database at path, when there is one, if it is
// not a headlab sweep database or SQLite finds it damaged (Intact),
// reading it only: a sweep checks the shard it would resume before it
// writes a byte.
func CheckIntact(path string) error {
	if fresh, _, err := sniff(path); err != nil || fresh {
		return err
	}
	s, err := OpenExisting(path)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Intact(); err != nil {
		return refusef("sweep refused: %v; remove it to run its pairs again", err)
	}
	return nil
}

package train

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/memlimit"
	"headlab/tasks"
)

// TestLoadRefusesWhatItCannotHold: a config.json that asks for the
// largest model the flags allow (12.9e9 parameters), beside a sparse
// model.safetensors of the size that model's file has, is refused from
// the memory it would take, before the 48 GiB are read; a small
// checkpoint loads under a limit it fits and is refused under one it
// does not.
func TestLoadRefusesWhatItCannotHold(t *testing.T) {
	defer func(f func() memlimit.Limit) { memLimit = f }(memLimit)
	limit := func(b int64) func() memlimit.Limit {
		return func() memlimit.Limit { return memlimit.Limit{Bytes: b, What: "test limit"} }
	}

	c := Defaults("induction")
	c.Layers, c.DModel, c.DFF, c.Heads = 64, 4096, 16384, 64
	tk, _ := tasks.New(c.Task)
	cfg, err := json.Marshal(configFile{Format: checkpointFormat, Train: c, Model: c.Model(tk)})
	if err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(t.TempDir(), "huge")
	os.Mkdir(huge, 0o755)
	os.WriteFile(filepath.Join(huge, ConfigFile), cfg, 0o644)
	_, count, err := decodeConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := weightsSize(c.Model(tk), count)
	f, err := os.Create(filepath.Join(huge, WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(filepath.Join(huge, WeightsFile), lo); err != nil {
		t.Fatal(err)
	}
	memLimit = limit(16 << 30)
	if _, _, err := Load(huge); err == nil || !strings.Contains(err.Error(), "more than the 16.0 GiB this process may use (test limit)") {
		t.Fatalf("a 12.9e9-parameter checkpoint under 16 GiB: %v", err)
	}

	small := Defaults("majority")
	small.Steps, small.DModel, small.DFF = 1, 16, 16
	m, res, err := Run(small, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := Save(dir, m, &res); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, WeightsFile))
	need := fi.Size() + 4*int64(m.Weights.Count())
	memLimit = limit(need)
	if _, _, err := Load(dir); err != nil {
		t.Errorf("a checkpoint needing exactly the limit: %v", err)
	}
	memLimit = limit(need - 1)
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "this process may use") {
		t.Errorf("a checkpoint needing a byte more than the limit: %v", err)
	}
}

package sweep

import (
	"path/filepath"
	"strings"
	"testing"

	"headlab/train"
)

// no-mlp is a grid key: an attention-only configuration has no d-ff, so
// a d-ff axis gives it once, its key says so, and the key of every model
// with an MLP is what it was.
func TestNoMLPGrid(t *testing.T) {
	grid, err := ParseGrid("no-mlp=on,off;d-ff=64,128")
	if err != nil {
		t.Fatal(err)
	}
	base := train.Defaults("induction")
	configs, err := Expand(base, grid, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) != 3 {
		t.Fatalf("%d configurations, want 3 (one attention-only, d-ff 64 and 128): %v", len(configs), configs)
	}
	if c := configs[0]; !c.NoMLP || c.DFF != 0 || !strings.Contains(Key(c), " no_mlp=on") || !strings.Contains(ConfigName(c), "attention only") {
		t.Errorf("attention-only configuration %+v, key %q, name %q", c, Key(c), ConfigName(c))
	}
	if k := Key(configs[1]); strings.Contains(k, "mlp") || k != Key(base) {
		t.Errorf("key of a model with an MLP %q, the default's %q", k, Key(base))
	}
	if _, err := ParseGrid("no-mlp=sometimes"); err == nil {
		t.Error("no-mlp=sometimes accepted")
	}
}

// A record of an attention-only run reads back attention-only.
func TestNoMLPRoundTrip(t *testing.T) {
	st, err := Create(filepath.Join(t.TempDir(), "nomlp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := knownRecords()[0]
	r.Config.NoMLP, r.Config.DFF = true, 0
	if err := st.Put(&r); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !recs[0].Config.NoMLP {
		t.Errorf("read back %+v", recs)
	}
}

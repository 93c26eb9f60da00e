package preflight

import (
	"errors"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/train"
)

// sizedDevice is a CPU device that tells a memory size, as GL's does
// where its driver has a memory query, or tells none (ok false).
type sizedDevice struct {
	*cpu.Device
	mem int64
	ok  bool
}

func (d sizedDevice) MaxBufferFloats() int       { return 1 << 30 }
func (d sizedDevice) MemoryBytes() (int64, bool) { return d.mem, d.ok }

func TestMemoryAgainstTheDevice(t *testing.T) {
	c := train.Defaults("induction")
	need := train.EstimateBytes(c, false)
	cases := []struct {
		name    string
		dev     kernels.Device
		models  int
		probed  bool
		refused bool
		line    string
	}{
		{"fits", sizedDevice{cpu.New(), 4 * need, true}, 4, false, false, ""},
		{"one model too many", sizedDevice{cpu.New(), 4 * need, true}, 5, false, true, ""},
		{"no room for the probed graph", sizedDevice{cpu.New(), 4 * need, true}, 4, true, true, ""},
		{"no memory query", sizedDevice{cpu.New(), 0, false}, 1000, false, false, "reports no memory size"},
		{"cpu, a few", cpu.New(), 8, true, false, ""},
		{"cpu, beyond the machine", cpu.New(), int(1<<50/need) + 1, false, true, ""},
	}
	for _, tc := range cases {
		var stderr strings.Builder
		err := Memory(&stderr, tc.dev, []train.Config{c}, tc.models, tc.probed)
		var r *Refusal
		if tc.refused != (err != nil) || (err != nil && !errors.As(err, &r)) {
			t.Errorf("%s: err %v, want refused %v (as bad input)", tc.name, err, tc.refused)
		}
		if got := stderr.String(); !strings.Contains(got, tc.line) || (tc.line == "" && got != "") || strings.Count(got, "\n") > 1 {
			t.Errorf("%s: stderr %q, want one line with %q", tc.name, got, tc.line)
		}
	}
}

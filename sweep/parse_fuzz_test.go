package sweep

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The parsers of --seeds, --grid and --shard, on arbitrary strings: they
// never panic, give one-line errors, and what they accept is well formed
// and reads back the same when written out again. Seed corpora are in
// testdata/fuzz/.

func oneLine(t *testing.T, err error) {
	t.Helper()
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("multi-line error %q", err)
	}
}

func FuzzParseSeeds(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		seeds, err := ParseSeeds(s)
		if err != nil {
			oneLine(t, err)
			return
		}
		if len(seeds) == 0 || len(seeds) > maxSeeds {
			t.Fatalf("%q: %d seeds", s, len(seeds))
		}
		if len(seeds) > 1000 {
			return // long lists: the checks below would slow the fuzzer down
		}
		seen := map[uint64]bool{}
		parts := make([]string, len(seeds))
		for i, x := range seeds {
			if seen[x] {
				t.Fatalf("%q: seed %d twice", s, x)
			}
			seen[x] = true
			parts[i] = fmt.Sprint(x)
		}
		again, err := ParseSeeds(strings.Join(parts, ","))
		if err != nil || !slices.Equal(again, seeds) {
			t.Fatalf("%q: written out and read back: %v, %v", s, again, err)
		}
	})
}

func FuzzParseGrid(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		axes, err := ParseGrid(s)
		if err != nil {
			oneLine(t, err)
			return
		}
		var parts []string
		keys := map[string]bool{}
		for _, a := range axes {
			if !slices.Contains(GridKeys, a.Key) || keys[a.Key] || len(a.Values) == 0 {
				t.Fatalf("%q: axis %+v", s, a)
			}
			keys[a.Key] = true
			parts = append(parts, a.Key+"="+strings.Join(a.Values, ","))
		}
		again, err := ParseGrid(strings.Join(parts, ";"))
		if err != nil || len(again) != len(axes) {
			t.Fatalf("%q: written out and read back: %v, %v", s, again, err)
		}
		for i := range axes {
			if again[i].Key != axes[i].Key || !slices.Equal(again[i].Values, axes[i].Values) {
				t.Fatalf("%q: axis %d read back as %+v", s, i, again[i])
			}
		}
	})
}

func FuzzParseShard(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			oneLine(t, err)
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("%q: shard %+v", s, sh)
		}
		if again, err := ParseShard(sh.String()); err != nil || again != sh {
			t.Fatalf("%q: %s read back as %+v, %v", s, sh, again, err)
		}
	})
}

// TestParseSeedsCapsTheTotal: ranges that are each allowed but together
// too long are refused (they would allocate without bound).
func TestParseSeedsCapsTheTotal(t *testing.T) {
	if _, err := ParseSeeds("0-1048575"); err != nil {
		t.Fatalf("the largest range: %v", err)
	}
	for _, s := range []string{"0-1048576", "0-1048575,1048576", "0-600000,600001-1200000"} {
		if _, err := ParseSeeds(s); err == nil {
			t.Errorf("%q: accepted", s)
		}
	}
}

package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteTextGolden: the text report of the known database, every line
// of it (numbers, layout, the failed seed, the histogram, modes, the
// Wilson interval and the ablation table), against testdata/known-report.txt.
// HEADLAB_UPDATE_GOLDEN=1 rewrites the file; read the diff before keeping it.
func TestWriteTextGolden(t *testing.T) {
	var text strings.Builder
	WriteText(&text, Summarize(knownRecords()))
	golden := filepath.Join("testdata", "known-report.txt")
	if os.Getenv("HEADLAB_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(golden, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != string(want) {
		t.Errorf("text report differs from %s:\n%s", golden, text.String())
	}
}

// TestWriteHistogramScales: the bars cover the non-empty stretch of bins
// only, at one # per count up to 40 and scaled (rounding up) above it.
func TestWriteHistogramScales(t *testing.T) {
	bins := []Bin{{0, 0.1, 0}, {0.1, 0.2, 80}, {0.2, 0.3, 0}, {0.3, 0.4, 1}, {0.4, 0.5, 0}}
	var b strings.Builder
	WriteHistogram(&b, bins, "> ")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []struct {
		prefix string
		bars   int
		count  string
	}{{">  10- 20% |", 40, " 80"}, {">  20- 30% |", 0, " 0"}, {">  30- 40% |", 1, " 1"}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		l := lines[i]
		if !strings.HasPrefix(l, w.prefix) || strings.Count(l, "#") != w.bars || !strings.HasSuffix(l, w.count) {
			t.Errorf("line %d %q: want %q, %d bars, count%s", i, l, w.prefix, w.bars, w.count)
		}
	}
	b.Reset()
	WriteHistogram(&b, bins[:1], "")
	if b.String() != "(no values)\n" {
		t.Errorf("empty histogram: %q", b.String())
	}
}

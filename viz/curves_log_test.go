package viz

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestCurvesWithLossesAtOrBelowZero draws loss histories a log scale
// cannot show whole (all zero, one positive value, a constant): each
// gives a PNG, not a panic.
func TestCurvesWithLossesAtOrBelowZero(t *testing.T) {
	for _, loss := range [][]float64{{0, 0, 0}, {1, 0, -1}, {0.5, 0, 0.2}, {2, 2, 2}} {
		c := Curves{Title: "x", Loss: Curve{Name: "loss", Steps: []float64{0, 1, 2}, Values: loss},
			Accuracy: Curve{Name: "acc", Steps: []float64{0, 1, 2}, Values: []float64{0, 0.5, 1}}}
		path := filepath.Join(t.TempDir(), "c.png")
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%v: panic %v", loss, r)
				}
			}()
			fig, err := c.Figure()
			if err == nil {
				err = Write(path, fig)
			}
			if err != nil {
				t.Errorf("%v: %v", loss, err)
			}
		}()
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("%v: %v", loss, err)
			continue
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%v: not a PNG: %v", loss, err)
		}
		f.Close()
	}
}

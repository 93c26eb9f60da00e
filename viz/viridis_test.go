package viz

import (
	"math"
	"testing"
)

// TestViridisSteps: the step table the viewer's shader searches gives
// Viridis's colour for every float32 weight: at each edge and the weight
// just below it, at every bit pattern of a few whole intervals between
// control points, at a spread of weights over [0,1], and outside it.
func TestViridisSteps(t *testing.T) {
	s := ViridisSteps()
	if len(s.Edges) != len(s.Colors) || s.Edges[0] != 0 || len(s.Edges) < 256 {
		t.Fatalf("%d edges, %d colours, first edge %v", len(s.Edges), len(s.Colors), s.Edges[0])
	}
	for k := 1; k < len(s.Edges); k++ {
		if !(s.Edges[k] > s.Edges[k-1]) || s.Colors[k] == s.Colors[k-1] {
			t.Fatalf("step %d: edge %v after %v, colour %v after %v", k, s.Edges[k], s.Edges[k-1], s.Colors[k], s.Colors[k-1])
		}
	}
	bad := 0
	check := func(w float32) {
		if got, want := s.At(w), Viridis(float64(w)); got != want {
			if bad < 5 {
				t.Errorf("At(%v) = %v, Viridis %v", w, got, want)
			}
			bad++
		}
	}
	for _, e := range s.Edges {
		check(e)
		check(math.Nextafter32(e, -1))
	}
	for _, k := range []int{50, 100, 200, 254} {
		lo := math.Float32bits(float32(k) / 255)
		for b := lo; b <= math.Float32bits(float32(k+1)/255); b++ {
			check(math.Float32frombits(b))
		}
	}
	for b := uint32(0); b <= math.Float32bits(1); b += 4099 {
		check(math.Float32frombits(b))
	}
	for _, w := range []float32{-1, float32(math.Copysign(0, -1)), 1, 1.5, float32(math.Inf(1)), float32(math.NaN())} {
		check(w)
	}
	// Control points are exact.
	for k := range 256 {
		c := viridisTable[k]
		want := [3]uint8{uint8(math.Round(c[0] * 255)), uint8(math.Round(c[1] * 255)), uint8(math.Round(c[2] * 255))}
		if got := Viridis(float64(k) / 255); [3]uint8{got.R, got.G, got.B} != want {
			t.Errorf("Viridis(%d/255) = %v, control point %v", k, got, want)
		}
	}
}

// TestCellColor: the cell rule of the figures and the window.
func TestCellColor(t *testing.T) {
	for _, c := range []struct {
		masked bool
		w      float32
		want   [4]uint8
	}{
		{true, 0.5, [4]uint8{0, 0, 0, 255}},
		{false, float32(math.NaN()), [4]uint8{0xff, 0, 0xff, 255}},
		{false, float32(math.Inf(-1)), [4]uint8{0xff, 0, 0xff, 255}},
		{false, 0, [4]uint8{0x44, 0x01, 0x54, 255}},
		{false, -0.5, [4]uint8{0x44, 0x01, 0x54, 255}},
		{false, 1, [4]uint8{0xfd, 0xe7, 0x25, 255}},
		{false, 2, [4]uint8{0xfd, 0xe7, 0x25, 255}},
	} {
		got := CellColor(c.masked, c.w)
		if [4]uint8{got.R, got.G, got.B, got.A} != c.want {
			t.Errorf("CellColor(%v, %v) = %v, want %v", c.masked, c.w, got, c.want)
		}
	}
	if got, want := CellColor(false, 0.3), Viridis(float64(float32(0.3))); got != want {
		t.Errorf("CellColor(0.3) = %v, Viridis %v", got, want)
	}
}

package viz

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestBigShapeFigures: 4 layers of 8 heads at T=64 (the sizes people
// train) draw as a heatmap grid and as arcs within maxSide, with token
// labels thinned (the heatmap's) or turned (the arcs') so that
// neighbours never overlap, and the arc strips,
// in columns now, each inside the figure and apart from the others.
func TestBigShapeFigures(t *testing.T) {
	g := makeGrid(4, 8, 64, true, uniformCausal)
	if _, err := Heatmaps(g); err != nil {
		t.Fatal(err)
	}
	L := g.heatLayout()
	if L.step < 2 || vg.Length(L.step)*L.cell < lineH(L.labels.Font.Size) {
		t.Errorf("heatmap labels every %d of %v pt cells at %v pt: overlapping or not thinned", L.step, L.cell, L.labels.Font.Size)
	}
	f, err := Arcs(g)
	if err != nil {
		t.Fatal(err)
	}
	A := g.arcLayout()
	if f.W > maxSide || f.H > maxSide || A.cols < 2 {
		t.Errorf("arcs %vx%v pt in %d columns", f.W, f.H, A.cols)
	}
	if !A.rotated || A.labels.Font.Size > vg.Length(A.step)*A.spacing {
		t.Errorf("arc labels every %d of %v pt at %v pt (rotated %v): overlapping", A.step, A.spacing, A.labels.Font.Size, A.rotated)
	}
	t.Logf("heatmap labels every %d tokens; arcs %vx%v pt in %d columns", L.step, f.W, f.H, A.cols)
	var boxes []box
	for l := range g.Layers {
		for h := range g.Heads {
			s := A.strip(g, l, h)
			if s.x0 < 0 || s.y0 < A.top || s.x1 > f.W || s.y1 > f.H {
				t.Errorf("L%dH%d's strip %+v outside the %vx%v figure", l, h, s, f.W, f.H)
			}
			for _, o := range boxes {
				if s.x0 < o.x1 && o.x0 < s.x1 && s.y0 < o.y1 && o.y0 < s.y1 {
					t.Errorf("L%dH%d's strip %+v overlaps %+v", l, h, s, o)
				}
			}
			boxes = append(boxes, s)
		}
	}
}

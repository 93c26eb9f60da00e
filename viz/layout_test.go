package viz

import (
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestPanelGrid(t *testing.T) {
	g := PanelGrid[int]{Layers: 2, Heads: 3, T: 5, X0: 10, Y0: 20, Cell: 4, TitleH: 7,
		LabelW: 9, KeyH: 6, LabelGap: 2, GapX: 3, GapY: 5}
	if g.SlotW() != 9+2+20 || g.SlotH() != 7+20+2+6 {
		t.Fatalf("slot %dx%d", g.SlotW(), g.SlotH())
	}
	if x, y := g.Slot(1, 2); x != 10+2*(31+3) || y != 20+35+5 {
		t.Fatalf("Slot(1, 2) = %d, %d", x, y)
	}
	if g.Right() != 10+3*31+2*3 || g.Bottom() != 20+2*35+5 {
		t.Fatalf("Right %d, Bottom %d", g.Right(), g.Bottom())
	}
	for l := range g.Layers {
		for h := range g.Heads {
			for i := range g.T {
				for j := range g.T {
					x0, y0, x1, y1 := g.CellBox(l, h, i, j)
					for _, p := range [][2]int{{x0, y0}, {x1 - 1, y1 - 1}} {
						gl, gh, gi, gj, ok := g.CellAt(p[0], p[1])
						if !ok || gl != l || gh != h || gi != i || gj != j {
							t.Fatalf("CellAt(%v) = %d %d %d %d %v, want %d %d %d %d", p, gl, gh, gi, gj, ok, l, h, i, j)
						}
					}
				}
			}
		}
	}
	px0, py0, px1, py1 := g.Panel(0, 0)
	for _, p := range [][2]int{{px0 - 1, py0}, {px1, py0}, {px0, py0 - 1}, {px0, py1}, {g.Right(), py0}, {0, 0}} {
		if _, _, _, _, ok := g.CellAt(p[0], p[1]); ok {
			t.Errorf("CellAt(%v) is on a panel", p)
		}
	}
	if g.LabelStep(4) != 1 || g.LabelStep(5) != 2 || g.LabelStep(13) != 4 {
		t.Errorf("LabelStep(4, 5, 13) = %d, %d, %d", g.LabelStep(4), g.LabelStep(5), g.LabelStep(13))
	}

	// The heatmap figure's grid is one of these, in points.
	L := demoGrid().heatLayout()
	x0, y0, x1, y1 := L.grid.Panel(1, 1)
	if b := L.panel(1, 1); b != (box{x0, y0, x1, y1}) || x1-x0 != vg.Length(L.grid.T)*L.cell {
		t.Errorf("panel(1, 1) = %v, grid %v %v %v %v", b, x0, y0, x1, y1)
	}
}

// TestFitCell: the one cell rule, and the room that makes a grid fit.
func TestFitCell(t *testing.T) {
	for _, c := range []struct{ room, want vg.Length }{{200, 12.5}, {20, 2.5}, {400, 14}} {
		if got := FitCell(c.room, 16, 2.5, 14); got != c.want {
			t.Errorf("FitCell(%v, 16, 2.5, 14) = %v, want %v", c.room, got, c.want)
		}
	}
	if got := FitCell(100, 16, 2, 40); got != 6 {
		t.Errorf("FitCell(100, 16, 2, 40) = %d, want 6", got)
	}
	g := PanelGrid[int]{Layers: 2, Heads: 3, T: 5, X0: 10, Y0: 20, TitleH: 7,
		LabelW: 9, KeyH: 6, LabelGap: 2, GapX: 3, GapY: 5}
	for w := 60; w < 400; w += 7 {
		for h := 60; h < 400; h += 11 {
			g.Cell = g.PanelRoom(w, h) / g.T
			if g.Right()-g.X0 > w || g.Bottom()-g.Y0 > h {
				t.Fatalf("%dx%d: cell %d makes the grid %dx%d", w, h, g.Cell, g.Right()-g.X0, g.Bottom()-g.Y0)
			}
			g.Cell++
			if g.Right()-g.X0 <= w && g.Bottom()-g.Y0 <= h {
				t.Fatalf("%dx%d: cell %d fits too", w, h, g.Cell)
			}
		}
	}
	// The figure's cells follow the rule.
	if L := demoGrid().heatLayout(); L.cell != FitCell(hmTarget, demoGrid().T, hmMinCell, hmMaxCell) {
		t.Errorf("heatmap cell %v", L.cell)
	}
}

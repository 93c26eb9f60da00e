package viz

import "math"

// PanelGrid is the layout of a grid of attention panels, shared by the
// heatmap figure (in points) and the viewer window (in logical pixels), so
// that both place a grid the same way: Layers rows of Heads slots, each
// slot a title band above a T x T panel of square cells, a column of row
// (query) labels LabelW wide on the panel's left and a band of key labels
// KeyH tall under it, both LabelGap from the panel; slots are GapX apart
// across and GapY apart down, the first at (X0, Y0). Row i of a panel is
// query i, column j is key j.
//
// N is int for pixels or a float type (vg.Length) for points; the sums are
// taken in one fixed order, so a figure's coordinates do not depend on who
// asks.
type PanelGrid[N ~int | ~float64] struct {
	Layers, Heads, T int
	X0, Y0           N
	Cell             N // side of one cell
	TitleH           N // title band above a panel
	LabelW           N // row labels' column, left of a panel
	KeyH             N // key labels' band, under a panel
	LabelGap         N // between the panel and its labels
	GapX, GapY       N // between slots
}

// Side is a panel's side, T cells.
func (g PanelGrid[N]) Side() N { return N(g.T) * g.Cell }

// SlotW is the width of one slot: labels, gap and panel.
func (g PanelGrid[N]) SlotW() N { return g.LabelW + g.LabelGap + g.Side() }

// SlotH is the height of one slot: title, panel, gap and key labels.
func (g PanelGrid[N]) SlotH() N { return g.TitleH + g.Side() + g.LabelGap + g.KeyH }

// InGrid says whether (l, h) is a head of the grid.
func (g PanelGrid[N]) InGrid(l, h int) bool { return l >= 0 && l < g.Layers && h >= 0 && h < g.Heads }

// Slot is the top-left corner of head (l, h)'s slot, where its row labels'
// column and its title band start.
func (g PanelGrid[N]) Slot(l, h int) (x, y N) {
	return g.X0 + N(h)*(g.SlotW()+g.GapX), g.Y0 + N(l)*(g.SlotH()+g.GapY)
}

// Panel is head (l, h)'s T x T cells, corners (x0, y0) and (x1, y1).
func (g PanelGrid[N]) Panel(l, h int) (x0, y0, x1, y1 N) {
	x, y := g.Slot(l, h)
	x0, y0 = x+g.LabelW+g.LabelGap, y+g.TitleH
	return x0, y0, x0 + g.Side(), y0 + g.Side()
}

// CellBox is cell (query i, key j) of head (l, h).
func (g PanelGrid[N]) CellBox(l, h, i, j int) (x0, y0, x1, y1 N) {
	px, py, _, _ := g.Panel(l, h)
	x0, y0 = px+N(j)*g.Cell, py+N(i)*g.Cell
	return x0, y0, x0 + g.Cell, y0 + g.Cell
}

// CellAt is the inverse of CellBox: the head and cell under (x, y), or ok
// false when (x, y) is on no panel.
func (g PanelGrid[N]) CellAt(x, y N) (l, h, i, j int, ok bool) {
	qx, qy := x-g.X0, y-g.Y0
	if qx < 0 || qy < 0 || g.Cell <= 0 {
		return 0, 0, 0, 0, false
	}
	h, l = int(qx/(g.SlotW()+g.GapX)), int(qy/(g.SlotH()+g.GapY))
	if !g.InGrid(l, h) {
		return 0, 0, 0, 0, false
	}
	x0, y0, x1, y1 := g.Panel(l, h)
	if x < x0 || x >= x1 || y < y0 || y >= y1 {
		return 0, 0, 0, 0, false
	}
	return l, h, int((y - y0) / g.Cell), int((x - x0) / g.Cell), true
}

// FitCell is the one rule for the side of a cell: a T x T panel fills
// room, within [lo, hi]. The heatmap figure gives a panel about 200
// points; the window the room its grid has (PanelRoom) as it is resized,
// and about 352 pixels when it opens.
func FitCell[N ~int | ~float64](room N, T int, lo, hi N) N { return min(max(room/N(T), lo), hi) }

// PanelRoom is the largest panel side at which the grid's slots fit in w
// across and h down from (X0, Y0), whatever Cell is.
func (g PanelGrid[N]) PanelRoom(w, h N) N {
	byW := (w-N(g.Heads-1)*g.GapX)/N(g.Heads) - g.LabelW - g.LabelGap
	byH := (h-N(g.Layers-1)*g.GapY)/N(g.Layers) - g.TitleH - g.LabelGap - g.KeyH
	return min(byW, byH)
}

// Right is the x just right of the last column of slots.
func (g PanelGrid[N]) Right() N { return g.X0 + N(g.Heads)*g.SlotW() + N(g.Heads-1)*g.GapX }

// Bottom is the y just below the last row of slots.
func (g PanelGrid[N]) Bottom() N { return g.Y0 + N(g.Layers)*g.SlotH() + N(g.Layers-1)*g.GapY }

// LabelStep is how many rows or columns apart labels extent long are
// drawn so that neighbours do not overlap: every one when a cell holds
// one, every other when it takes two cells, and so on.
func (g PanelGrid[N]) LabelStep(extent N) int {
	if g.Cell <= 0 {
		return 1
	}
	return max(1, int(math.Ceil(float64(extent)/float64(g.Cell))))
}

package viz

import (
	"image"
	"image/color"
	"math"
)

// DrawHeatmaps draws one heatmap per head in a Layers x Heads grid (rows =
// layers, columns = heads). Cell (i, j) of a panel is query i, key j,
// coloured Viridis(weight); with g.Causal, cells j > i are pure black.
// Each panel has its title above, query labels on the left and key labels
// (rotated) below; one colour bar on the right shows the 0..1 scale. The
// geometry is given by HeatmapsSize, PanelRect, CellRect and ColorBarRect.
func DrawHeatmaps(g Grid) (*image.RGBA, error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	L := g.heatLayout()
	if err := checkSize("heatmap", L.size); err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rectangle{Max: L.size})
	fillRect(img, img.Rect, background)
	drawText(img, margin, margin, g.heatmapNote(), mutedText, false)

	labels := make([][]rune, g.T)
	for i, t := range g.Tokens {
		labels[i] = fitRunes(tokenRunes(t), hmLabelMax)
	}
	for l := 0; l < g.Layers; l++ {
		for h := 0; h < g.Heads; h++ {
			drawPanel(img, g, L, l, h, labels)
		}
	}
	drawColorBar(img, L)
	return img, nil
}

func drawPanel(img *image.RGBA, g Grid, L heatLayout, l, h int, labels [][]rune) {
	p := L.panel(l, h)
	s := L.slot(l, h)
	probs := g.Panels[l*g.Heads+h].Probs

	// Title: centred over the heatmap, shifted to stay inside the slot.
	title := fitRunes(displayRunes(g.Panels[l*g.Heads+h].Title), L.slotW-2)
	tw := textW(title)
	tx := p.Min.X + (L.hm-tw)/2
	tx = max(s.X, min(tx, s.X+L.slotW-tw-1))
	drawText(img, tx, s.Y+(titleBandH-lineH)/2-1, title, textColor, true)

	for i := 0; i < g.T; i++ {
		for j := 0; j < g.T; j++ {
			c := cellColor(g.Causal, i, j, probs[i*g.T+j])
			x0, y0 := p.Min.X+j*L.cell, p.Min.Y+i*L.cell
			fillRect(img, image.Rect(x0, y0, x0+L.cell, y0+L.cell), c)
		}
	}
	strokeRect(img, p, frameColor)

	// Labels sit centred on their row/column; with small cells only every
	// step-th one is drawn.
	for i := 0; i < g.T; i += L.step {
		rs := labels[i]
		mid := p.Min.Y + i*L.cell + L.cell/2
		drawText(img, p.Min.X-labelGap-1-textW(rs), mid-lineH/2, rs, mutedText, false)
	}
	for j := 0; j < g.T; j += L.step {
		mid := p.Min.X + j*L.cell + L.cell/2
		drawTextDown(img, mid-lineH/2, p.Max.Y+labelGap+1, labels[j], mutedText)
	}
}

// cellColor is the colour of heatmap cell (i, j) holding weight w.
func cellColor(causal bool, i, j int, w float32) color.RGBA {
	if causal && j > i {
		return maskedCell
	}
	if x := float64(w); math.IsNaN(x) || math.IsInf(x, 0) {
		return badCell
	}
	return Viridis(float64(w))
}

// drawColorBar draws the legend: a vertical viridis gradient (1 at the top)
// with ticks and labels at 0, 0.5 and 1.
func drawColorBar(img *image.RGBA, L heatLayout) {
	b := L.bar
	n := b.Dy() - 1
	for y := b.Min.Y; y < b.Max.Y; y++ {
		v := 1 - float64(y-b.Min.Y)/float64(n)
		fillRect(img, image.Rect(b.Min.X, y, b.Max.X, y+1), Viridis(v))
	}
	strokeRect(img, b, frameColor)
	caption := displayRunes(barCaption)
	drawText(img, b.Min.X+(barW-textW(caption))/2, b.Min.Y-titleBandH+(titleBandH-lineH)/2-1, caption, textColor, false)
	for _, t := range []struct {
		v    float64
		text string
	}{{1, "1"}, {0.5, "0.5"}, {0, "0"}} {
		y := b.Min.Y + int(math.Round((1-t.v)*float64(n)))
		fillRect(img, image.Rect(b.Max.X+1, y, b.Max.X+1+tickLen, y+1), frameColor)
		drawText(img, b.Max.X+tickLen+3, y-lineH/2, displayRunes(t.text), mutedText, false)
	}
}

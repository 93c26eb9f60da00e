package viz

import (
	"image/color"
	"math"
	"sync"
)

// Viridis maps x in [0,1] to the viridis colour map (perceptually uniform,
// dark purple at 0 to yellow at 1). x is clamped to [0,1]; NaN maps to 0.
// Between the 256 published control points the sRGB components are
// interpolated linearly, so Viridis(k/255) is exactly control point k.
func Viridis(x float64) color.RGBA {
	if !(x > 0) { // also catches NaN
		x = 0
	}
	if x > 1 {
		x = 1
	}
	p := x * 255
	i := int(p)
	if i >= 255 {
		i = 254
	}
	f := p - float64(i)
	a, b := viridisTable[i], viridisTable[i+1]
	ch := func(k int) uint8 {
		// The conversion keeps the product rounded on its own (no fused
		// multiply-add), so every CPU gives the same colour.
		v := (a[k] + float64((b[k]-a[k])*f)) * 255
		return uint8(math.Round(v))
	}
	return color.RGBA{ch(0), ch(1), ch(2), 255}
}

// ColorSteps is a colour map tabulated exactly over float32 weights: the
// colour of w is Colors[k] for the last k with Edges[k] <= w, and
// Colors[0] below Edges[1] (and for NaN). Edges rise from Edges[0] = 0.
// A shader that searches the table as At does gives a figure's colours
// exactly, by comparisons alone: no arithmetic that a GPU might round
// otherwise.
type ColorSteps struct {
	Edges  []float32
	Colors []color.RGBA
}

// At is the colour of w: a binary search, the loop the viewer's shader runs.
func (s ColorSteps) At(w float32) color.RGBA { return s.Colors[s.Index(w)] }

// Index is the k of At's colour Colors[k].
func (s ColorSteps) Index(w float32) int {
	lo, hi := 0, len(s.Edges)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if s.Edges[mid] <= w {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// ViridisSteps is Viridis as ColorSteps: ViridisSteps().At(w) ==
// Viridis(float64(w)) for every float32 w. The heatmap cells of the
// figures and of the viewer window are coloured by it. The table is
// shared: read it, do not change it.
func ViridisSteps() ColorSteps { return viridisSteps() }

var viridisSteps = sync.OnceValue(func() ColorSteps {
	// Between consecutive control points each channel of Viridis is a
	// monotone function of w (exact products, then rounding), so a range
	// of weights within one interval whose two ends have the same colour
	// has that colour throughout; bisecting the float32 bit patterns
	// (ordered as the weights are, for w >= 0) finds every change.
	at := func(b uint32) color.RGBA { return Viridis(float64(math.Float32frombits(b))) }
	interval := func(b uint32) int { return min(int(float64(math.Float32frombits(b))*255), 254) }
	s := ColorSteps{Edges: []float32{0}, Colors: []color.RGBA{at(0)}}
	var find func(lo, hi uint32, clo, chi color.RGBA)
	find = func(lo, hi uint32, clo, chi color.RGBA) {
		switch {
		case clo == chi && interval(lo) == interval(hi):
		case hi == lo+1:
			if clo != chi {
				s.Edges, s.Colors = append(s.Edges, math.Float32frombits(hi)), append(s.Colors, chi)
			}
		default:
			mid := lo + (hi-lo)/2
			cm := at(mid)
			find(lo, mid, clo, cm)
			find(mid, hi, cm, chi)
		}
	}
	one := math.Float32bits(1)
	find(0, one, at(0), at(one))
	return s
})

// palette gives each head its own colour in the arc view and the curves (Tableau 10,
// readable on white, distinguishable for most colour-blind readers).
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 255}, {0xff, 0x7f, 0x0e, 255}, {0x2c, 0xa0, 0x2c, 255},
	{0xd6, 0x27, 0x28, 255}, {0x94, 0x67, 0xbd, 255}, {0x8c, 0x56, 0x4b, 255},
	{0xe3, 0x77, 0xc2, 255}, {0x7f, 0x7f, 0x7f, 255}, {0xbc, 0xbd, 0x22, 255},
	{0x17, 0xbe, 0xcf, 255},
}

// Colours shared by the figures.
var (
	background = color.RGBA{255, 255, 255, 255}
	textColor  = color.RGBA{0x22, 0x22, 0x22, 255}
	mutedText  = color.RGBA{0x55, 0x55, 0x55, 255}
	frameColor = color.RGBA{0x99, 0x99, 0x99, 255}
	stripFrame = color.RGBA{0xdd, 0xdd, 0xdd, 255}
)

// The heatmap cell rule, shared by the figures (CellColor) and the
// viewer's fragment shader (which takes these colours and ViridisSteps
// from here): a masked cell is MaskedCell, a NaN or infinite weight
// BadCell (so an upstream bug shows up instead of looking like weight 0),
// any other weight its viridis colour, clamped to [0,1].
var (
	MaskedCell = color.RGBA{0, 0, 0, 255}
	BadCell    = color.RGBA{0xff, 0x00, 0xff, 255}
)

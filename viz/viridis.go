package viz

import (
	"image/color"
	"math"
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
		v := (a[k] + (b[k]-a[k])*f) * 255
		return uint8(math.Round(v))
	}
	return color.RGBA{ch(0), ch(1), ch(2), 255}
}

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

// The heatmap cell rule, shared by the figures (cellColor) and the
// viewer's fragment shader (which takes these colours from here): a
// masked cell is MaskedCell, a NaN or infinite weight BadCell (so an
// upstream bug shows up instead of looking like weight 0), any other
// weight its viridis colour, clamped to [0,1].
var (
	MaskedCell = color.RGBA{0, 0, 0, 255}
	BadCell    = color.RGBA{0xff, 0x00, 0xff, 255}
)

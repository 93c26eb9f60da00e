package window

import (
	"image"
	"image/color"
)

// vertex is one corner of a UI quad: position in framebuffer pixels, atlas
// texel coordinates, colour (the atlas texel is its coverage).
type vertex struct {
	x, y, u, v float32
	c          [4]uint8
}

const vertexSize = 20

// batch collects UI quads in logical pixels and emits them scaled to
// framebuffer pixels.
type batch struct {
	verts []vertex
	s     float32 // framebuffer pixels per logical pixel
}

// quad adds a rectangle (logical pixels) textured with atlas texels
// (u0, v0)-(u1, v1), as two triangles.
func (b *batch) quad(x0, y0, x1, y1, u0, v0, u1, v1 float32, c color.RGBA) {
	if c.A == 0 || x1 <= x0 || y1 <= y0 {
		return
	}
	s := b.s
	col := [4]uint8{c.R, c.G, c.B, c.A}
	a := vertex{x0 * s, y0 * s, u0, v0, col}
	bb := vertex{x1 * s, y0 * s, u1, v0, col}
	cc := vertex{x0 * s, y1 * s, u0, v1, col}
	d := vertex{x1 * s, y1 * s, u1, v1, col}
	b.verts = append(b.verts, a, bb, cc, bb, d, cc)
}

// fillF adds a solid rectangle with fractional corners.
func (b *batch) fillF(x0, y0, x1, y1 float32, c color.RGBA) {
	const u, v = solidX + 2, 2 // the middle of the solid block
	b.quad(x0, y0, x1, y1, u, v, u, v, c)
}

// fill adds a solid rectangle.
func (b *batch) fill(r image.Rectangle, c color.RGBA) {
	b.fillF(float32(r.Min.X), float32(r.Min.Y), float32(r.Max.X), float32(r.Max.Y), c)
}

// stroke adds a one-pixel frame just outside r.
func (b *batch) stroke(r image.Rectangle, c color.RGBA) {
	o := r.Inset(-1)
	b.fill(image.Rect(o.Min.X, o.Min.Y, o.Max.X, r.Min.Y), c)
	b.fill(image.Rect(o.Min.X, r.Max.Y, o.Max.X, o.Max.Y), c)
	b.fill(image.Rect(o.Min.X, r.Min.Y, r.Min.X, r.Max.Y), c)
	b.fill(image.Rect(r.Max.X, r.Min.Y, o.Max.X, r.Max.Y), c)
}

// text adds s with its glyph cells' top-left corner at (x, y) and returns
// its width.
func (b *batch) text(x, y int, s string, c color.RGBA) int {
	fx, fy := float32(x), float32(y)
	n := 0
	for _, r := range s {
		if r != ' ' {
			gx := float32(glyphX(r))
			b.quad(fx, fy, fx+glyphW, fy+lineH, gx, 0, gx+glyphW, lineH, c)
		}
		fx += glyphW
		n++
	}
	return n * glyphW
}

// textRight adds s ending at x.
func (b *batch) textRight(x, y int, s string, c color.RGBA) {
	b.text(x-textW(s), y, s, c)
}

// offSprite adds the ⊘ sprite with its top-left corner at (x, y).
func (b *batch) offSprite(x, y int, c color.RGBA) {
	fx, fy := float32(x), float32(y)
	const u = offSpriteX
	b.quad(fx, fy, fx+offSpriteW, fy+offSpriteW, u, 0, u+offSpriteW, offSpriteW, c)
}

// Colours of the dark theme: the masked triangle is pure black and must
// stand apart from the background.
var (
	colBackground = color.RGBA{30, 32, 38, 255}
	colText       = color.RGBA{232, 232, 236, 255}
	colMuted      = color.RGBA{150, 153, 164, 255}
	colFaint      = color.RGBA{95, 98, 110, 255}
	colFrame      = color.RGBA{100, 104, 118, 255}
	colButton     = color.RGBA{52, 56, 68, 255}
	colButtonOn   = color.RGBA{60, 104, 168, 255}
	colOff        = color.RGBA{214, 58, 58, 255}
	colError      = color.RGBA{255, 120, 110, 255}
	colLoss       = color.RGBA{255, 150, 90, 255}
	colAcc        = color.RGBA{110, 200, 255, 255}
	colCurveBg    = color.RGBA{22, 23, 28, 255}
	colTip        = color.RGBA{12, 12, 16, 240}
	colHover      = color.RGBA{255, 255, 255, 255}
)

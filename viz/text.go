package viz

import (
	"image"
	"image/color"
	"image/draw"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Text uses the 7x13 bitmap font from x/image/font/basicfont. The scalable
// Go fonts need x/image/font/sfnt, which pulls in golang.org/x/text, a
// module this project does not require; the bitmap font is crisp at label
// size and, being monospace, makes every text width (and so the layout) a
// pure function of the rune count.
const (
	glyphW  = 7  // advance of every glyph
	lineH   = 13 // glyph cell height
	ascentH = 11 // baseline offset from the top of the cell
)

// Runes the font lacks but that titles commonly use; they are drawn by
// hand (drawSpecial) so that "L1 H0 · induction" renders as intended.
const (
	runeMiddleDot = '\u00b7'
	runeEllipsis  = '\u2026'
)

// displayRunes turns s into the runes actually drawn: printable ASCII as is,
// the two hand-drawn runes, visible escapes for tab and newline (tokens are
// often whitespace), and '?' for anything else the font cannot show.
func displayRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 0x20 && r < 0x7f, r == runeMiddleDot, r == runeEllipsis:
			out = append(out, r)
		case r == '\u2022': // bullet reads like a middle dot
			out = append(out, runeMiddleDot)
		case r == '\n':
			out = append(out, '\\', 'n')
		case r == '\t':
			out = append(out, '\\', 't')
		case r == '\u2581' || r == '\u0120': // SentencePiece / GPT-2 space markers
			out = append(out, '_')
		default:
			out = append(out, '?')
		}
	}
	return out
}

// tokenRunes is displayRunes for an axis label: a token that is only
// spaces would be invisible, so its spaces become underscores.
func tokenRunes(s string) []rune {
	rs := displayRunes(s)
	if len(rs) > 0 && strings.TrimSpace(string(rs)) == "" {
		for i := range rs {
			rs[i] = '_'
		}
	}
	return rs
}

// fitRunes truncates rs to at most maxW pixels, ending in an ellipsis
// when something was cut.
func fitRunes(rs []rune, maxW int) []rune {
	n := maxW / glyphW
	if len(rs) <= n {
		return rs
	}
	if n <= 0 {
		return nil
	}
	out := append([]rune(nil), rs[:n-1]...)
	return append(out, runeEllipsis)
}

func textW(rs []rune) int { return len(rs) * glyphW }

// textMask renders rs as an alpha mask of size textW(rs) x lineH.
func textMask(rs []rune) *image.Alpha {
	m := image.NewAlpha(image.Rect(0, 0, max(textW(rs), 1), lineH))
	d := font.Drawer{Dst: m, Src: image.Opaque, Face: basicfont.Face7x13}
	for k, r := range rs {
		x := k * glyphW
		if r == runeMiddleDot || r == runeEllipsis {
			drawSpecial(m, x, r)
			continue
		}
		d.Dot = fixed.P(x, ascentH)
		d.DrawString(string(r))
	}
	return m
}

// drawSpecial draws the runes basicfont lacks into the glyph cell at x.
func drawSpecial(m *image.Alpha, x int, r rune) {
	on := color.Alpha{255}
	switch r {
	case runeMiddleDot: // 2x2 dot at mid x-height
		for dy := 0; dy < 2; dy++ {
			for dx := 0; dx < 2; dx++ {
				m.SetAlpha(x+3+dx, 6+dy, on)
			}
		}
	case runeEllipsis: // three dots on the baseline, packed into one cell
		for _, dx := range []int{0, 3, 6} {
			m.SetAlpha(x+dx, ascentH-1, on)
		}
	}
}

// blend composites col with coverage a (0..1) over dst at (x, y), clipping.
func blend(dst *image.RGBA, x, y int, col color.RGBA, a float64) {
	if a <= 0 || !(image.Point{x, y}.In(dst.Rect)) {
		return
	}
	if a > 1 {
		a = 1
	}
	i := dst.PixOffset(x, y)
	p := dst.Pix[i : i+4 : i+4]
	p[0] = uint8(float64(p[0])*(1-a) + float64(col.R)*a + 0.5)
	p[1] = uint8(float64(p[1])*(1-a) + float64(col.G)*a + 0.5)
	p[2] = uint8(float64(p[2])*(1-a) + float64(col.B)*a + 0.5)
	p[3] = 255
}

// drawText draws rs with its top-left corner at (x, y). bold draws it a
// second time one pixel to the right, a faux bold that keeps the
// monospace layout (the advance is unchanged).
func drawText(dst *image.RGBA, x, y int, rs []rune, col color.RGBA, bold bool) {
	m := textMask(rs)
	src := image.NewUniform(col)
	r := image.Rect(x, y, x+m.Rect.Dx(), y+m.Rect.Dy())
	draw.DrawMask(dst, r, src, image.Point{}, m, image.Point{}, draw.Over)
	if bold {
		draw.DrawMask(dst, r.Add(image.Pt(1, 0)), src, image.Point{}, m, image.Point{}, draw.Over)
	}
}

// drawTextDown draws rs rotated 90 degrees clockwise (reading top to
// bottom) with the start of the text at the top; the box it covers is
// lineH wide and textW(rs) tall, top-left at (x, y). Used for the key
// labels under a heatmap, which are too many to fit side by side.
func drawTextDown(dst *image.RGBA, x, y int, rs []rune, col color.RGBA) {
	m := textMask(rs)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	for ty := 0; ty < h; ty++ {
		for tx := 0; tx < w; tx++ {
			a := m.AlphaAt(tx, ty).A
			if a == 0 {
				continue
			}
			// Clockwise: the text's top edge faces right.
			blend(dst, x+(h-1-ty), y+tx, col, float64(a)/255)
		}
	}
}

// fillRect fills r (clipped to dst) with c.
func fillRect(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(dst, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// strokeRect draws a 1-pixel outline just outside r.
func strokeRect(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	o := r.Inset(-1)
	fillRect(dst, image.Rect(o.Min.X, o.Min.Y, o.Max.X, r.Min.Y), c)
	fillRect(dst, image.Rect(o.Min.X, r.Max.Y, o.Max.X, o.Max.Y), c)
	fillRect(dst, image.Rect(o.Min.X, r.Min.Y, r.Min.X, r.Max.Y), c)
	fillRect(dst, image.Rect(r.Max.X, r.Min.Y, o.Max.X, r.Max.Y), c)
}

package viz

import (
	"image"
	"image/color"

	"golang.org/x/image/font/basicfont"
)

// Text handling shared by the figures (Liberation Sans, in points) and the
// viewer window (its bitmap font, in pixels): the runes both draw beyond
// ASCII, how a head's title reads, and how text too long for its room is
// cut.

// Runes beyond ASCII in headlab's labels; the window's glyph atlas draws
// these too.
const (
	MidDot   = '\u00b7' // between a head's name and its verdict
	Ellipsis = '\u2026' // ends a cut string
)

// HeadTitle is a head's panel title, "L1H0 · induction 0.81", from its
// name and its verdict.
func HeadTitle(name, verdict string) string {
	return name + " " + string(MidDot) + " " + verdict
}

// Fit cuts s to at most w wide, as width measures it, ending in an
// ellipsis when cut; "" when not even one rune and the ellipsis fit.
func Fit[N ~int | ~float64](s string, w N, width func(string) N) string {
	if width(s) <= w {
		return s
	}
	rs := []rune(s)
	for n := len(rs) - 1; n > 0; n-- {
		if t := string(rs[:n]) + string(Ellipsis); width(t) <= w {
			return t
		}
	}
	return ""
}

// ScreenFace is the bitmap face of text on screen, the viewer window's:
// basicfont's 7x13 (printable ASCII, 7 pixels apart, 13 a line, ascent
// 11) with MidDot and Ellipsis added, drawn for it. Every rune it lacks
// shows as U+FFFD.
var ScreenFace = screenFace()

func screenFace() *basicfont.Face {
	base := basicfont.Face7x13
	src := base.Mask.(*image.Alpha)
	cellH := base.Ascent + base.Descent
	n := src.Rect.Dy() / cellH // glyphs in base's mask
	w := base.Advance          // one column more than base's glyphs, for the ellipsis
	m := image.NewAlpha(image.Rect(0, 0, w, (n+2)*cellH))
	for y := range src.Rect.Dy() {
		copy(m.Pix[y*m.Stride:], src.Pix[y*src.Stride:y*src.Stride+src.Rect.Dx()])
	}
	on := color.Alpha{255}
	mid, ell := n*cellH, (n+1)*cellH
	for dy := range 2 { // middle dot: 2x2 at mid x-height
		for dx := range 2 {
			m.SetAlpha(3+dx, mid+6+dy, on)
		}
	}
	for _, dx := range []int{0, 3, 6} { // ellipsis: three dots on the baseline
		m.SetAlpha(dx, ell+base.Ascent-1, on)
	}
	f := *base
	f.Width, f.Mask = w, m
	f.Ranges = append([]basicfont.Range{base.Ranges[0], // ASCII, then U+FFFD: in rune order
		{Low: MidDot, High: MidDot + 1, Offset: n},
		{Low: Ellipsis, High: Ellipsis + 1, Offset: n + 1}},
		base.Ranges[1:]...)
	return &f
}

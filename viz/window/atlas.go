package window

import (
	"image"
	"image/color"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"

	"headlab/viz"
)

// The glyph atlas: one R8 texture holding the glyphs of viz.ScreenFace
// side by side (printable ASCII, then viz.MidDot and viz.Ellipsis), a
// solid block (rectangles sample it) and the ⊘ sprite. Every UI element
// is a textured quad over this one texture, so a frame is one draw call
// for the UI.
const (
	atlasW     = 1024
	atlasH     = 16
	asciiFirst = 0x20
	asciiLast  = 0x7e
	specialX   = (asciiLast - asciiFirst + 1) * glyphW // first glyph beyond ASCII
	middleDotX = specialX
	ellipsisX  = specialX + glyphW
	solidX     = specialX + 2*glyphW // 4x4 block of full coverage
	offSpriteX = solidX + 8
	offSpriteW = 13
	ascent     = 11       // viz.ScreenFace's
	runeOff    = '\u2298' // ⊘, drawn as the sprite
)

// buildAtlas rasterises the atlas as 8-bit coverage.
func buildAtlas() *image.Alpha {
	m := image.NewAlpha(image.Rect(0, 0, atlasW, atlasH))
	d := font.Drawer{Dst: m, Src: image.Opaque, Face: viz.ScreenFace}
	for r := rune(asciiFirst); r <= asciiLast; r++ {
		d.Dot = fixed.P(glyphX(r), ascent)
		d.DrawString(string(r))
	}
	for _, r := range []rune{viz.MidDot, viz.Ellipsis} {
		d.Dot = fixed.P(glyphX(r), ascent)
		d.DrawString(string(r))
	}
	on := color.Alpha{255}
	for y := range 4 {
		for x := range 4 {
			m.SetAlpha(solidX+x, y, on)
		}
	}
	drawOffSprite(m, offSpriteX)
	return m
}

// drawOffSprite draws ⊘ (a ring crossed by a slash from lower left to
// upper right) into a 13x13 cell at x, with 4x4 supersampled coverage.
func drawOffSprite(m *image.Alpha, x0 int) {
	const c, r, w = 6.5, 5.2, 0.8 // centre, ring radius, half line width
	for y := range offSpriteW {
		for x := range offSpriteW {
			hits := 0
			for sy := range 4 {
				for sx := range 4 {
					px, py := float64(x)+(float64(sx)+0.5)/4, float64(y)+(float64(sy)+0.5)/4
					dx, dy := px-c, py-c
					d := math.Hypot(dx, dy)
					ring := math.Abs(d-r) <= w
					slash := d <= r && math.Abs(dx+dy)/math.Sqrt2 <= w
					if ring || slash {
						hits++
					}
				}
			}
			m.SetAlpha(x0+x, y, color.Alpha{uint8(hits * 255 / 16)})
		}
	}
}

// glyphX is where rune r's glyph starts in the atlas; runes the font
// lacks show as '?'.
func glyphX(r rune) int {
	switch {
	case r >= asciiFirst && r <= asciiLast:
		return int(r-asciiFirst) * glyphW
	case r == viz.MidDot:
		return middleDotX
	case r == viz.Ellipsis:
		return ellipsisX
	}
	return int('?'-asciiFirst) * glyphW
}

// textW is the width of s in logical pixels.
func textW(s string) int { return font.MeasureString(viz.ScreenFace, s).Ceil() }

// fit cuts s to at most w pixels, ending in an ellipsis when cut.
func fit(s string, w int) string { return viz.Fit(s, w, textW) }

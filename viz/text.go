package viz

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

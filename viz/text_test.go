package viz

import (
	"testing"
	"unicode/utf8"
)

func TestFitAndHeadTitle(t *testing.T) {
	mono := func(s string) int { return 7 * utf8.RuneCountInString(s) }
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"induction", 63, "induction"},
		{"induction", 62, "inducti…"},
		{"induction", 14, "i…"},
		{"induction", 13, ""},
		{"", 0, ""},
	} {
		if got := Fit(c.s, c.w, mono); got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
	sty := style(sans, 8, textColor)
	if s := fit(sty, "a long title that does not fit", 40); sty.Width(s) > 40 || s == "" || []rune(s)[len([]rune(s))-1] != Ellipsis {
		t.Errorf("fit in Liberation Sans: %q, %v wide", s, sty.Width(s))
	}
	if got := HeadTitle("L1H0", "induction 0.81"); got != "L1H0 · induction 0.81" {
		t.Errorf("HeadTitle: %q", got)
	}
}

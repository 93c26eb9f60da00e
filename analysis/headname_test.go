package analysis

import (
	"slices"
	"testing"
)

func TestHeadName(t *testing.T) {
	for _, c := range []struct {
		l, h int
		want string
	}{
		{0, 0, "L0H0"},
		{1, 0, "L1H0"},
		{0, 1, "L0H1"},
		{3, 12, "L3H12"},
		{10, 7, "L10H7"},
	} {
		if got := HeadName(c.l, c.h); got != c.want {
			t.Errorf("HeadName(%d, %d) = %q, want %q", c.l, c.h, got, c.want)
		}
		l, h, err := ParseHead(c.want)
		if err != nil || l != c.l || h != c.h {
			t.Errorf("ParseHead(%q) = %d, %d, %v; want %d, %d", c.want, l, h, err, c.l, c.h)
		}
	}
	// Every head of a 12 x 12 model reads back as itself.
	for l := range 12 {
		for h := range 12 {
			if gl, gh, err := ParseHead(HeadName(l, h)); err != nil || gl != l || gh != h {
				t.Fatalf("ParseHead(HeadName(%d, %d)) = %d, %d, %v", l, h, gl, gh, err)
			}
		}
	}
}

func TestParseHead(t *testing.T) {
	for _, c := range []struct {
		in   string
		l, h int
		err  string
	}{
		{in: "L1H0", l: 1, h: 0},
		{in: "l1h0", l: 1, h: 0},
		{in: "L1h0", l: 1, h: 0},
		{in: "L01H002", l: 1, h: 2},
		{in: "L99999999999999999999H0", l: int(^uint(0) >> 1), h: 0},
		{in: "", err: `head "": want names like L0H1`},
		{in: " L1H0", err: `head " L1H0": want names like L0H1`},
		{in: "L1 H0", err: `head "L1 H0": want names like L0H1`},
		{in: "L-1H0", err: `head "L-1H0": want names like L0H1`},
		{in: "L+1H0", err: `head "L+1H0": want names like L0H1`},
		{in: "L0H", err: `head "L0H": want names like L0H1`},
		{in: "LH0", err: `head "LH0": want names like L0H1`},
		{in: "H0L1", err: `head "H0L1": want names like L0H1`},
		{in: "L1H0x", err: `head "L1H0x": want names like L0H1`},
		{in: "head1", err: `head "head1": want names like L0H1`},
		{in: "L١H0", err: `head "L١H0": want names like L0H1`},
		{in: "L0H0,L1H1", err: `head "L0H0,L1H1": want names like L0H1`},
	} {
		l, h, err := ParseHead(c.in)
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseHead(%q): error %v, want %q", c.in, err, c.err)
			}
		case err != nil || l != c.l || h != c.h:
			t.Errorf("ParseHead(%q) = %d, %d, %v; want %d, %d", c.in, l, h, err, c.l, c.h)
		}
	}
}

func TestParseHeads(t *testing.T) {
	const layers, heads = 2, 3
	for _, c := range []struct {
		in    string
		names []string // the heads switched off, as HeadNames lists them
		err   string
	}{
		{in: "", names: []string{}},
		{in: " , ,", names: []string{}},
		{in: "L0H2, l1h0", names: []string{"L0H2", "L1H0"}},
		{in: "L1H2,L0H0,L1H2", names: []string{"L0H0", "L1H2"}},
		{in: "\tL1H1 ,,L0H1\n", names: []string{"L0H1", "L1H1"}},
		{in: "L2H0", err: "head L2H0 does not exist: the model has 2 layers of 3 heads"},
		{in: "L0H0, l0h3", err: "head l0h3 does not exist: the model has 2 layers of 3 heads"},
		{in: "L99999999999999999999H0", err: "head L99999999999999999999H0 does not exist: the model has 2 layers of 3 heads"},
		{in: "L0H0,head1", err: `head "head1": want names like L0H1`},
		{in: "L0H0;L1H1", err: `head "L0H0;L1H1": want names like L0H1`},
		{in: "L0H", err: `head "L0H": want names like L0H1`},
		{in: "L-1H0", err: `head "L-1H0": want names like L0H1`},
		{in: "L1 H0", err: `head "L1 H0": want names like L0H1`},
	} {
		off, err := ParseHeads(c.in, layers, heads)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseHeads(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseHeads(%q): %v", c.in, err)
			continue
		}
		if len(off) != layers || len(off[0]) != heads || len(off[1]) != heads {
			t.Errorf("ParseHeads(%q): mask of shape %d x %d", c.in, len(off), len(off[0]))
		}
		if got := HeadNames(off); !slices.Equal(got, c.names) || got == nil {
			t.Errorf("ParseHeads(%q) switches off %#v, want %#v", c.in, got, c.names)
		}
	}
}

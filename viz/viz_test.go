package viz

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// makeGrid builds a grid whose weight for panel k, query i, key j is
// f(k, i, j).
func makeGrid(layers, heads, T int, causal bool, f func(k, i, j int) float32) Grid {
	g := Grid{Layers: layers, Heads: heads, T: T, Causal: causal}
	for i := 0; i < T; i++ {
		g.Tokens = append(g.Tokens, fmt.Sprintf("t%d", i))
	}
	for k := 0; k < layers*heads; k++ {
		p := make([]float32, T*T)
		for i := 0; i < T; i++ {
			for j := 0; j < T; j++ {
				p[i*T+j] = f(k, i, j)
			}
		}
		g.Panels = append(g.Panels, Head{Title: fmt.Sprintf("L%d H%d · test", k/heads, k%heads), Probs: p})
	}
	return g
}

func uniformCausal(_, i, j int) float32 {
	if j > i {
		return 0
	}
	return 1 / float32(i+1)
}

// demoGrid is a 2x2, T=16 grid with the classic patterns: previous-token,
// attention sink, induction and a diffuse head.
func demoGrid() Grid {
	toks := strings.Fields("<bos> the cat sat on the mat . the cat sat on the mat . <eos>")
	T := len(toks)
	prev := func(i, j int) float32 {
		switch {
		case i == 0:
			return b2f(j == 0)
		case j == i-1:
			return 0.85
		case j == i:
			return 0.15
		}
		return 0
	}
	sink := func(i, j int) float32 {
		if j > i {
			return 0
		}
		if j == 0 {
			return 0.6 + 0.4/float32(i+1)
		}
		return 0.4 / float32(i+1)
	}
	induction := func(i, j int) float32 {
		// The sentence repeats with period 7, so in the second copy
		// (8 <= i < 15) the token after the earlier occurrence of token i
		// is key i-6.
		if i >= 8 && i < 15 {
			switch j {
			case i - 6:
				return 0.81
			case 0:
				return 0.19
			}
			return 0
		}
		return b2f(j == 0)
	}
	fns := []func(i, j int) float32{prev, sink, induction, func(i, j int) float32 { return uniformCausal(0, i, j) }}
	titles := []string{"L0 H0 · prev-token 0.85", "L0 H1 · sink 0.71", "L1 H0 · induction 0.81", "L1 H1 · diffuse"}
	g := Grid{Layers: 2, Heads: 2, T: T, Causal: true, Tokens: toks}
	for k, f := range fns {
		p := make([]float32, T*T)
		for i := 0; i < T; i++ {
			for j := 0; j < T; j++ {
				p[i*T+j] = f(i, j)
			}
		}
		g.Panels = append(g.Panels, Head{Title: titles[k], Probs: p})
	}
	return g
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func centre(r image.Rectangle) image.Point {
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
}

func near(a, b color.RGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// countInk counts pixels in r that differ from the background.
func countInk(img *image.RGBA, r image.Rectangle) int {
	n := 0
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.RGBAAt(x, y) != background {
				n++
			}
		}
	}
	return n
}

func mustDraw(t *testing.T, draw func(Grid) (*image.RGBA, error), g Grid) *image.RGBA {
	t.Helper()
	img, err := draw(g)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestHeatmapLayout(t *testing.T) {
	long := makeGrid(3, 5, 64, false, uniformCausal)
	for i := range long.Tokens {
		long.Tokens[i] = strings.Repeat("w", i%20)
	}
	long.Panels[7].Title = strings.Repeat("a very long title ", 10)
	grids := map[string]Grid{
		"1x1 T1":  makeGrid(1, 1, 1, true, uniformCausal),
		"2x2 T16": demoGrid(),
		"1x3 T4":  makeGrid(1, 3, 4, true, uniformCausal),
		"3x5 T64": long,
	}
	for name, g := range grids {
		t.Run(name, func(t *testing.T) {
			img := mustDraw(t, DrawHeatmaps, g)
			if got, want := img.Bounds(), (image.Rectangle{Max: g.HeatmapsSize()}); got != want {
				t.Fatalf("image bounds %v, layout says %v", got, want)
			}
			var rects []image.Rectangle
			for l := 0; l < g.Layers; l++ {
				for h := 0; h < g.Heads; h++ {
					r := g.PanelRect(l, h)
					if r.Empty() || r.Dx() != r.Dy() || r.Dx()%g.T != 0 || !r.In(img.Bounds()) {
						t.Fatalf("panel %d,%d rect %v bad (image %v)", l, h, r, img.Bounds())
					}
					if tr := g.TitleRect(l, h); tr.Overlaps(r) || tr.Max.Y != r.Min.Y-1 || !tr.In(img.Bounds()) {
						t.Fatalf("title rect %v vs panel %v", tr, r)
					}
					if c := g.CellRect(l, h, 0, 0); c.Min != r.Min || c.Dx() != r.Dx()/g.T {
						t.Fatalf("cell 0,0 %v, panel %v", c, r)
					}
					if c := g.CellRect(l, h, g.T-1, g.T-1); c.Max != r.Max {
						t.Fatalf("last cell %v, panel %v", c, r)
					}
					// Row i is the query: moving down one row moves y only.
					if a, b := g.CellRect(l, h, 0, 0), g.CellRect(l, h, min(1, g.T-1), 0); b.Min.X != a.Min.X {
						t.Fatalf("rows are not stacked vertically: %v %v", a, b)
					}
					for _, ij := range [][2]int{{0, 0}, {g.T - 1, 0}, {0, g.T - 1}, {g.T / 2, g.T / 3}} {
						gl, gh, gi, gj, ok := g.CellAt(centre(g.CellRect(l, h, ij[0], ij[1])))
						if !ok || gl != l || gh != h || gi != ij[0] || gj != ij[1] {
							t.Fatalf("CellAt(centre of %d,%d,%v) = %d,%d,%d,%d,%v", l, h, ij, gl, gh, gi, gj, ok)
						}
					}
					if _, _, _, _, ok := g.CellAt(g.TitleRect(l, h).Min); ok {
						t.Fatalf("CellAt hit a cell on a title")
					}
					rects = append(rects, r)
				}
			}
			if len(rects) != g.Layers*g.Heads {
				t.Fatalf("%d rects", len(rects))
			}
			bar := g.ColorBarRect()
			if bar.Empty() || !bar.In(img.Bounds()) {
				t.Fatalf("colour bar %v outside %v", bar, img.Bounds())
			}
			for a := range rects {
				if rects[a].Overlaps(bar) {
					t.Fatalf("panel %v overlaps colour bar %v", rects[a], bar)
				}
				for b := a + 1; b < len(rects); b++ {
					if rects[a].Overlaps(rects[b]) {
						t.Fatalf("panels %v and %v overlap", rects[a], rects[b])
					}
				}
			}
			// Layers go down, heads go right.
			if g.Layers > 1 && g.PanelRect(1, 0).Min.Y <= g.PanelRect(0, 0).Max.Y {
				t.Fatalf("layer 1 not below layer 0")
			}
			if g.Heads > 1 && g.PanelRect(0, 1).Min.X <= g.PanelRect(0, 0).Max.X {
				t.Fatalf("head 1 not right of head 0")
			}
		})
	}
	g := demoGrid()
	for _, r := range []image.Rectangle{g.PanelRect(2, 0), g.PanelRect(0, -1), g.CellRect(0, 0, 16, 0), g.CellRect(0, 0, 0, -1), (Grid{}).PanelRect(0, 0)} {
		if !r.Empty() {
			t.Fatalf("out-of-range rect %v not empty", r)
		}
	}
}

func TestReadableCellSize(t *testing.T) {
	for _, tc := range []struct{ T, lo, hi int }{{4, 24, 24}, {16, 18, 24}, {64, 4, 8}, {500, 3, 3}} {
		g := makeGrid(1, 1, tc.T, true, uniformCausal)
		if c := g.CellRect(0, 0, 0, 0).Dx(); c < tc.lo || c > tc.hi {
			t.Errorf("T=%d: cell %d px, want %d..%d", tc.T, c, tc.lo, tc.hi)
		}
	}
}

func TestHeatmapCellColours(t *testing.T) {
	const T = 8
	// Weight 1 on the last visible key, 0 elsewhere, and junk (0.7) in the
	// masked triangle that must not show.
	f := func(_, i, j int) float32 {
		switch {
		case j > i:
			return 0.7
		case j == i:
			return 1
		}
		return 0
	}
	g := makeGrid(2, 2, T, true, f)
	img := mustDraw(t, DrawHeatmaps, g)
	black := color.RGBA{0, 0, 0, 255}
	one := color.RGBA{0xfd, 0xe7, 0x25, 255}
	zero := color.RGBA{0x44, 0x01, 0x54, 255}
	for l := 0; l < 2; l++ {
		for h := 0; h < 2; h++ {
			for i := 0; i < T; i++ {
				for j := 0; j < T; j++ {
					c := centre(g.CellRect(l, h, i, j))
					got := img.RGBAAt(c.X, c.Y)
					switch {
					case j > i:
						if got != black {
							t.Fatalf("masked cell %d,%d,%d,%d is %v, want black", l, h, i, j, got)
						}
					case j == i:
						if got != Viridis(1) || !near(got, one, 2) {
							t.Fatalf("weight-1 cell %d,%d is %v, want %v", i, j, got, one)
						}
					default:
						if got != Viridis(0) || !near(got, zero, 2) || got == black {
							t.Fatalf("weight-0 cell %d,%d is %v, want %v", i, j, got, zero)
						}
					}
				}
			}
			// The whole cell is filled, not just its centre.
			r := g.CellRect(l, h, 0, T-1)
			for _, p := range []image.Point{r.Min, r.Max.Sub(image.Pt(1, 1))} {
				if img.RGBAAt(p.X, p.Y) != black {
					t.Fatalf("masked cell corner %v not black", p)
				}
			}
		}
	}

	// Without Causal the same junk is drawn, coloured by weight.
	g.Causal = false
	img = mustDraw(t, DrawHeatmaps, g)
	c := centre(g.CellRect(0, 0, 0, T-1))
	if got := img.RGBAAt(c.X, c.Y); got != Viridis(0.7) {
		t.Fatalf("non-causal cell above diagonal is %v, want %v", got, Viridis(0.7))
	}

	// A NaN weight is flagged, not shown as 0.
	g.Panels[0].Probs[0] = float32(math.NaN())
	img = mustDraw(t, DrawHeatmaps, g)
	c = centre(g.CellRect(0, 0, 0, 0))
	if got := img.RGBAAt(c.X, c.Y); got != badCell {
		t.Fatalf("NaN cell is %v", got)
	}
}

func TestTitlesAndColorBar(t *testing.T) {
	g := demoGrid()
	img := mustDraw(t, DrawHeatmaps, g)
	for l := 0; l < g.Layers; l++ {
		for h := 0; h < g.Heads; h++ {
			if countInk(img, g.TitleRect(l, h)) < 20 {
				t.Errorf("title band of %d,%d is empty", l, h)
			}
			// Query labels to the left, key labels below the heatmap.
			p := g.PanelRect(l, h)
			if countInk(img, image.Rect(p.Min.X-30, p.Min.Y, p.Min.X-2, p.Max.Y)) < 50 {
				t.Errorf("no query labels left of panel %d,%d", l, h)
			}
			if countInk(img, image.Rect(p.Min.X, p.Max.Y+2, p.Max.X, p.Max.Y+30)) < 50 {
				t.Errorf("no key labels under panel %d,%d", l, h)
			}
		}
	}
	// Empty titles leave the band blank: the check above sees real text.
	for k := range g.Panels {
		g.Panels[k].Title = ""
	}
	blank := mustDraw(t, DrawHeatmaps, g)
	if n := countInk(blank, g.TitleRect(0, 1)); n != 0 {
		t.Errorf("empty title drew %d pixels", n)
	}

	bar := g.ColorBarRect()
	if bar.Dy() < 100 {
		t.Fatalf("colour bar only %d px tall", bar.Dy())
	}
	x := (bar.Min.X + bar.Max.X) / 2
	if got := img.RGBAAt(x, bar.Min.Y); got != Viridis(1) {
		t.Errorf("bar top %v, want viridis(1) %v", got, Viridis(1))
	}
	if got := img.RGBAAt(x, bar.Max.Y-1); got != Viridis(0) {
		t.Errorf("bar bottom %v, want viridis(0) %v", got, Viridis(0))
	}
	if got, want := img.RGBAAt(x, (bar.Min.Y+bar.Max.Y)/2), Viridis(0.5); !near(got, want, 3) {
		t.Errorf("bar middle %v, want about %v", got, want)
	}
	// Ticks and their labels at 1, 0.5 and 0.
	for _, y := range []int{bar.Min.Y, bar.Min.Y + (bar.Dy()-1)/2, bar.Max.Y - 1} {
		if countInk(img, image.Rect(bar.Max.X+1, y-1, bar.Max.X+1+tickLen, y+2)) < tickLen {
			t.Errorf("no tick at y=%d", y)
		}
		if countInk(img, image.Rect(bar.Max.X+tickLen+2, y-5, bar.Max.X+tickLen+30, y+6)) < 5 {
			t.Errorf("no tick label at y=%d", y)
		}
	}
}

func TestViridis(t *testing.T) {
	if got := Viridis(0); !near(got, color.RGBA{0x44, 0x01, 0x54, 255}, 2) {
		t.Errorf("viridis(0) = %v, want #440154", got)
	}
	if got := Viridis(1); !near(got, color.RGBA{0xfd, 0xe7, 0x25, 255}, 2) {
		t.Errorf("viridis(1) = %v, want #fde725", got)
	}
	if got := Viridis(0.5); !near(got, color.RGBA{0x21, 0x91, 0x8c, 255}, 2) {
		t.Errorf("viridis(0.5) = %v, want #21918c", got)
	}
	if Viridis(-3) != Viridis(0) || Viridis(7) != Viridis(1) || Viridis(math.NaN()) != Viridis(0) {
		t.Errorf("Viridis does not clamp")
	}
	lin := func(c uint8) float64 {
		v := float64(c) / 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	// CIE L* (perceived lightness) of a colour.
	lightness := func(c color.RGBA) float64 {
		y := 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
		if y <= 216.0/24389 {
			return 24389.0 / 27 * y
		}
		return 116*math.Cbrt(y) - 16
	}
	// 8-bit rounding makes neighbouring samples wobble by up to ~0.12 L*
	// (far below a visible step), so fine steps get that much slack ...
	prev := lightness(Viridis(0))
	const n = 1000
	for k := 1; k <= n; k++ {
		l := lightness(Viridis(float64(k) / n))
		if l < prev-0.25 {
			t.Fatalf("lightness drops at x=%.3f: %.2f after %.2f", float64(k)/n, l, prev)
		}
		prev = max(prev, l)
	}
	// ... while every tenth of the range must be clearly lighter.
	for k := 1; k <= 10; k++ {
		a, b := lightness(Viridis(float64(k-1)/10)), lightness(Viridis(float64(k)/10))
		if b < a+3 {
			t.Errorf("lightness %.1f -> %.1f from x=%.1f to %.1f, want a clear increase", a, b, float64(k-1)/10, float64(k)/10)
		}
	}
}

func arcGrid(T int, causal bool) Grid {
	return makeGrid(1, 3, T, causal, func(k, i, j int) float32 {
		switch k {
		case 0:
			return b2f(j == i-1 || (i == 0 && j == 0))
		case 1:
			return b2f(i == j)
		}
		return b2f(j == i+1 || (i == T-1 && j == i))
	})
}

func TestArcs(t *testing.T) {
	const T = 12
	g := arcGrid(T, false)
	img := mustDraw(t, DrawArcs, g)
	if got, want := img.Bounds(), (image.Rectangle{Max: g.ArcsSize()}); got != want {
		t.Fatalf("bounds %v, layout %v", got, want)
	}
	var strips []image.Rectangle
	for h := 0; h < 3; h++ {
		s, a := g.ArcStripRect(0, h), g.ArcRect(0, h)
		if !s.In(img.Bounds()) || !a.In(s) {
			t.Fatalf("strip %v / arc rect %v outside image %v", s, a, img.Bounds())
		}
		for _, o := range strips {
			if o.Overlaps(s) {
				t.Fatalf("strips %v and %v overlap", o, s)
			}
		}
		strips = append(strips, s)
		// Title above the arcs, labels below.
		if countInk(img, image.Rect(s.Min.X, s.Min.Y, s.Max.X, a.Min.Y)) < 20 {
			t.Errorf("strip %d has no title", h)
		}
		if countInk(img, image.Rect(s.Min.X, a.Max.Y, s.Max.X, s.Max.Y)) < 20*T/2 {
			t.Errorf("strip %d has no token labels", h)
		}
	}

	// Previous-token head: an arc over the gap between every pair of
	// neighbours, and nothing high up (no long arcs).
	a := g.ArcRect(0, 0)
	for i := 1; i < T; i++ {
		p, q := g.ArcAnchor(0, 0, i-1), g.ArcAnchor(0, 0, i)
		if p.Y != q.Y || q.X <= p.X {
			t.Fatalf("anchors %v %v not left to right on one baseline", p, q)
		}
		mid := (p.X + q.X) / 2
		if countInk(img, image.Rect(mid, a.Min.Y, mid+1, p.Y-2)) == 0 {
			t.Errorf("no arc above the gap between tokens %d and %d", i-1, i)
		}
	}
	top := image.Rect(a.Min.X, a.Min.Y, a.Max.X, a.Min.Y+a.Dy()/2)
	if n := countInk(img, top); n != 0 {
		t.Errorf("previous-token head drew %d pixels in the upper half (long arcs?)", n)
	}
	// The key end gets the dot: under the left neighbour, not the right.
	p0, p1 := g.ArcAnchor(0, 0, 0), g.ArcAnchor(0, 0, T-1)
	if countInk(img, image.Rect(p0.X-1, p0.Y+3, p0.X+2, p0.Y+5)) == 0 {
		t.Errorf("no key dot under token 0")
	}
	if countInk(img, image.Rect(p1.X-1, p1.Y+3, p1.X+2, p1.Y+5)) != 0 {
		t.Errorf("key dot under the last token, which is never a key")
	}

	// Diagonal head: nothing at all in the arc area.
	if n := countInk(img, g.ArcRect(0, 1)); n != 0 {
		t.Errorf("diagonal head drew %d arc pixels", n)
	}
	// Next-token head draws arcs when not causal ...
	if countInk(img, g.ArcRect(0, 2)) == 0 {
		t.Errorf("next-token head drew no arcs")
	}
	// ... and none when those keys are masked.
	gc := arcGrid(T, true)
	imgc := mustDraw(t, DrawArcs, gc)
	if n := countInk(imgc, gc.ArcRect(0, 2)); n != 0 {
		t.Errorf("causal grid drew %d pixels of future arcs", n)
	}
	if countInk(imgc, gc.ArcRect(0, 0)) == 0 {
		t.Errorf("causal grid lost its past arcs")
	}
}

func TestArcWeightScaling(t *testing.T) {
	const T = 10
	ink := func(w float32) int {
		g := makeGrid(1, 1, T, true, func(_, i, j int) float32 {
			if j == i-1 {
				return w
			}
			return 0
		})
		return countInk(mustDraw(t, DrawArcs, g), g.ArcRect(0, 0))
	}
	none, faint, strong := ink(MinArcWeight*0.9), ink(0.3), ink(1)
	if none != 0 {
		t.Errorf("weight below %v drew %d pixels", MinArcWeight, none)
	}
	if faint == 0 || strong <= faint {
		t.Errorf("ink for w=0.3: %d, w=1: %d; want heavier arcs wider", faint, strong)
	}
}

func TestWritePNG(t *testing.T) {
	dir := t.TempDir()
	g := demoGrid()
	for name, w := range map[string]func(string, Grid) error{"heat.png": WriteHeatmapsPNG, "arcs.png": WriteArcsPNG} {
		path := filepath.Join(dir, name)
		if err := w(path, g); err != nil {
			t.Fatal(err)
		}
		// Overwriting an existing file works too.
		if err := w(path, g); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s does not decode: %v", name, err)
		}
		want := g.HeatmapsSize()
		if name == "arcs.png" {
			want = g.ArcsSize()
		}
		if img.Bounds().Size() != want {
			t.Errorf("%s is %v, want %v", name, img.Bounds().Size(), want)
		}
	}
	// Bad input and an unwritable target leave no file behind.
	bad := g
	bad.T = 3
	if err := WriteHeatmapsPNG(filepath.Join(dir, "bad.png"), bad); err == nil {
		t.Errorf("bad grid written")
	}
	if err := WriteArcsPNG(filepath.Join(dir, "missing", "x.png"), g); err == nil {
		t.Errorf("write into a missing directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "arcs.png,heat.png" {
		t.Errorf("directory holds %v, want only the two PNGs", names)
	}
}

func TestBadInput(t *testing.T) {
	good := makeGrid(2, 2, 4, true, uniformCausal)
	cases := map[string]func(g *Grid){
		"zero layers":     func(g *Grid) { g.Layers = 0 },
		"zero heads":      func(g *Grid) { g.Heads = 0 },
		"zero T":          func(g *Grid) { g.T = 0 },
		"negative T":      func(g *Grid) { g.T = -4 },
		"too few tokens":  func(g *Grid) { g.Tokens = g.Tokens[:3] },
		"no tokens":       func(g *Grid) { g.Tokens = nil },
		"too few panels":  func(g *Grid) { g.Panels = g.Panels[:3] },
		"too many panels": func(g *Grid) { g.Panels = append(g.Panels, g.Panels[0]) },
		"short probs":     func(g *Grid) { g.Panels[2].Probs = g.Panels[2].Probs[:15] },
		"huge image": func(g *Grid) {
			*g = makeGrid(1, 100, 16, true, uniformCausal)
		},
	}
	for name, mutate := range cases {
		g := good
		g.Panels = append([]Head(nil), good.Panels...)
		mutate(&g)
		for kind, draw := range map[string]func(Grid) (*image.RGBA, error){"heatmaps": DrawHeatmaps, "arcs": DrawArcs} {
			img, err := draw(g)
			if err == nil || img != nil {
				t.Errorf("%s/%s: no error", name, kind)
				continue
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "viz: ") {
				t.Errorf("%s/%s: error %q is not one viz line", name, kind, msg)
			}
		}
	}
	for _, d := range []func(Grid) (*image.RGBA, error){DrawHeatmaps, DrawArcs} {
		if _, err := d(good); err != nil {
			t.Fatalf("good grid rejected: %v", err)
		}
	}
}

func TestTokenText(t *testing.T) {
	for in, want := range map[string]string{
		"cat": "cat", " ": "_", "a\nb": `a\nb`, "\t": `\t`, "é": "?", "▁the": "_the",
	} {
		if got := string(tokenRunes(in)); got != want {
			t.Errorf("tokenRunes(%q) = %q, want %q", in, got, want)
		}
	}
	if got := string(fitRunes([]rune("abcdefghij"), 5*glyphW)); got != "abcd…" {
		t.Errorf("fitRunes = %q", got)
	}
	// The hand-drawn middle dot is drawn, not left blank.
	if m := textMask([]rune("·")); countAlpha(m) == 0 {
		t.Errorf("middle dot is blank")
	}
}

func countAlpha(m *image.Alpha) int {
	n := 0
	for _, a := range m.Pix {
		if a != 0 {
			n++
		}
	}
	return n
}

// TestDemo draws the demo pictures; with VIZ_DEMO_DIR set they are kept
// there for a human to look at (VIZ_DEMO_DIR=/tmp go test -run Demo ./viz/).
func TestDemo(t *testing.T) {
	dir := os.Getenv("VIZ_DEMO_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	g := demoGrid()
	if err := WriteHeatmapsPNG(filepath.Join(dir, "viz_demo.png"), g); err != nil {
		t.Fatal(err)
	}
	if err := WriteArcsPNG(filepath.Join(dir, "arcs_demo.png"), g); err != nil {
		t.Fatal(err)
	}
}

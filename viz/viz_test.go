package viz

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// overlaps says whether two boxes share any area.
func (b box) overlaps(o box) bool {
	return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1
}

// makeGrid builds a grid whose weight for panel k, query i, key j is
// f(k, i, j).
func makeGrid(layers, heads, T int, causal bool, f func(k, i, j int) float32) Grid {
	g := Grid{Title: "test grid", Layers: layers, Heads: heads, T: T, Causal: causal}
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
		g.Panels = append(g.Panels, Head{Title: fmt.Sprintf("L%dH%d · test", k/heads, k%heads), Probs: p})
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
	titles := []string{"L0H0 · previous-token 0.85", "L0H1 · attention-sink 0.71", "L1H0 · induction 0.81", "L1H1 · uniform 0.50"}
	g := Grid{Title: "demo · 2 layers x 2 heads · seed 1 · 2500 steps", Layers: 2, Heads: 2, T: T, Causal: true, Tokens: toks}
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

// demoCurves is a made-up run: a phase change around step 300, three
// label changes in it.
func demoCurves() Curves {
	c := Curves{Title: "demo · 2 layers × 2 heads, d-model 32 · seed 1 · 600 steps", Loss: Curve{Name: "loss"}, Accuracy: Curve{Name: "accuracy"}}
	for _, n := range []string{"L0H0", "L0H1", "L1H0", "L1H1"} {
		c.Heads = append(c.Heads, Curve{Name: n})
	}
	for s := 0; s <= 600; s += 25 {
		x := float64(s)
		sig := 1 / (1 + math.Exp(-(x-300)/40))
		c.Loss.Steps, c.Loss.Values = append(c.Loss.Steps, x), append(c.Loss.Values, 2.7*(1-sig)+0.02)
		c.Accuracy.Steps, c.Accuracy.Values = append(c.Accuracy.Steps, x), append(c.Accuracy.Values, 0.1+0.88*sig)
		for k, v := range []float64{0.3 + 0.6*sig, 0.5, 0.2 + 0.79*sig, 0.35 - 0.1*sig} {
			c.Heads[k].Steps, c.Heads[k].Values = append(c.Heads[k].Steps, x), append(c.Heads[k].Values, v)
		}
	}
	c.Markers = []Marker{{250, "L0H0 previous-token 0.62"}, {275, "L1H0 induction 0.55"}, {325, "L1H1 uniform 0.41"}}
	c.PhaseFrom, c.PhaseTo = 240, 360
	return c
}

func demoLines() Lines {
	l := Lines{Title: "pruning · demo", XLabel: "fraction of heads removed", YLabel: "held-out accuracy",
		Curves: []Curve{{Name: "least important first"}, {Name: "random order (mean of 20)"}}}
	for k := 0; k <= 4; k++ {
		f := float64(k) / 4
		l.Curves[0].Steps, l.Curves[0].Values = append(l.Curves[0].Steps, f), append(l.Curves[0].Values, 1-f*f)
		l.Curves[1].Steps, l.Curves[1].Values = append(l.Curves[1].Steps, f), append(l.Curves[1].Values, 1-f)
	}
	return l
}

// demoAccuracyHistogram is a sweep's histogram of 12 seeds' accuracies
// with chance at 12.5%: the numbers of demoHistogram, as fractions.
func demoAccuracyHistogram() Histogram {
	bins := make([]Bin, 20)
	for k := range bins {
		bins[k] = Bin{Lo: float64(k) / 20, Hi: float64(k+1) / 20}
	}
	bins[0].Count, bins[2].Count, bins[19].Count = 6, 1, 5
	return AccuracyHistogram("demo (12 seeds)", bins, 0.125)
}

// TestAccuracyHistogram: fractions become percent, the axes are named,
// and the chance line is labelled to one decimal, or absent at 0.
func TestAccuracyHistogram(t *testing.T) {
	h := demoAccuracyHistogram()
	if h.XLabel != "held-out accuracy (%)" || h.YLabel != "seeds" || h.Title != "demo (12 seeds)" {
		t.Errorf("labels %q, %q, title %q", h.XLabel, h.YLabel, h.Title)
	}
	if h.Line != 12.5 || h.LineLabel != "chance 12.5%" {
		t.Errorf("line at %v labelled %q, want 12.5 labelled \"chance 12.5%%\"", h.Line, h.LineLabel)
	}
	want := demoHistogram()
	if len(h.Bins) != len(want.Bins) {
		t.Fatalf("%d bins, want %d", len(h.Bins), len(want.Bins))
	}
	for k, b := range h.Bins {
		w := want.Bins[k]
		if math.Abs(b.Lo-w.Lo) > 1e-12 || math.Abs(b.Hi-w.Hi) > 1e-12 || b.Count != w.Count {
			t.Errorf("bin %d = %+v, want %+v", k, b, w)
		}
	}
	if h := AccuracyHistogram("t", want.Bins, 1.0/7); h.LineLabel != "chance 14.3%" {
		t.Errorf("chance 1/7 labelled %q, want \"chance 14.3%%\"", h.LineLabel)
	}
	if h := AccuracyHistogram("t", want.Bins, 0); h.LineLabel != "" || h.Line != 0 {
		t.Errorf("chance 0 drew a line at %v labelled %q", h.Line, h.LineLabel)
	}
}

// demoHistogram has its tallest bar in the first bin, right where a
// legend in the plot's corner would cover it.
func demoHistogram() Histogram {
	h := Histogram{Title: "demo (12 seeds)", XLabel: "held-out accuracy (%)", YLabel: "seeds", Line: 12.5, LineLabel: "chance 12.5%"}
	for k := 0; k < 20; k++ {
		h.Bins = append(h.Bins, Bin{Lo: 5 * float64(k), Hi: 5 * float64(k+1)})
	}
	h.Bins[0].Count, h.Bins[2].Count, h.Bins[19].Count = 6, 1, 5
	return h
}

// arcGrid is one layer of three heads over T tokens: previous-token,
// diagonal (no arcs) and next-token.
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

// render draws f at dpi as RGBA.
func render(t *testing.T, f *Figure, err error, dpi int) *image.RGBA {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	img, ok := f.Image(dpi).(*image.RGBA)
	if !ok {
		t.Fatalf("vgimg did not give RGBA")
	}
	return img
}

// px maps a length in points to pixels at PNGDPI.
func px(v vg.Length) int { return int(math.Round(float64(v) * PNGDPI / 72)) }

// pxBox is b in pixels at PNGDPI, shrunk by in pixels on every side.
func pxBox(b box, in int) image.Rectangle {
	return image.Rect(px(b.x0)+in, px(b.y0)+in, px(b.x1)-in, px(b.y1)-in)
}

func centre(r image.Rectangle) image.Point {
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
}

func near(a, b color.RGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// countInk counts pixels in r that are not white.
func countInk(img *image.RGBA, r image.Rectangle) int {
	n := 0
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := img.RGBAAt(x, y); c.R < 250 || c.G < 250 || c.B < 250 {
				n++
			}
		}
	}
	return n
}

func TestHeatmapLayout(t *testing.T) {
	long := makeGrid(3, 5, 64, false, uniformCausal)
	for i := range long.Tokens {
		long.Tokens[i] = strings.Repeat("w", i%20)
	}
	long.Panels[7].Title = strings.Repeat("a very long title ", 10)
	for name, g := range map[string]Grid{
		"1x1 T1": makeGrid(1, 1, 1, true, uniformCausal), "2x2 T16": demoGrid(),
		"1x3 T4": makeGrid(1, 3, 4, true, uniformCausal), "3x5 T64": long,
	} {
		t.Run(name, func(t *testing.T) {
			f, err := Heatmaps(g)
			if err != nil {
				t.Fatal(err)
			}
			L := g.heatLayout()
			all := box{0, 0, f.W, f.H}
			var boxes []box
			for l := 0; l < g.Layers; l++ {
				for h := 0; h < g.Heads; h++ {
					b := L.panel(l, h)
					if b.w() <= 0 || b.w() != b.h() || !inside(b, all) {
						t.Fatalf("panel %d,%d %v bad (figure %v x %v)", l, h, b, f.W, f.H)
					}
					if c := L.cellBox(l, h, g.T-1, g.T-1); math.Abs(float64(c.x1-b.x1)) > 1e-9 || math.Abs(float64(c.y1-b.y1)) > 1e-9 {
						t.Fatalf("last cell %v, panel %v", c, b)
					}
					// Room for the title above and the rotated key labels below.
					if _, sy := L.slot(l, h); b.y0-sy < lineH(panelTitle) || b.y1+labelGap+L.labelW > f.H {
						t.Fatalf("panel %d,%d leaves no room for its title or labels", l, h)
					}
					boxes = append(boxes, b)
				}
			}
			boxes = append(boxes, L.bar)
			for a := range boxes {
				for b := a + 1; b < len(boxes); b++ {
					if boxes[a].overlaps(boxes[b]) {
						t.Fatalf("%v and %v overlap", boxes[a], boxes[b])
					}
				}
			}
			if g.Layers > 1 && L.panel(1, 0).y0 <= L.panel(0, 0).y1 {
				t.Fatalf("layer 1 not below layer 0")
			}
			if g.Heads > 1 && L.panel(0, 1).x0 <= L.panel(0, 0).x1 {
				t.Fatalf("head 1 not right of head 0")
			}
		})
	}
}

func inside(b, o box) bool { return b.x0 >= o.x0 && b.y0 >= o.y0 && b.x1 <= o.x1 && b.y1 <= o.y1 }

func TestHeatmapCellColours(t *testing.T) {
	const T = 8
	// Weight 1 on the diagonal, 0 below, and junk (0.7) in the masked
	// triangle that must not show.
	g := makeGrid(2, 2, T, true, func(_, i, j int) float32 {
		switch {
		case j > i:
			return 0.7
		case j == i:
			return 1
		}
		return 0
	})
	f, err := Heatmaps(g)
	img := render(t, f, err, PNGDPI)
	L := g.heatLayout()
	black := color.RGBA{0, 0, 0, 255}
	for l := 0; l < 2; l++ {
		for h := 0; h < 2; h++ {
			for i := 0; i < T; i++ {
				for j := 0; j < T; j++ {
					c := centre(pxBox(L.cellBox(l, h, i, j), 0))
					got := img.RGBAAt(c.X, c.Y)
					want := Viridis(0)
					switch {
					case j > i:
						want = black
					case j == i:
						want = Viridis(1)
					}
					if !near(got, want, 2) {
						t.Fatalf("cell %d,%d,%d,%d is %v, want %v", l, h, i, j, got, want)
					}
				}
			}
		}
	}
	// Without Causal the junk is drawn, coloured by weight; a NaN weight
	// is flagged, not shown as 0.
	g.Causal = false
	g.Panels[0].Probs[0] = float32(math.NaN())
	f, err = Heatmaps(g)
	img = render(t, f, err, PNGDPI)
	c := centre(pxBox(L.cellBox(0, 0, 0, T-1), 0))
	if got := img.RGBAAt(c.X, c.Y); !near(got, Viridis(0.7), 2) {
		t.Errorf("non-causal cell above the diagonal is %v, want %v", got, Viridis(0.7))
	}
	c = centre(pxBox(L.cellBox(0, 0, 0, 0), 0))
	if got := img.RGBAAt(c.X, c.Y); got != BadCell {
		t.Errorf("NaN cell is %v", got)
	}
}

func TestTitlesLabelsAndColorBar(t *testing.T) {
	g := demoGrid()
	f, err := Heatmaps(g)
	img := render(t, f, err, PNGDPI)
	L := g.heatLayout()
	if countInk(img, image.Rect(px(margin), px(margin), px(f.W-margin), px(margin+lineH(titleSize)))) < 200 {
		t.Errorf("no run title at the top")
	}
	for l := 0; l < g.Layers; l++ {
		for h := 0; h < g.Heads; h++ {
			b := pxBox(L.panel(l, h), 0)
			sx, sy := L.slot(l, h)
			if countInk(img, image.Rect(px(sx), px(sy), b.Max.X, b.Min.Y-2)) < 100 {
				t.Errorf("title band of %d,%d is empty", l, h)
			}
			if countInk(img, image.Rect(px(sx), b.Min.Y, b.Min.X-2, b.Max.Y)) < 200 {
				t.Errorf("no query labels left of panel %d,%d", l, h)
			}
			if countInk(img, image.Rect(b.Min.X, b.Max.Y+2, b.Max.X, b.Max.Y+px(L.labelW))) < 200 {
				t.Errorf("no key labels under panel %d,%d", l, h)
			}
		}
	}
	bar := pxBox(L.bar, 2)
	x := (bar.Min.X + bar.Max.X) / 2
	for _, s := range []struct {
		y int
		v float64
	}{{bar.Min.Y, 1}, {bar.Max.Y - 1, 0}, {(bar.Min.Y + bar.Max.Y) / 2, 0.5}} {
		if got := img.RGBAAt(x, s.y); !near(got, Viridis(s.v), 6) {
			t.Errorf("colour bar at y=%d is %v, want about viridis(%v) %v", s.y, got, s.v, Viridis(s.v))
		}
	}
	if countInk(img, image.Rect(bar.Max.X+2, bar.Min.Y-10, bar.Max.X+40, bar.Max.Y+10)) < 100 {
		t.Errorf("no tick labels beside the colour bar")
	}
}

func TestArcs(t *testing.T) {
	const T = 12
	g := arcGrid(T, false)
	f, err := Arcs(g)
	img := render(t, f, err, PNGDPI)
	A := g.arcLayout()
	var strips []box
	for h := 0; h < 3; h++ {
		s := A.strip(g, 0, h)
		if !inside(s, box{0, 0, f.W, f.H}) {
			t.Fatalf("strip %v outside the figure", s)
		}
		for _, o := range strips {
			if o.overlaps(s) {
				t.Fatalf("strips %v and %v overlap", o, s)
			}
		}
		strips = append(strips, s)
		a := A.arcBox(g, 0, h)
		if countInk(img, pxBox(box{s.x0, s.y0, s.x1, a.y0}, 0)) < 100 {
			t.Errorf("strip %d has no title", h)
		}
		if countInk(img, pxBox(box{s.x0, a.y1, s.x1, s.y1}, 0)) < 50*T {
			t.Errorf("strip %d has no token labels", h)
		}
	}

	// Previous-token head: an arc over the gap between every pair of
	// neighbours, and nothing high up.
	s, a := A.strip(g, 0, 0), pxBox(A.arcBox(g, 0, 0), 1)
	base := px(A.baseline(s))
	for i := 1; i < T; i++ {
		mid := px((A.anchor(s, i-1) + A.anchor(s, i)) / 2)
		if countInk(img, image.Rect(mid, a.Min.Y, mid+1, base-4)) == 0 {
			t.Errorf("no arc above the gap between tokens %d and %d", i-1, i)
		}
	}
	if n := countInk(img, image.Rect(a.Min.X, a.Min.Y, a.Max.X, (a.Min.Y+a.Max.Y)/2)); n != 0 {
		t.Errorf("previous-token head drew %d pixels in the upper half (long arcs?)", n)
	}
	// The key end gets the dot: under token 0, not the last token.
	dot := func(i int) int {
		x := px(A.anchor(s, i))
		return countInk(img, image.Rect(x-1, base+1, x+2, base+3))
	}
	if dot(0) == 0 || dot(T-1) != 0 {
		t.Errorf("key dots: %d pixels under token 0, %d under the last (never a key)", dot(0), dot(T-1))
	}
	// Diagonal head: nothing; next-token head: arcs, but none when causal.
	if n := countInk(img, pxBox(A.arcBox(g, 0, 1), 1)); n != 0 {
		t.Errorf("diagonal head drew %d arc pixels", n)
	}
	if countInk(img, pxBox(A.arcBox(g, 0, 2), 1)) == 0 {
		t.Errorf("next-token head drew no arcs")
	}
	gc := arcGrid(T, true)
	fc, err := Arcs(gc)
	imgc := render(t, fc, err, PNGDPI)
	if n := countInk(imgc, pxBox(A.arcBox(gc, 0, 2), 1)); n != 0 {
		t.Errorf("causal grid drew %d pixels of future arcs", n)
	}
}

func TestArcWeightScaling(t *testing.T) {
	const T = 10
	ink := func(w float32) int {
		g := makeGrid(1, 1, T, true, func(_, i, j int) float32 { return w * b2f(j == i-1) })
		f, err := Arcs(g)
		return countInk(render(t, f, err, PNGDPI), pxBox(g.arcLayout().arcBox(g, 0, 0), 1))
	}
	none, faint, strong := ink(MinArcWeight*0.9), ink(0.3), ink(1)
	if none != 0 {
		t.Errorf("weight below %v drew %d pixels", MinArcWeight, none)
	}
	if faint == 0 || strong <= faint {
		t.Errorf("ink for w=0.3: %d, w=1: %d; want heavier arcs wider", faint, strong)
	}
}

// TestArcsStayOnAPage checks that long sequences scale down instead of
// growing the figure (10,618 px wide at T=64 before).
func TestArcsStayOnAPage(t *testing.T) {
	for _, T := range []int{4, 16, 64, 256} {
		g := makeGrid(2, 4, T, true, uniformCausal)
		f, err := Arcs(g)
		if err != nil {
			t.Fatal(err)
		}
		if f.W > 8.5*vg.Inch {
			t.Errorf("T=%d: %v pt wide, more than a page", T, f.W)
		}
		A := g.arcLayout()
		// Labels never overlap: side by side they fit their spacing, or
		// they read downwards and a line's height fits it.
		if !A.rotated && A.labels.Width("t"+fmt.Sprint(T-1)) > A.spacing {
			t.Errorf("T=%d: labels wider than their %v pt", T, A.spacing)
		}
		if A.rotated && A.labels.Font.Size > vg.Length(A.step)*A.spacing {
			t.Errorf("T=%d: rotated labels %v pt tall every %d tokens %v pt apart", T, A.labels.Font.Size, A.step, A.spacing)
		}
	}
}

func TestCurvesPanels(t *testing.T) {
	c := demoCurves()
	c.Loss.Values[0] = 0 // a zero loss is skipped on the log scale, not a panic
	if _, err := c.Figure(); err != nil {
		t.Fatal(err)
	}
	c.Accuracy.Steps = c.Accuracy.Steps[:1]
	if _, err := c.Figure(); err == nil {
		t.Errorf("curves of one step drawn")
	}
	if _, err := (Lines{}).Figure(); err == nil {
		t.Errorf("empty line chart drawn")
	}
	if _, err := (Histogram{}).Figure(); err == nil {
		t.Errorf("empty histogram drawn")
	}
	// Many label changes: the list under the panels stops, the figure
	// does not grow without end.
	c = demoCurves()
	for k := 0; k < 40; k++ {
		c.Markers = append(c.Markers, Marker{Step: float64(10 * k), Text: "L0H0 uniform"})
	}
	f, err := c.Figure()
	g, _ := demoCurves().Figure()
	if err != nil || f.H-g.H > vg.Length(maxFootRows)*lineH(noteSize) {
		t.Errorf("43 markers: %v, height %v against %v for 3", err, f.H, g.H)
	}
}

func TestWriteFormats(t *testing.T) {
	dir := t.TempDir()
	f, err := Heatmaps(demoGrid())
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range Formats {
		path := filepath.Join(dir, "heat"+ext)
		for range 2 { // overwriting works too
			if err := Write(path, f); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch ext {
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("PNG does not decode: %v", err)
			}
			if got, want := img.Bounds().Size(), image.Pt(px(f.W), px(f.H)); got.Sub(want).X*got.Sub(want).X > 1 || got.Sub(want).Y*got.Sub(want).Y > 1 {
				t.Errorf("PNG is %v, want %v", got, want)
			}
		case ".svg":
			var doc struct {
				XMLName xml.Name
				Width   string `xml:"width,attr"`
			}
			if err := xml.Unmarshal(data, &doc); err != nil || doc.XMLName.Local != "svg" {
				t.Fatalf("not an SVG document: %v %v", err, doc.XMLName)
			}
			for _, want := range []string{"L1H0 · induction 0.81", "@font-face", "<bos>", "font-weight:bold"} {
				if !strings.Contains(string(data), html.EscapeString(want)) {
					t.Errorf("SVG lacks %q", want)
				}
			}
		case ".pdf":
			if !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data[len(data)-32:], []byte("%%EOF")) {
				t.Errorf("not a whole PDF")
			}
			for _, face := range []string{"/BaseFont /utf8liberationsans-regular\n", "/BaseFont /utf8liberationsans-bold\n"} {
				if !bytes.Contains(data, []byte(face)) {
					t.Errorf("PDF does not embed %q", face)
				}
			}
		}
	}
	// An unknown extension, a bad grid or a missing directory leave no file.
	for _, path := range []string{filepath.Join(dir, "heat.jpg"), filepath.Join(dir, "heat"), filepath.Join(dir, "missing", "x.png")} {
		err := Write(path, f)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "viz: ") {
			t.Errorf("%s: error %v, want one viz line", path, err)
		}
	}
	if err := CheckPath("a/b.SVG"); err != nil {
		t.Errorf("upper-case extension refused: %v", err)
	}
	// "-" and a device have no extension: they get a PNG, in place.
	var out bytes.Buffer
	if err := WriteStdout("-", &out, f); err != nil || !bytes.HasPrefix(out.Bytes(), []byte("\x89PNG")) {
		t.Errorf(`"-": %v, stdout %.8q`, err, out.Bytes())
	}
	if err := Write("/dev/null", f); err != nil {
		t.Errorf("/dev/null: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "heat.pdf,heat.png,heat.svg" {
		t.Errorf("directory holds %v", names)
	}
}

func TestBadInput(t *testing.T) {
	good := makeGrid(2, 2, 4, true, uniformCausal)
	cases := map[string]func(g *Grid){
		"zero layers":     func(g *Grid) { g.Layers = 0 },
		"zero heads":      func(g *Grid) { g.Heads = 0 },
		"negative T":      func(g *Grid) { g.T = -4 },
		"too few tokens":  func(g *Grid) { g.Tokens = g.Tokens[:3] },
		"too few panels":  func(g *Grid) { g.Panels = g.Panels[:3] },
		"too many panels": func(g *Grid) { g.Panels = append(g.Panels, g.Panels[0]) },
		"short probs":     func(g *Grid) { g.Panels[2].Probs = g.Panels[2].Probs[:15] },
		"huge figure":     func(g *Grid) { *g = makeGrid(1, 100, 16, true, uniformCausal) },
	}
	for name, mutate := range cases {
		g := good
		g.Panels = append([]Head(nil), good.Panels...)
		mutate(&g)
		for kind, draw := range map[string]func(Grid) (*Figure, error){"heatmaps": Heatmaps, "arcs": Arcs} {
			if name == "huge figure" && kind == "arcs" {
				g = makeGrid(60, 2, 16, true, uniformCausal) // arcs stack their strips
			}
			f, err := draw(g)
			if err == nil || f != nil {
				t.Errorf("%s/%s: no error", name, kind)
				continue
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "viz: ") {
				t.Errorf("%s/%s: error %q is not one viz line", name, kind, msg)
			}
		}
	}
}

func TestTokenText(t *testing.T) {
	for in, want := range map[string]string{"cat": "cat", " ": "_", "  ": "__", "a\nb": `a\nb`, "\t": `\t`, "é": "é", "▁the": "_the"} {
		if got := tokenText(in); got != want {
			t.Errorf("tokenText(%q) = %q, want %q", in, got, want)
		}
	}
	sty := style(sans, 8, textColor)
	if got := fit(sty, "abcdefghijklmnop", sty.Width("abcdef")); !strings.HasSuffix(got, "…") || sty.Width(got) > sty.Width("abcdef") {
		t.Errorf("fit = %q", got)
	}
	if got := fit(sty, "abc", 100); got != "abc" {
		t.Errorf("fit cut a short string: %q", got)
	}
}

package htmlview

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"headlab/analysis"
	"headlab/internal/browsertest"
	"headlab/viz"
)

const T = 8

// fixture is 3 examples of a 2x2 causal model with heads whose patterns
// are known: L0H0 previous-token, L0H1 uniform, L1H0 on position 0, and
// L1H1 0.7 on itself and 0.3 on position 0 (0.2 and 0.8 in example 1).
func fixture() *analysis.Attention {
	a := &analysis.Attention{Causal: true, N: 3, L: 2, H: 2, T: T}
	a.Probs = make([]float32, a.N*a.L*a.H*T*T)
	set := func(n, l, h, i, j int, w float32) { a.Probs[((((n*a.L+l)*a.H+h)*T+i)*T + j)] += w }
	for n := range a.N {
		for i := range T {
			a.Tokens = append(a.Tokens, (3*n+i)%10)
			set(n, 0, 0, i, max(i-1, 0), 1)
			for j := 0; j <= i; j++ {
				set(n, 0, 1, i, j, 1/float32(i+1))
			}
			set(n, 1, 0, i, 0, 1)
			self := float32(0.7)
			if n == 1 {
				self = 0.2
			}
			if i == 0 {
				set(n, 1, 1, 0, 0, 1)
			} else {
				set(n, 1, 1, i, i, self)
				set(n, 1, 1, i, 0, 1-self)
			}
		}
	}
	return a
}

// vocab is the fixture's tokens named as a vocab.txt names them, and
// vocabLabel the same on the axes: the last name, too long, cut.
var (
	vocab      = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "a-very-long-name"}
	vocabLabel = append(vocab[:9:9], "a-very-"+string(viz.Ellipsis))
)

// named is the fixture's tokens' names: token for Write.
func named(id int) string { return vocab[id] }

// writePage writes a's page with its tokens named by token (nil: the
// figures' letters).
func writePage(t *testing.T, a *analysis.Attention, token func(int) string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, "test run: 2 layers x 2 heads", a, analysis.ScoreAll(a), nil, token); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "heads.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cellCenter is the page coordinates of the centre of cell (i, j) of a
// head's canvas.
func cellCenter(t *testing.T, tab context.Context, name string, i, j int) (float64, float64) {
	t.Helper()
	r := browsertest.Eval[[]float64](t, tab, fmt.Sprintf(`(() => { const c = document.getElementById("head-%s"), r = c.getBoundingClientRect();
		return [r.left + c.clientLeft + window.scrollX, r.top + c.clientTop + window.scrollY, c.width / DATA.seq_len]; })()`, name))
	return r[0] + (float64(j)+0.5)*r[2], r[1] + (float64(i)+0.5)*r[2]
}

// sameRGB: the page's canvas draws viz.CellColor exactly.
func sameRGB(a, b color.Color) bool {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2
}

func readout(t *testing.T, tab context.Context) (text string, locked bool) {
	t.Helper()
	r := browsertest.Eval[[]any](t, tab, `(() => { const r = document.getElementById("readout"); return [r.textContent, r.classList.contains("locked")]; })()`)
	return r[0].(string), r[1].(bool)
}

// TestPageInChromium: the page of a model whose task names its tokens
// (a vocab.txt) draws every head, hover and click read out the names, the
// axes carry them (cut to LabelChars), the picker switches example.
func TestPageInChromium(t *testing.T) {
	a := fixture()
	file := writePage(t, a, named)
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, file)

	// Every head is drawn, under its name and verdict.
	heads := analysis.ScoreAll(a)
	labels := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll(".head .label")].map(e => e.textContent)`)
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll("canvas.pattern").length`); n != a.L*a.H || len(labels) != len(heads) {
		t.Fatalf("%d canvases and %d labels, want %d", n, len(labels), a.L*a.H)
	}
	for k, hs := range heads {
		if labels[k] != hs.Name+hs.Title() {
			t.Errorf("label %d = %q, want %q", k, labels[k], hs.Name+hs.Title())
		}
	}
	if !strings.HasPrefix(heads[0].Label, "previous") {
		t.Fatalf("fixture's L0H0 is %q, not a previous-token head", heads[0].Label)
	}

	// The screenshot shows the patterns: weight 1 yellow, weight 0 dark
	// purple, masked cells viz.MaskedCell: viz.CellColor, as in the figures.
	shot, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("HEADLAB_SHOT_DIR"); dir != "" {
		os.WriteFile(filepath.Join(dir, "htmlview.png"), shot, 0o644)
	}
	pixel := func(name string, i, j int) color.Color {
		x, y := cellCenter(t, tab, name, i, j)
		return img.At(int(x), int(y))
	}
	for _, c := range []struct {
		head string
		i, j int
		want color.Color
	}{
		{"L0H0", 3, 2, viz.CellColor(false, 1)}, {"L0H0", 3, 0, viz.CellColor(false, 0)}, {"L0H0", 2, 3, viz.CellColor(true, 0)},
		{"L1H0", 7, 0, viz.CellColor(false, 1)}, {"L1H1", 5, 5, viz.CellColor(false, 0.7)}, {"L0H1", 3, 1, viz.CellColor(false, 0.25)},
	} {
		if got := pixel(c.head, c.i, c.j); !sameRGB(got, c.want) {
			t.Errorf("%s cell (%d,%d): screenshot pixel %v, want %v", c.head, c.i, c.j, got, c.want)
		}
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 400 {
		t.Errorf("screenshot is %v", b)
	}

	// The caption's colours are the cells': viridis from 0 to 1, and a
	// swatch of the masked cells' colour.
	caption := browsertest.Eval[string](t, tab, `document.getElementById("legend").textContent`)
	if strings.Contains(caption, "grey") || !strings.Contains(caption, "masked") {
		t.Errorf("caption %q", caption)
	}
	masked := viz.CellColor(true, 0)
	if got := browsertest.Eval[string](t, tab, `getComputedStyle(document.getElementById("swatch-masked")).backgroundColor`); got != fmt.Sprintf("rgb(%d, %d, %d)", masked.R, masked.G, masked.B) {
		t.Errorf("the caption's masked swatch is %s, the masked cells %v", got, masked)
	}
	if x, y := cellCenter(t, tab, "L0H0", 2, 5); !sameRGB(img.At(int(x), int(y)), masked) {
		t.Errorf("a masked cell is %v, not the caption's %v", img.At(int(x), int(y)), masked)
	}
	ramp := browsertest.Eval[string](t, tab, `getComputedStyle(document.querySelector("#legend .ramp")).backgroundImage`)
	lo, hi := viz.CellColor(false, 0), viz.CellColor(false, 1)
	if !strings.HasPrefix(ramp, fmt.Sprintf("linear-gradient(to right, rgb(%d, %d, %d)", lo.R, lo.G, lo.B)) || !strings.HasSuffix(ramp, fmt.Sprintf("rgb(%d, %d, %d))", hi.R, hi.G, hi.B)) {
		t.Errorf("the caption's ramp is %s, want %v to %v", ramp, lo, hi)
	}

	// Every head's axes carry the example's token names, each beside its
	// row or under its column.
	label := func(id int) string { return vocabLabel[id] }
	checkAxes(t, tab, a, 0, 1, label)

	tok := func(n, i int) string { return vocab[a.Tokens[n*T+i]] }
	hover := func(name string, i, j int) {
		x, y := cellCenter(t, tab, name, i, j)
		if err := chromedp.Do(tab, chromedp.MouseEvent(chromedp.MouseMoved, x, y)); err != nil {
			t.Fatal(err)
		}
	}
	click := func(name string, i, j int) {
		x, y := cellCenter(t, tab, name, i, j)
		if err := chromedp.Do(tab, chromedp.MouseClickXY(x, y)); err != nil {
			t.Fatal(err)
		}
	}

	// Hovering reads out query, key and weight, and marks both tokens.
	hover("L0H0", 3, 2)
	want := fmt.Sprintf(`L0H0 · query 3 "%s" → key 2 "%s": 1.000`, tok(0, 3), tok(0, 2))
	if got, locked := readout(t, tab); got != want || locked {
		t.Fatalf("hover readout %q (locked %v), want %q", got, locked, want)
	}
	if q, k := browsertest.Eval[string](t, tab, `document.querySelector(".tok.q").textContent`), browsertest.Eval[string](t, tab, `document.querySelector(".tok.k").textContent`); q != tok(0, 3) || k != tok(0, 2) {
		t.Errorf("marked tokens %q, %q", q, k)
	}
	hover("L0H0", 2, 5)
	if got, _ := readout(t, tab); !strings.HasSuffix(got, ": masked") {
		t.Errorf("masked cell reads %q", got)
	}

	// A click locks the readout: hovering elsewhere leaves it.
	click("L1H1", 5, 5)
	want = fmt.Sprintf(`L1H1 · query 5 "%s" → key 5 "%s": 0.700`, tok(0, 5), tok(0, 5))
	hover("L0H0", 1, 0)
	if got, locked := readout(t, tab); got != want || !locked {
		t.Fatalf("locked readout %q (locked %v), want %q", got, locked, want)
	}

	// The picker switches example: tokens and the locked cell's weight follow.
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll("#example option").length`); n != a.N {
		t.Errorf("%d examples in the picker, want %d", n, a.N)
	}
	browsertest.Eval[bool](t, tab, `(() => { const s = document.getElementById("example"); s.value = "1"; s.dispatchEvent(new Event("change")); return true; })()`)
	want = fmt.Sprintf(`L1H1 · query 5 "%s" → key 5 "%s": 0.200`, tok(1, 5), tok(1, 5))
	if got, locked := readout(t, tab); got != want || !locked {
		t.Fatalf("readout after switching example %q (locked %v), want %q", got, locked, want)
	}
	toks := browsertest.Eval[string](t, tab, `[...document.querySelectorAll("#tokens .tok")].map(e => e.textContent).join(" ")`)
	var want1 []string
	for i := range T {
		want1 = append(want1, tok(1, i))
	}
	if toks != strings.Join(want1, " ") {
		t.Errorf("tokens of example 1 shown as %q", toks)
	}
	if got := pixel("L1H1", 5, 5); !sameRGB(got, viz.CellColor(false, 0.2)) {
		// The screenshot above was taken on example 0; take another.
		shot, _ = chromedp.Run(tab, chromedp.FullScreenshot(100))
		img, _ = png.Decode(bytes.NewReader(shot))
		if got := pixel("L1H1", 5, 5); !sameRGB(got, viz.CellColor(false, 0.2)) {
			t.Errorf("example 1's L1H1 (5,5) drawn as %v, want %v", got, viz.CellColor(false, 0.2))
		}
	}

	// The axes follow the example too: its position 6 is the long name,
	// cut on the axes, whole in the strip of tokens and the label's tooltip.
	if a.Tokens[T+6] != 9 || !strings.Contains(toks, vocab[9]) {
		t.Fatalf("example 1's position 6 is token %d, its strip %q: want the long name", a.Tokens[T+6], toks)
	}
	checkAxes(t, tab, a, 1, 1, label)
	if tip := browsertest.Eval[string](t, tab, `document.getElementById("keys-L0H0").children[6].title`); tip != vocab[9] {
		t.Errorf("the long name's key label has the tooltip %q, want %q", tip, vocab[9])
	}

	// Clicking the locked cell again releases it.
	click("L1H1", 5, 5)
	if _, locked := readout(t, tab); locked {
		t.Error("a second click did not release the lock")
	}

	if out := v.Outside(t, tab); len(out) > 0 {
		t.Errorf("the page made requests: %v", out)
	}
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
	if len(v.Requests()) == 0 {
		t.Error("no request seen at all, not even the page's own: the network watch does not work")
	}
}

// The watch that the test above relies on sees what a page asks for: a
// request its policy refuses, and one a page without a policy makes (to
// a closed local port, so nothing leaves this machine).
func TestRequestWatchSeesRequests(t *testing.T) {
	file := writePage(t, fixture(), nil)
	b, _ := os.ReadFile(file)
	bad := strings.Replace(string(b), "</body>", `<img src="https://example.invalid/x.png"></body>`, 1)
	withImg := filepath.Join(filepath.Dir(file), "img.html")
	os.WriteFile(withImg, []byte(bad), 0o644)
	open2 := filepath.Join(filepath.Dir(file), "open.html")
	os.WriteFile(open2, []byte(`<!DOCTYPE html><title>x</title><img src="http://127.0.0.1:9/x.png">`), 0o644)

	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, withImg)
	if out := v.Outside(t, tab); len(out) == 0 {
		t.Error("an image the policy refuses went unseen")
	}
	tab, v = browsertest.Open(t, ctx, open2)
	if out := v.Outside(t, tab); len(out) == 0 {
		t.Error("an image request from a page without a policy went unseen")
	}
}

// TestPageCausalInChromium: with the causal tools' results the page
// shows the example's patching heatmap (each cell its value, in
// viz.Diverging's colour over the example's largest magnitude) and its
// attribution bars, and both follow the example picker; without them the
// section stays hidden.
func TestPageCausalInChromium(t *testing.T) {
	a := fixture()
	c := &Causal{Corruption: "other", Positions: []int{3, 5}, Rows: []string{"L0H0", "L1H1", "resid L0"}, Parts: []string{"embed", "L0H0", "bias"}}
	for n := range a.N {
		v := float64(n + 1)
		c.Patch = append(c.Patch, [][]float64{{0.5 * v, 0}, {-0.25, 0.125}, {0, 0.01}})
		c.Attribution = append(c.Attribution, []float64{v, -1, 0.5})
		c.Logit = append(c.Logit, v-0.5)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "causal page", a, analysis.ScoreAll(a), c, named); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "causal.html")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, file)
	cells := func() []string {
		return browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#patch td")].map(e => e.textContent + " " + getComputedStyle(e).backgroundColor)`)
	}
	hex := func(x float64) string {
		col := viz.Diverging(x)
		return fmt.Sprintf("rgb(%d, %d, %d)", col.R, col.G, col.B)
	}
	want := []string{"0.50 " + hex(1), "0.00 " + hex(0), "-0.25 " + hex(-0.5), "0.13 " + hex(0.25), "0.00 " + hex(0), "0.01 " + hex(0.02)}
	if got := cells(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("example 0's patching cells:\n%v\nwant\n%v", got, want)
	}
	headers := func() string {
		return browsertest.Eval[string](t, tab, `[...document.querySelectorAll("#patch th")].map(e => e.textContent).join("|")`)
	}
	if head := headers(); head != "|3 "+vocab[a.Tokens[3]]+"|5 "+vocab[a.Tokens[5]]+"|L0H0|L1H1|resid L0" {
		t.Errorf("patching headers %q", head)
	}
	bars := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#attr .bar")].map(e => e.querySelector(".name").textContent + " " + e.querySelector(".value").textContent)`)
	if strings.Join(bars, "|") != "embed 1.000|L0H0 -1.000|bias 0.500" {
		t.Errorf("attribution bars %v", bars)
	}
	browsertest.Eval[bool](t, tab, `(() => { const s = document.getElementById("example"); s.value = "2"; s.dispatchEvent(new Event("change")); return true; })()`)
	if got := cells(); got[0] != "1.50 "+hex(1) || got[2] != "-0.25 "+hex(-0.25/1.5) {
		t.Errorf("example 2's patching cells %v", got)
	}
	// Example 2's position 3 is the long name: cut in its column's header.
	if head := headers(); a.Tokens[2*T+3] != 9 || head != "|3 "+vocabLabel[9]+"|5 "+vocab[a.Tokens[2*T+5]]+"|L0H0|L1H1|resid L0" {
		t.Errorf("example 2's patching headers %q", head)
	}
	if note := browsertest.Eval[string](t, tab, `document.getElementById("attr-note").textContent`); !strings.Contains(note, "2.500") {
		t.Errorf("example 2's attribution note %q", note)
	}
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
	if out := v.Outside(t, tab); len(out) > 0 {
		t.Errorf("requests: %v", out)
	}
	// Without the results the section is hidden, and a page whose
	// results cover fewer examples than it shows is refused.
	plain := writePage(t, a, nil)
	tab, _ = browsertest.Open(t, ctx, plain)
	if !browsertest.Eval[bool](t, tab, `document.getElementById("causal").hidden`) {
		t.Error("the causal section shows without results")
	}
	c.Patch = c.Patch[:1]
	if err := Write(&buf, "short", a, nil, c, nil); err == nil {
		t.Error("results for 1 example on a page of 3")
	}
}

// checkAxes: every head's query labels (left) and key labels (below) are
// example n's tokens as label labels them, every step-th shown, each
// centred on its row or column, and no two shown labels overlap.
func checkAxes(t *testing.T, tab context.Context, a *analysis.Attention, n, step int, label func(id int) string) {
	t.Helper()
	for l := range a.L {
		for h := range a.H {
			checkHeadAxes(t, tab, a, analysis.HeadName(l, h), n, step, label)
		}
	}
}

// checkHeadAxes is checkAxes for the one head name.
func checkHeadAxes(t *testing.T, tab context.Context, a *analysis.Attention, name string, n, step int, label func(id int) string) {
	t.Helper()
	for _, axis := range []string{"queries", "keys"} {
		// Each label's text box (a range over its text, not its
		// box in the layout): left, top, right, bottom.
		labels := browsertest.Eval[[]struct {
			Text string
			Box  []float64
		}](t, tab, fmt.Sprintf(`[...document.getElementById("%s-%s").children].map(s => {
			const r = document.createRange(); r.selectNodeContents(s); const b = r.getBoundingClientRect();
			return {Text: s.textContent, Box: [b.left + scrollX, b.top + scrollY, b.right + scrollX, b.bottom + scrollY]}; })`, axis, name))
		if len(labels) != a.T {
			t.Fatalf("%s's %s: %d labels, want %d", name, axis, len(labels), a.T)
		}
		var prev []float64
		for i, lab := range labels {
			want := ""
			if i%step == 0 {
				want = label(a.Tokens[n*a.T+i])
			}
			if lab.Text != want {
				t.Errorf("%s's %s label %d is %q, want %q (example %d)", name, axis, i, lab.Text, want, n)
			}
			if want == "" {
				continue
			}
			b := lab.Box
			x, y := cellCenter(t, tab, name, i, i)
			centre, at := (b[1]+b[3])/2, y
			if axis == "keys" {
				centre, at = (b[0]+b[2])/2, x
			}
			if d := centre - at; d < -1.5 || d > 1.5 {
				t.Errorf("%s's %s label %d %q is centred at %.1f, its cell at %.1f", name, axis, i, want, centre, at)
			}
			if prev != nil && prev[0] < b[2] && b[0] < prev[2] && prev[1] < b[3] && b[1] < prev[3] {
				t.Errorf("%s's %s labels overlap before %d: %v and %v", name, axis, i, prev, b)
			}
			prev = b
		}
	}
}

// TestLongExampleAxes: at T=48 a cell is 4 pixels, narrower than a line
// of label text: every third token labels the axes, clear of the next.
func TestLongExampleAxes(t *testing.T) {
	const long = 48
	a := &analysis.Attention{Causal: true, N: 1, L: 1, H: 2, T: long, Probs: make([]float32, 2*long*long)}
	for i := range long {
		a.Tokens = append(a.Tokens, i%7)
		for h := range 2 {
			a.Probs[(h*long+i)*long+i] = 1
		}
	}
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, writePage(t, a, nil))
	checkAxes(t, tab, a, 0, 3, viz.TokenLabel)
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
}

// bigShape is one example of 4 layers of 8 heads at T=64, the size of
// issue 38's big training: each head attends to its previous token.
func bigShape() *analysis.Attention {
	const L, H, T = 4, 8, 64
	a := &analysis.Attention{Causal: true, N: 1, L: L, H: H, T: T, Probs: make([]float32, L*H*T*T)}
	for i := range T {
		a.Tokens = append(a.Tokens, (5*i)%64)
		for k := range L * H {
			a.Probs[(k*T+i)*T+max(i-1, 0)] = 1
		}
	}
	return a
}

// TestBigShapeZoom: at 32 heads of T=64 the page opens with 4-pixel cells
// and every third label, none overlapping; the zoom control makes cells
// 16 pixels with every label; picking one head hides the others and
// draws it large, and hovering it reads out the cell under the pointer.
func TestBigShapeZoom(t *testing.T) {
	a := bigShape()
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, writePage(t, a, nil))
	if w := browsertest.Eval[int](t, tab, `document.getElementById("head-L3H7").width`); w != 64*4 {
		t.Errorf("a head's canvas is %d pixels wide, want 4 a cell", w)
	}
	checkHeadAxes(t, tab, a, "L0H0", 0, 3, viz.TokenLabel)
	checkHeadAxes(t, tab, a, "L3H7", 0, 3, viz.TokenLabel)

	browsertest.Eval[bool](t, tab, `(() => { const z = document.getElementById("zoom"); z.value = "16"; z.dispatchEvent(new Event("input")); return true; })()`)
	if w := browsertest.Eval[[]int](t, tab, `[...document.querySelectorAll("canvas.pattern")].map(c => c.width)`); len(w) != 32 || w[0] != 64*16 || w[31] != 64*16 {
		t.Errorf("zoomed canvases %v, want 32 of %d pixels", w, 64*16)
	}
	checkHeadAxes(t, tab, a, "L2H5", 0, 1, viz.TokenLabel)

	browsertest.Eval[bool](t, tab, `(() => { const f = document.getElementById("focus"); f.value = "31"; f.dispatchEvent(new Event("change")); return true; })()`)
	shown := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll(".head")].filter(h => h.offsetParent !== null).map(h => h.querySelector("b").textContent)`)
	if strings.Join(shown, " ") != "L3H7" {
		t.Errorf("with L3H7 picked the page shows %v", shown)
	}
	cell := browsertest.Eval[int](t, tab, `document.getElementById("head-L3H7").width`) / 64
	if cell < 12 {
		t.Errorf("the picked head's cells are %d pixels", cell)
	}
	checkHeadAxes(t, tab, a, "L3H7", 0, 1, viz.TokenLabel)
	x, y := cellCenter(t, tab, "L3H7", 40, 39)
	browsertest.Eval[bool](t, tab, fmt.Sprintf(`(scrollTo(0, %f), true)`, y-200))
	sy := browsertest.Eval[float64](t, tab, `scrollY`)
	if err := chromedp.Do(tab, chromedp.MouseEvent(chromedp.MouseMoved, x, y-sy)); err != nil {
		t.Fatal(err)
	}
	if text, _ := readout(t, tab); !strings.Contains(text, "L3H7 · query 40") || !strings.Contains(text, "key 39") || !strings.HasSuffix(text, "1.000") {
		t.Errorf("hovering L3H7's cell (40, 39) reads %q", text)
	}
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
}

// circuitFixture is a circuit of two edges and five others, one of them
// too small to list.
func circuitFixture() *Circuit {
	return &Circuit{Corruption: "first-half", Direction: "noising", Examples: 250, Threshold: 0.9, Faithfulness: 0.9312,
		Edges: []CircuitEdge{
			{Name: "L0H1->L1H1.k", From: "L0H1", To: "L1H1.k", Effect: 0.41, Attribution: 0.38, In: true},
			{Name: "embed->L0H1.v", From: "embed", To: "L0H1.v", Effect: 0.002, Attribution: 0.001},
			{Name: "L1H1->logits", From: "L1H1", To: "logits", Effect: 0.87, Attribution: 0.9, In: true},
			{Name: "embed->L1H1.v", From: "embed", To: "L1H1.v", Effect: 0.3, Attribution: 0.2},
			{Name: "mlp0->logits", From: "mlp0", To: "logits", Effect: -0.05, Attribution: -0.04},
			{Name: "pos_embed->L0H1.q", From: "pos_embed", To: "L0H1.q", Effect: 0.1, Attribution: 0.1},
		}}
}

// TestPageCircuit: the page lists the circuit's edges by effect, then
// the others by magnitude, at most MaxOtherEdges of them.
func TestPageCircuit(t *testing.T) {
	p := pageCircuit(circuitFixture())
	var got []string
	for _, e := range p.Edges {
		got = append(got, fmt.Sprintf("%s %.2f %v", e.Name, e.Effect, e.In))
	}
	want := "L1H1->logits 0.87 true|L0H1->L1H1.k 0.41 true|embed->L1H1.v 0.30 false|pos_embed->L0H1.q 0.10 false|mlp0->logits -0.05 false"
	if strings.Join(got, "|") != want || p.Total != 6 || p.Hidden != 0 || p.Faithfulness != 0.931 {
		t.Errorf("listed %q (total %d, hidden %d, faithfulness %v), want %q", strings.Join(got, "|"), p.Total, p.Hidden, p.Faithfulness, want)
	}
	c := circuitFixture()
	for k := range MaxOtherEdges + 3 {
		c.Edges = append(c.Edges, CircuitEdge{Name: fmt.Sprintf("e%d", k), From: "embed", To: "logits", Effect: -0.01 - float64(k)/1000})
	}
	p = pageCircuit(c)
	// The others: 0.3, 0.1, -0.05, then e26 (-0.036) down to e6; e5 to
	// e0 are counted as not listed, the 0.002 edge not even counted.
	last := p.Edges[len(p.Edges)-1].Name
	if len(p.Edges) != 2+MaxOtherEdges || p.Hidden != 6 || p.Edges[5].Name != "e26" || last != "e6" {
		t.Errorf("%d edges listed (e26 at %s, last %s), %d hidden; want %d, e26 at 5, e6, 6", len(p.Edges), p.Edges[5].Name, last, p.Hidden, 2+MaxOtherEdges)
	}
}

// TestPageCircuitInChromium: the circuit section names the measurement
// and the faithfulness, lists every listed edge with its effect, and
// draws each as a line between its nodes, the circuit's nodes marked;
// without a circuit the section is hidden.
func TestPageCircuitInChromium(t *testing.T) {
	a := fixture()
	c := &Causal{Corruption: "other", Positions: []int{3}, Rows: []string{"L0H0"}, Parts: []string{"embed"}, Circuit: circuitFixture()}
	for range a.N {
		c.Patch = append(c.Patch, [][]float64{{0.5}})
		c.Attribution = append(c.Attribution, []float64{1})
		c.Logit = append(c.Logit, 1)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "circuit page", a, analysis.ScoreAll(a), c, nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "circuit.html")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, file)
	if browsertest.Eval[bool](t, tab, `document.getElementById("circuit").hidden`) {
		t.Fatal("the circuit section is hidden")
	}
	note := browsertest.Eval[string](t, tab, `document.getElementById("circuit-note").textContent`)
	for _, want := range []string{"2 of 6 edges keep 93.1%", "threshold 90%", "first-half corruption", "250 held-out"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note %q does not say %q", note, want)
		}
	}
	rows := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#circuit-edges tr")].slice(1).map(r => [...r.children].map(c => c.textContent).join(" "))`)
	want := []string{"L1H1->logits 0.870 0.900 yes", "L0H1->L1H1.k 0.410 0.380 yes", "embed->L1H1.v 0.300 0.200 no", "pos_embed->L0H1.q 0.100 0.100 no", "mlp0->logits -0.050 -0.040 no"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("circuit rows\n%v\nwant\n%v", rows, want)
	}
	// Each edge a line from its sender's box up to its receiver's (the
	// receiver's node is the head, whichever input it reads through).
	lines := browsertest.Eval[[]string](t, tab, `(() => {
		const nodes = {}; document.querySelectorAll("#circuit-graph g").forEach(g => { const r = g.querySelector("rect");
			nodes[g.textContent] = [+r.getAttribute("x") + +r.getAttribute("width") / 2, +r.getAttribute("y"), +r.getAttribute("y") + +r.getAttribute("height")]; });
		const name = (x, y, top) => Object.keys(nodes).find(n => Math.abs(nodes[n][0] - x) < 0.01 && Math.abs(nodes[n][top ? 1 : 2] - y) < 0.01);
		return [...document.querySelectorAll("#circuit-graph line")].map(l => name(+l.getAttribute("x1"), +l.getAttribute("y1"), true) + ">" +
			name(+l.getAttribute("x2"), +l.getAttribute("y2"), false) + (l.classList.contains("in") ? " in" : ""));
	})()`)
	wantLines := "mlp0>logits|pos_embed>L0H1|embed>L1H1|L0H1>L1H1 in|L1H1>logits in"
	if strings.Join(lines, "|") != wantLines {
		t.Errorf("lines %v, want %s", lines, wantLines)
	}
	marked := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#circuit-graph g.in")].map(g => g.textContent).sort()`)
	if strings.Join(marked, " ") != "L0H1 L1H1 logits" {
		t.Errorf("circuit nodes %v", marked)
	}
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
	if out := v.Outside(t, tab); len(out) > 0 {
		t.Errorf("requests: %v", out)
	}
	tab, _ = browsertest.Open(t, ctx, writePage(t, a, nil))
	if !browsertest.Eval[bool](t, tab, `document.getElementById("circuit").hidden`) {
		t.Error("the circuit section shows without a circuit")
	}
}

// TestExamplesWithinCells: the default model's page keeps MaxExamples
// examples; issue 38's big shape keeps as many as MaxCells allows, a
// model bigger still one.
func TestExamplesWithinCells(t *testing.T) {
	for _, c := range []struct{ n, L, H, T, want int }{
		{1000, 2, 2, 16, MaxExamples}, {3, 2, 2, 16, 3}, {1000, 4, 8, 64, 8}, {1000, 8, 16, 256, 1}, {0, 4, 8, 64, 0},
	} {
		if got := Examples(c.n, c.L, c.H, c.T); got != c.want {
			t.Errorf("Examples(%d, %d, %d, %d) = %d, want %d", c.n, c.L, c.H, c.T, got, c.want)
		}
	}
	a := bigShape()
	a.N = 10
	tokens, probs := a.Tokens, a.Probs
	for range 9 {
		a.Tokens, a.Probs = append(a.Tokens, tokens...), append(a.Probs, probs...)
	}
	var buf bytes.Buffer
	if err := Write(&buf, "big", a, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"tokens":`); n != 8 {
		t.Errorf("a page of 10 examples at 4 x 8 heads of T=64 holds %d, want 8", n)
	}
}

// TestCheckPath: a page goes to a file ending in .html or .htm (any
// case) or to stdout; anything else is refused naming the path.
func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"", "-", "a.html", "b/C.HTM"} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"a.png", "page", "x.html.txt"} {
		if err := CheckPath(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": the page is HTML") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

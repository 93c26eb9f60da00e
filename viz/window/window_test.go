package window

import (
	"fmt"
	"image"
	"image/color"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/glctx"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz"
)

// The GL threads and windows the tests share, one viewer at a time on
// each: display is a 4.1 core window, as headlab view opens for CPU
// kernels; gpuDisplay a 4.3 one with the GL device displayGL on it.
// skipReason is set when they could not be made outside CI.
var (
	display    *glctx.Thread
	gpuDisplay *glctx.Thread
	displayGL  *gl.Device // GL kernels on gpuDisplay's thread
	skipReason string
)

// gl41Env, set to 1 in the environment, makes the test binary a child of
// TestWindowGL41: Mesa is told to offer OpenGL 4.1 at most, only display
// is made, and it must be 4.1.
const gl41Env = "HEADLAB_WINDOW_TEST_GL41"

func TestMain(m *testing.M) {
	code := 1
	// GLFW's window and event calls run on the main thread, as in headlab.
	glctx.Main(func() { code = runTests(m) })
	os.Exit(code)
}

func runTests(m *testing.M) int {
	only41 := os.Getenv(gl41Env) == "1"
	var err error
	display, err = glctx.New(glctx.Options{Context: "glfw", Window: true, Major: 4, Minor: 1})
	if err == nil && only41 {
		major, minor := display.Version()
		fmt.Printf("display: OpenGL %d.%d: %s\n", major, minor, display.Renderer())
	}
	if err == nil && !only41 {
		gpuDisplay, err = glctx.New(glctx.Options{Context: "glfw", Window: true})
		if err == nil {
			displayGL, err = gl.New(gl.Options{Thread: gpuDisplay})
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "FAIL: CI is set and no OpenGL window (4.1 core, and 4.3 for the GL device):", err)
			return 1
		}
		skipReason = "no OpenGL window: " + err.Error()
	}
	code := m.Run()
	if displayGL != nil {
		displayGL.Close()
	}
	for _, th := range []*glctx.Thread{gpuDisplay, display} {
		if th != nil {
			th.Close()
		}
	}
	return code
}

func needGL(t *testing.T) {
	t.Helper()
	if display == nil {
		t.Skip(skipReason)
	}
}

// needGPU is needGL for the tests on the GL device.
func needGPU(t *testing.T) {
	t.Helper()
	needGL(t)
	if displayGL == nil {
		t.Skip("no GL device in this process (" + gl41Env + " is set)")
	}
}

// tiny is a small induction model that trains in about a second.
func tiny(steps int) train.Config {
	c := train.Defaults("induction")
	c.Steps = steps
	return c
}

// open opens a viewer and waits until it has trained and evaluated.
func open(t *testing.T, o Options) *Viewer {
	t.Helper()
	needGL(t)
	o.Display = display
	if displayGL != nil && o.Kernels == kernels.Device(displayGL) {
		o.Display = gpuDisplay
	}
	v, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	if err := v.WaitIdle(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	return v
}

// at is the framebuffer pixel at the centre of logical rectangle r.
func at(img *image.RGBA, r image.Rectangle, ppu int) color.RGBA {
	c := r.Min.Add(r.Max).Mul(ppu).Div(2)
	return img.RGBAAt(c.X, c.Y)
}

// checkPanels checks every cell of every panel shown in a screenshot:
// each has the colour of its weight in probs ([L][H][T][T]) in a figure,
// exactly, and that every title band holds text.
func checkPanels(t *testing.T, img *image.RGBA, lay Layout, ppu int, probs []float32, causal bool) {
	t.Helper()
	if want := lay.Size.Mul(ppu); img.Rect.Size() != want {
		t.Fatalf("screenshot is %v, want %v", img.Rect.Size(), want)
	}
	T := lay.T
	bad := 0
	for l := 0; l < lay.L; l++ {
		for h := 0; h < lay.H; h++ {
			if !lay.Shown(l, h) {
				continue
			}
			for i := 0; i < T; i++ {
				for j := 0; j < T; j++ {
					got := at(img, lay.CellRect(l, h, i, j), ppu)
					// Exactly a figure's colour for the weight.
					want := viz.CellColor(causal && j > i, probs[((l*lay.H+h)*T+i)*T+j])
					if got != want {
						if bad < 5 {
							t.Errorf("L%dH%d cell (%d,%d): pixel %v, want %v", l, h, i, j, got, want)
						}
						bad++
					}
				}
			}
			if n := brightPixels(img, lay.Title(l, h), ppu); n < 40 {
				t.Errorf("L%dH%d: title band has %d text pixels, want a drawn title", l, h, n)
			}
			p := lay.Panel(l, h)
			labels := image.Rect(p.Min.X-lay.labelW, p.Min.Y, p.Min.X-2, p.Max.Y)
			if n := brightPixels(img, labels, ppu); n < 2*T {
				t.Errorf("L%dH%d: query labels have %d text pixels", l, h, n)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d cells differ", bad)
	}
}

// brightPixels counts text-coloured pixels in logical rectangle r.
func brightPixels(img *image.RGBA, r image.Rectangle, ppu int) int {
	r = image.Rectangle{r.Min.Mul(ppu), r.Max.Mul(ppu)}.Intersect(img.Rect)
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img.RGBAAt(x, y)
			if int(c.R)+int(c.G)+int(c.B) > 3*130 {
				n++
			}
		}
	}
	return n
}

func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		L, H, T int
		size    image.Point
	}{{2, 2, 16, image.Pt(1100, 850)}, {1, 1, 15, image.Pt(720, 640)}, {4, 8, 16, image.Pt(1200, 900)}, {3, 4, 16, image.Pt(500, 400)}} {
		g := NewLayout(tc.L, tc.H, tc.T, 1, tc.size)
		if g.Cell < minCell || g.Cell > maxCell {
			t.Errorf("%+v: cell %d", tc, g.Cell)
		}
		// viz.FitCell's rule: the largest cell with which the panels fit
		// between the sidebar and the legend, within the bounds.
		fits := func(pg viz.PanelGrid[int]) bool {
			return pg.Right()+legendW+margin <= tc.size.X && pg.Bottom()+margin <= tc.size.Y
		}
		bigger := g.grid
		bigger.Cell++
		if !g.Paged() && (g.Cell > minCell && !fits(g.grid) || g.Cell < maxCell && fits(bigger)) {
			t.Errorf("%+v: cell %d is not the largest that fits", tc, g.Cell)
		}
		// Where every panel would have cells under readCell, as many
		// whole panels of readCell as fit are shown, and no more.
		wider, taller := g.grid, g.grid
		wider.Heads++
		taller.Layers++
		if g.Paged() && (g.Cell != readCell || !fits(g.grid) || g.ShownH < tc.H && fits(wider) || g.ShownL < tc.L && fits(taller)) {
			t.Errorf("%+v: %d x %d panels of cell %d shown", tc, g.ShownL, g.ShownH, g.Cell)
		}
		var panels []image.Rectangle
		for l := 0; l < tc.L; l++ {
			for h := 0; h < tc.H; h++ {
				p := g.Panel(l, h)
				if !g.Shown(l, h) {
					if !p.Empty() {
						t.Errorf("%+v: L%dH%d is not shown but has panel %v", tc, l, h, p)
					}
					continue
				}
				for _, q := range panels {
					if p.Overlaps(q) {
						t.Errorf("%+v: panel L%dH%d %v overlaps %v", tc, l, h, p, q)
					}
				}
				panels = append(panels, p)
				if b := g.OffButton(l, h); !b.In(g.Title(l, h)) || b.Overlaps(p) {
					t.Errorf("%+v: button %v outside title %v", tc, b, g.Title(l, h))
				}
				for i := 0; i < tc.T; i++ {
					for j := 0; j < tc.T; j++ {
						r := g.CellRect(l, h, i, j)
						for _, pt := range []image.Point{r.Min, r.Max.Sub(image.Pt(1, 1))} {
							gl, gh, gi, gj, ok := g.CellAt(pt)
							if !ok || gl != l || gh != h || gi != i || gj != j {
								t.Fatalf("%+v: CellAt(%v) = %d %d %d %d %v, want %d %d %d %d", tc, pt, gl, gh, gi, gj, ok, l, h, i, j)
							}
						}
					}
				}
			}
		}
		if _, _, _, _, ok := g.CellAt(image.Pt(5, 5)); ok {
			t.Errorf("%+v: the sidebar is a cell", tc)
		}
	}
	// The preferred size fits the panels at a comfortable cell size.
	sz := PreferredSize(2, 2, 16, 1, image.Pt(1216, 942))
	if g := NewLayout(2, 2, 16, 1, sz); g.Cell < 20 || g.TwoLine {
		t.Errorf("preferred size %v gives cell %d, two-line titles %v", sz, g.Cell, g.TwoLine)
	}
	// A big model shrinks its cells to fit the screen, and uses them.
	within := image.Pt(1216, 942)
	sz = PreferredSize(3, 4, 16, 1, within)
	if g := NewLayout(3, 4, 16, 1, sz); !sz.In(image.Rectangle{Max: within.Add(image.Pt(1, 1))}) || g.Cell < 10 {
		t.Errorf("3x4 heads: preferred size %v within %v gives cell %d", sz, within, g.Cell)
	}
}

// TestHiDPIMetrics: a framebuffer twice the window (a Retina screen) draws
// logical pixels two framebuffer pixels wide, and cursor positions in
// window coordinates land on the same logical pixel.
func TestHiDPIMetrics(t *testing.T) {
	m := metrics{win: image.Pt(800, 600), fb: image.Pt(1600, 1200), ppu: 2}
	if got := m.size(); got != image.Pt(800, 600) {
		t.Errorf("logical size %v", got)
	}
	if got := m.toLogical(100.5, 50.2); got != image.Pt(100, 50) {
		t.Errorf("toLogical %v", got)
	}
	if x, y := m.toWindow(100, 50); x != 100 || y != 50 {
		t.Errorf("toWindow %v %v", x, y)
	}
	// A 2x content scale on X11: framebuffer = window, 2 pixels per logical.
	m = metrics{win: image.Pt(1600, 1200), fb: image.Pt(1600, 1200), ppu: 2}
	if got := m.toLogical(201, 101); got != image.Pt(100, 50) {
		t.Errorf("X11 HiDPI toLogical %v", got)
	}
}

// TestScreenshotAndClick trains a small model, checks the screenshot's
// panels pixel by pixel, then switches a head off with its ⊘ button and
// back on.
func TestScreenshotAndClick(t *testing.T) {
	v := open(t, Options{Config: tiny(120), Steps: 120, Kernels: cpu.New()})
	s := v.Status()
	if s.Step != 120 || s.Running {
		t.Fatalf("after WaitIdle: step %d, running %v", s.Step, s.Running)
	}
	if len(s.Titles) != 4 {
		t.Fatalf("titles %q", s.Titles)
	}
	for k, title := range s.Titles {
		if want := fmt.Sprintf("L%dH%d %c ", k/2, k%2, viz.MidDot); !strings.HasPrefix(title, want) {
			t.Errorf("title %q, want prefix %q", title, want)
		}
	}
	img, err := v.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	lay, ppu := v.Layout()
	if lay.L != 2 || lay.H != 2 || lay.T != 16 {
		t.Fatalf("layout %d x %d panels of T=%d", lay.L, lay.H, lay.T)
	}
	checkPanels(t, img, lay, ppu, s.Probs, true)
	// Nothing right of the last panel but the legend.
	last := lay.Panel(0, 1)
	if c := img.RGBAAt((last.Max.X+6)*ppu, (last.Min.Y+20)*ppu); c != colBackground {
		t.Errorf("right of the grid: %v, want background", c)
	}

	base := s.Accuracy
	v.Click(v.OffButton(0, 1))
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	s = v.Status()
	if !slices.Equal(s.Off, []string{"L0H1"}) {
		t.Fatalf("after clicking L0H1's button: off %q", s.Off)
	}
	t.Logf("held-out accuracy %.4f, with L0H1 off %.4f", base, s.Accuracy)
	if s.Accuracy == base {
		t.Errorf("switching L0H1 off left the accuracy at %.4f", base)
	}
	img, err = v.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt((lay.OffButton(0, 1).Min.X+1)*ppu, (lay.OffButton(0, 1).Min.Y+1)*ppu); c != colOff {
		t.Errorf("switched-off button is %v, want %v", c, colOff)
	}
	v.Click(v.OffButton(0, 1))
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	if s = v.Status(); len(s.Off) != 0 || s.Accuracy != base {
		t.Errorf("switched back on: off %q, accuracy %.4f, want none and %.4f", s.Off, s.Accuracy, base)
	}
}

// TestClickBreaksTheCircuit is the note's demonstration on the default
// model (the next-token loss, seed 1), trained until its circuit has
// formed: clicking the layer-1 induction head's button collapses the
// held-out accuracy, and clicking it again restores it.
func TestClickBreaksTheCircuit(t *testing.T) {
	v := open(t, Options{Config: tiny(600), Steps: 600, Kernels: cpu.New()})
	s := v.Status()
	base := s.Accuracy
	best, score := -1, 0.0
	for k, title := range s.Titles {
		var name, label string
		var sc float64
		if _, err := fmt.Sscanf(strings.Replace(title, string(viz.MidDot), "|", 1), "%s | %s %g", &name, &label, &sc); err == nil &&
			k/2 == 1 && label == "induction" && sc > score {
			best, score = k, sc
		}
	}
	if best < 0 || base < 0.95 {
		t.Fatalf("after 600 steps: accuracy %.3f, titles %q; want a layer-1 induction head and at least 95%%", base, s.Titles)
	}
	v.Click(v.OffButton(1, best%2))
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	off := v.Status()
	t.Logf("held-out accuracy %.3f; with %s off %.3f", base, s.Titles[best], off.Accuracy)
	if off.Accuracy > 0.3 {
		t.Errorf("switching off %s left %.3f, want the circuit broken (30%% or less)", s.Titles[best], off.Accuracy)
	}
	v.Click(v.OffButton(1, best%2))
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	if again := v.Status(); again.Accuracy != base || len(again.Off) != 0 {
		t.Errorf("switched back on: accuracy %.3f, off %q; want %.3f and none", again.Accuracy, again.Off, base)
	}
}

// TestGPUTextures trains on the GL kernels of the display backend itself,
// so the heatmaps come from the Probs buffer without a CPU copy; they must
// show the same attention the model computed.
func TestGPUTextures(t *testing.T) {
	needGPU(t)
	v := open(t, Options{Config: tiny(40), Steps: 40, Kernels: displayGL})
	if !v.gpuFill {
		t.Fatal("GL kernels on the display backend did not select the GPU copy")
	}
	v.mu.Lock()
	onGPU := v.st.snap != nil && v.st.snap.onGPU
	v.mu.Unlock()
	if !onGPU {
		t.Fatal("snapshot not filled on the GPU")
	}
	for range 2 { // the shown example, then the next one: another slice
		img, err := v.Screenshot()
		if err != nil {
			t.Fatal(err)
		}
		lay, ppu := v.Layout()
		checkPanels(t, img, lay, ppu, v.Status().Probs, true)
		v.mu.Lock()
		v.keyLocked(glfw.KeyN, 0, false)
		v.mu.Unlock()
	}
	if e := v.Status().Example; e != 2 {
		t.Errorf("example %d after two presses of n", e)
	}
}

// TestControls covers the keys, a resize and a picker (which restarts
// training with the new model shape).
func TestControls(t *testing.T) {
	c := tiny(30)
	c.Positions = false
	v := open(t, Options{Config: c, Steps: 30, Kernels: cpu.New()})
	press := func(k glfw.Key) {
		v.mu.Lock()
		v.keyLocked(k, 0, false)
		v.mu.Unlock()
	}
	press(glfw.KeyP)
	if e := v.Status().Example; e != capturedN-1 {
		t.Errorf("p from the first example: example %d", e)
	}
	press(glfw.KeySpace) // past the stop: trains on
	time.Sleep(200 * time.Millisecond)
	press(glfw.KeySpace)
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	if s := v.Status(); s.Step <= 30 || s.Running {
		t.Errorf("run then pause: step %d, running %v", s.Step, s.Running)
	}

	// Resize: the layout follows the framebuffer.
	if err := display.Call(func() { v.win.SetSize(820, 660) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := v.Frame(); err != nil {
			t.Fatal(err)
		}
		if lay, ppu := v.Layout(); lay.Size.Mul(ppu) == image.Pt(820, 660) {
			break
		}
		if time.Now().After(deadline) {
			lay, _ := v.Layout()
			t.Fatalf("layout size %v after resizing to 820x660", lay.Size)
		}
		time.Sleep(10 * time.Millisecond)
	}
	img, err := v.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	lay, ppu := v.Layout()
	checkPanels(t, img, lay, ppu, v.Status().Probs, true)

	// The layers picker's ">" restarts training with three layers.
	v.mu.Lock()
	var next image.Rectangle
	for _, w := range v.widgetsLocked(v.layoutLocked()) {
		if w.label == ">" && w.r.Min.Y == yPickers+rowPitch {
			next = w.r
		}
	}
	v.mu.Unlock()
	x, y := v.st.m.toWindow(float64(next.Min.X+2), float64(next.Min.Y+2))
	v.Click(x, y)
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	if s := v.Status(); len(s.Titles) != 6 || s.Step != 30 {
		t.Errorf("after layers >: %d titles at step %d, want 6 at 30", len(s.Titles), s.Step)
	}

	press(glfw.KeyEscape)
	closed, err := v.Frame()
	if err != nil || !closed {
		t.Errorf("Esc: closed %v, err %v", closed, err)
	}
}

// TestSavedModel views a checkpoint without training: the step is the
// checkpoint's, nothing trains, and the panels show its attention.
func TestSavedModel(t *testing.T) {
	needGL(t)
	m, _, err := train.Run(tiny(50), cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := open(t, Options{Model: m, Source: "test", Kernels: cpu.New()})
	s := v.Status()
	if s.Step != 50 || s.Running {
		t.Errorf("checkpoint view: step %d, running %v", s.Step, s.Running)
	}
	v.mu.Lock()
	v.togglePauseLocked() // no trainer: does nothing
	running := v.st.running
	v.mu.Unlock()
	if running {
		t.Error("run started training a checkpoint")
	}
	img, err := v.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	lay, ppu := v.Layout()
	checkPanels(t, img, lay, ppu, s.Probs, true)

	// A head switched off, then the ablation button pressed: the accuracy
	// shown is the mean-ablated accuracy on the viewer's examples.
	x, y := v.OffButton(0, 1)
	v.Click(x, y)
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	zeroed := v.Status().Accuracy
	v.mu.Lock()
	var button image.Rectangle
	for _, w := range v.widgetsLocked(v.layoutLocked()) {
		if w.r.Min.Y == yAblation {
			button = w.r
		}
	}
	v.mu.Unlock()
	x, y = v.st.m.toWindow(float64(button.Min.X+2), float64(button.Min.Y+2))
	v.Click(x, y)
	if err := v.WaitIdle(time.Minute); err != nil {
		t.Fatal(err)
	}
	e, err := train.NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	held := []*tasks.Batch{train.QuickHeldOut(m)}
	ab, err := inspect.NewAblator(e, held, inspect.AblateMean)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ab.Snapshot(held, train.SnapshotOptions{Off: [][][]bool{{{false, true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Status(); got.Accuracy != want[0].Accuracy || len(got.Off) != 1 {
		t.Errorf("L0H1 mean-ablated: the viewer shows %v (off %v), want %v (zeroed: %v)", got.Accuracy, got.Off, want[0].Accuracy, zeroed)
	}
}

// TestOpenRefusesNoKernels: the viewer computes on the device its caller
// opened from --backend and never makes one of its own.
func TestOpenRefusesNoKernels(t *testing.T) {
	v, err := Open(Options{Config: tiny(10), Steps: 10, Display: &glctx.Thread{}})
	if err == nil || !strings.Contains(err.Error(), "Options.Kernels is nil") {
		if v != nil {
			v.Close()
		}
		t.Fatalf("Open with no kernels: %v, want a refusal", err)
	}
}

package viz

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// Golden-image tests, as in Gio's rendertest: fixed inputs are drawn and
// compared with the PNGs checked in under testdata/golden, within a
// tolerance that absorbs anti-aliasing and rounding differences (another
// CPU, fused multiply-add) but not a moved, missing or squashed panel.
//
//	go test ./viz/ -run Golden -update   # after a deliberate change; look at the diff
var update = flag.Bool("update", false, "rewrite the golden images in testdata/golden")

const (
	goldenDPI = 72
	// A pixel differs when a channel is off by more than pixelTol; an
	// image matches when at most maxDiffer of its pixels differ.
	pixelTol  = 64
	maxDiffer = 0.002
)

// goldenFigures are the inputs of the golden images, by file name.
func goldenFigures() map[string]func() (*Figure, error) {
	long := makeGrid(2, 2, 64, true, func(k, i, j int) float32 {
		switch {
		case j > i:
			return 0
		case k == 0:
			return b2f(j == max(i-1, 0))
		case k == 1:
			return b2f(j == 0)
		case k == 2:
			return b2f(i >= 33 && j == i-31 || i < 33 && j == 0)
		}
		return 1 / float32(i+1)
	})
	long.Title = "T=64 · previous-token, sink, induction, uniform"
	return map[string]func() (*Figure, error){
		"heatmaps":           func() (*Figure, error) { return Heatmaps(demoGrid()) },
		"heatmaps64":         func() (*Figure, error) { return Heatmaps(long) },
		"arcs":               func() (*Figure, error) { return Arcs(demoGrid()) },
		"arcs64":             func() (*Figure, error) { return Arcs(long) },
		"curves":             demoCurves().Figure,
		"lines":              demoLines().Figure,
		"histogram":          demoHistogram().Figure,
		"accuracy-histogram": demoAccuracyHistogram().Figure,
	}
}

func TestGolden(t *testing.T) {
	for name, mk := range goldenFigures() {
		t.Run(name, func(t *testing.T) {
			f, err := mk()
			img := render(t, f, err, goldenDPI)
			path := filepath.Join("testdata", "golden", name+".png")
			if *update {
				if err := writePNG(path, img); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := readPNG(path)
			if err != nil {
				t.Fatalf("%v (go test ./viz/ -run Golden -update writes it)", err)
			}
			if frac, diff := mismatch(img, want); frac > maxDiffer {
				dir := filepath.Join(os.TempDir(), "headlab-golden")
				_ = os.MkdirAll(dir, 0o755)
				_ = writePNG(filepath.Join(dir, name+".got.png"), img)
				if diff != nil {
					_ = writePNG(filepath.Join(dir, name+".diff.png"), diff)
				}
				t.Errorf("%s: %.2f%% of the pixels differ from %s (at most %.2f%%); got and diff in %s",
					name, 100*frac, path, 100*maxDiffer, dir)
			}
		})
	}
}

// TestGoldenCatchesBrokenLayouts checks the tolerance is tight enough: a
// figure that lost a panel's contents or one label does not match.
func TestGoldenCatchesBrokenLayouts(t *testing.T) {
	for name, mk := range map[string]func() (*Figure, error){
		"curves": func() (*Figure, error) { c := demoCurves(); c.Loss.Values = nil; return c.Figure() },
		"heatmaps": func() (*Figure, error) {
			g := demoGrid()
			g.Panels[3].Probs = make([]float32, g.T*g.T)
			return Heatmaps(g)
		},
		"histogram": func() (*Figure, error) { h := demoHistogram(); h.LineLabel = ""; return h.Figure() },
	} {
		want, err := readPNG(filepath.Join("testdata", "golden", name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := mk()
		frac, _ := mismatch(render(t, f, err, goldenDPI), want)
		t.Logf("%s: %.2f%% of the pixels differ", name, 100*frac)
		if frac <= maxDiffer {
			t.Errorf("%s: a broken figure matches the golden image (%.3f%% of pixels differ)", name, 100*frac)
		}
	}
}

// mismatch is the fraction of pixels of got that differ from want, and
// an image of where (red); 1 and no image when the sizes differ.
func mismatch(got, want image.Image) (float64, *image.RGBA) {
	if got.Bounds().Size() != want.Bounds().Size() {
		return 1, nil
	}
	b := got.Bounds()
	diff := image.NewRGBA(b)
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA)
			w := color.RGBAModel.Convert(want.At(x-b.Min.X+want.Bounds().Min.X, y-b.Min.Y+want.Bounds().Min.Y)).(color.RGBA)
			off := max(absDiff(g.R, w.R), absDiff(g.G, w.G), absDiff(g.B, w.B), absDiff(g.A, w.A))
			if off > pixelTol {
				n++
				diff.SetRGBA(x, y, color.RGBA{255, 0, 0, 255})
			} else {
				v := 255 - (255-(int(g.R)+int(g.G)+int(g.B))/3)/4 // faint copy for context
				diff.SetRGBA(x, y, color.RGBA{uint8(v), uint8(v), uint8(v), 255})
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy()), diff
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return img, nil
}

func writePNG(path string, img image.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

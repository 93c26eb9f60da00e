// Package viz draws headlab's figures: heatmap grids and arc views of
// attention, training curves, pruning curves and sweep histograms. Every
// figure is drawn once, on gonum/plot's vg.Canvas, and written as PNG, SVG
// or PDF as the output file's extension says; text is set in Liberation
// Sans, the vector font gonum/plot ships.
package viz

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"headlab/internal/atomicfile"
)

// Figure is a drawing of a fixed size, in points (1/72 inch), ready for
// any of the output formats.
type Figure struct {
	W, H vg.Length
	draw func(c draw.Canvas)
}

// PNGDPI is the resolution of PNG output: two pixels per point, sharp
// enough for a slide or a paper's draft.
const PNGDPI = 144

// maxSide bounds a figure's sides (in points) so a bad shape cannot ask
// for gigabytes: 2,000 pt is 28 inches, 4,000 pixels at PNGDPI.
const maxSide = 2000

// Formats lists the output formats, by file extension.
var Formats = []string{".png", ".svg", ".pdf"}

// StreamFormat is the format of a figure written where no extension can
// choose one: to "-" (stdout), or to a device or pipe such as /dev/stdout.
const StreamFormat = ".png"

// CheckPath says, in one line, when path's extension names no format.
// Commands call it on their flags before any work starts.
func CheckPath(path string) error {
	_, err := format(path)
	return err
}

func format(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" && atomicfile.InPlace(path) {
		return StreamFormat, nil
	}
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("viz: %s: unknown figure format %q (want %s)", path, ext, strings.Join(Formats, ", "))
}

// Write draws f into path in the format its extension names, through a
// temporary file renamed into place, so path never holds half a figure;
// "-" is os.Stdout.
func Write(path string, f *Figure) error { return WriteStdout(path, os.Stdout, f) }

// WriteStdout is Write with "-" meaning stdout (a command run in-process
// by its tests has a stdout of its own).
func WriteStdout(path string, stdout io.Writer, f *Figure) error {
	ext, err := format(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := f.Encode(&buf, ext); err != nil {
		return err
	}
	if err := atomicfile.WriteStdout(path, stdout, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return fmt.Errorf("viz: %v", err)
	}
	return nil
}

// Encode writes f to w as ext: ".png", ".svg" or ".pdf".
func (f *Figure) Encode(w io.Writer, ext string) error {
	var c vg.CanvasWriterTo
	switch ext {
	case ".png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(background))}
	case ".svg":
		// Fonts embedded: the file looks the same on machines without
		// Liberation Sans.
		c = vgsvg.NewWith(vgsvg.UseWH(f.W, f.H), vgsvg.EmbedFonts(true))
	case ".pdf":
		c = newPDFCanvas(f.W, f.H)
	default:
		return fmt.Errorf("viz: unknown figure format %q", ext)
	}
	f.draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// Image renders f at dpi dots per inch (tests and golden images).
func (f *Figure) Image(dpi int) image.Image {
	c := vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(background))
	f.draw(draw.New(c))
	return c.Image()
}

// newFigure checks the size and wraps a drawing function whose
// coordinates run top-down from the figure's top-left corner.
func newFigure(kind string, w, h vg.Length, fn func(p *pen)) (*Figure, error) {
	if w > maxSide || h > maxSide {
		return nil, fmt.Errorf("viz: the %s figure would be %.0fx%.0f pt, more than %d per side", kind, w, h, maxSide)
	}
	return &Figure{W: w, H: h, draw: func(c draw.Canvas) { fn(&pen{c: c, h: h}) }}, nil
}

// The faces every figure uses.
var (
	sans = font.Font{Typeface: "Liberation", Variant: "Sans"}
	bold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

func init() {
	// gonum/plot's own text (axes, ticks, legends) in the same face as ours.
	plot.DefaultFont = sans
}

// style is a text style in face at size points.
func style(face font.Font, size vg.Length, col color.Color) draw.TextStyle {
	return draw.TextStyle{Color: col, Font: font.From(face, size), Handler: plot.DefaultTextHandler}
}

// fit cuts s to at most w wide in sty, ending in an ellipsis when cut.
func fit(sty draw.TextStyle, s string, w vg.Length) string { return Fit(s, w, sty.Width) }

// pen draws on a canvas in top-down coordinates (y grows downwards from
// the figure's top edge), which is how layouts are computed here.
type pen struct {
	c draw.Canvas
	h vg.Length
}

func (p *pen) pt(x, y vg.Length) vg.Point { return vg.Point{X: x, Y: p.h - y} }

// rect fills the box with corners (x0, y0) and (x1, y1).
func (p *pen) rect(x0, y0, x1, y1 vg.Length, col color.Color) {
	p.c.FillPolygon(col, []vg.Point{p.pt(x0, y0), p.pt(x1, y0), p.pt(x1, y1), p.pt(x0, y1)})
}

// frame strokes the outline of a box.
func (p *pen) frame(x0, y0, x1, y1 vg.Length, col color.Color, width vg.Length) {
	p.c.StrokeLines(draw.LineStyle{Color: col, Width: width},
		[]vg.Point{p.pt(x0, y0), p.pt(x1, y0), p.pt(x1, y1), p.pt(x0, y1), p.pt(x0, y0)})
}

func (p *pen) line(x0, y0, x1, y1 vg.Length, sty draw.LineStyle) {
	p.c.StrokeLines(sty, []vg.Point{p.pt(x0, y0), p.pt(x1, y1)})
}

// text draws s with its anchor at (x, y): xa and ya as text.Style says
// (XLeft, XCenter, XRight; YTop, YCenter, YBottom), before rotation rot.
func (p *pen) text(sty draw.TextStyle, x, y vg.Length, s string, xa text.XAlignment, ya text.YAlignment, rot float64) {
	sty.XAlign, sty.YAlign, sty.Rotation = xa, ya, rot
	p.c.FillText(sty, p.pt(x, y), s)
}

// lineH is the height of one line of text at size points.
func lineH(size vg.Length) vg.Length { return size * 1.25 }

// Header sizes: the run's name, then one line saying how to read the figure.
const (
	margin    vg.Length = 10
	titleSize vg.Length = 11
	noteSize  vg.Length = 7.5
)

// headerH is the height of a header with a title and a note.
func headerH() vg.Length { return lineH(titleSize) + lineH(noteSize) + 4 }

// header draws the title (the run) and the note (how to read it) at the top.
func (p *pen) header(title, note string, w vg.Length) {
	ts, ns := style(bold, titleSize, textColor), style(sans, noteSize, mutedText)
	p.text(ts, margin, margin, fit(ts, title, w-2*margin), text.XLeft, text.YTop, 0)
	p.text(ns, margin, margin+lineH(titleSize), fit(ns, note, w-2*margin), text.XLeft, text.YTop, 0)
}

// headerW is how wide a figure must be to show its header in full.
func headerW(title, note string) vg.Length {
	return 2*margin + max(style(bold, titleSize, textColor).Width(title), style(sans, noteSize, mutedText).Width(note))
}

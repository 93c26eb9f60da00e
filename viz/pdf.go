package viz

// The PDF canvas. gonum/plot's vgpdf (v0.17) embeds its fonts as
// single-byte WinAnsi fonts but hands fpdf UTF-8 strings, so every rune
// past ASCII comes out as two wrong glyphs (gonum/plot issue 347: "L0H0 Â·
// uniform") and a title grows wider than the room measured for it; it
// also loses bold faces. This canvas is vgpdf's drawing, on the same fpdf
// document, with each face embedded through fpdf's UTF-8 TrueType support
// instead: the font is subset to the runes drawn, text is written as
// glyph IDs with a ToUnicode map (so pdftotext and copying read it back),
// and widths come from the same font the layout measured.
//
// Paths, colours, transforms and text placement follow vgpdf
// (gonum.org/v1/plot/vg/vgpdf, BSD-3-Clause, The Gonum Authors).

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// pdfEpoch is every PDF's creation date: the same figure, the same bytes.
var pdfEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// pdfCanvas is a vg.Canvas drawing into one fpdf page of w x h points.
type pdfCanvas struct {
	doc    *fpdf.Fpdf
	w, h   vg.Length
	stack  []vg.Length     // line widths, one per Push
	fonts  map[string]bool // the faces embedded, by name
	images int             // images drawn, for their names
	err    error           // the first face or image that failed
}

func newPDFCanvas(w, h vg.Length) *pdfCanvas {
	doc := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: w.Points(), Ht: h.Points()}})
	doc.SetCreationDate(pdfEpoch)
	doc.SetModificationDate(pdfEpoch)
	doc.SetCatalogSort(true)
	doc.SetMargins(0, 0, 0)
	doc.SetAutoPageBreak(false, 0)
	doc.AddPage()
	c := &pdfCanvas{doc: doc, w: w, h: h, stack: make([]vg.Length, 1), fonts: map[string]bool{}}
	// fpdf's origin is the top-left corner, y down; vg's is the
	// bottom-left, y up.
	c.Push()
	c.Translate(vg.Point{Y: h})
	c.Scale(1, -1)
	vg.Initialize(c)
	return c
}

func (c *pdfCanvas) Size() (w, h vg.Length) { return c.w, c.h }

func (c *pdfCanvas) SetLineWidth(w vg.Length) {
	c.stack[len(c.stack)-1] = w
	c.doc.SetLineWidth(w.Points())
}

func (c *pdfCanvas) SetLineDash(dashes []vg.Length, offs vg.Length) {
	ds := make([]float64, len(dashes))
	for i, d := range dashes {
		ds[i] = d.Points()
	}
	c.doc.SetDashPattern(ds, offs.Points())
}

func (c *pdfCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	r, g, b, a := clr.RGBA()
	c.doc.SetFillColor(int(r>>8), int(g>>8), int(b>>8))
	c.doc.SetDrawColor(int(r>>8), int(g>>8), int(b>>8))
	c.doc.SetTextColor(int(r>>8), int(g>>8), int(b>>8))
	c.doc.SetAlpha(float64(a)/math.MaxUint16, "Normal")
}

func (c *pdfCanvas) Rotate(r float64) { c.doc.TransformRotate(-r*180/math.Pi, 0, 0) }

func (c *pdfCanvas) Translate(pt vg.Point) { c.doc.TransformTranslate(pt.X.Points(), pt.Y.Points()) }

func (c *pdfCanvas) Scale(x, y float64) { c.doc.TransformScale(x*100, y*100, 0, 0) }

func (c *pdfCanvas) Push() {
	c.stack = append(c.stack, c.stack[len(c.stack)-1])
	c.doc.TransformBegin()
}

func (c *pdfCanvas) Pop() {
	c.doc.TransformEnd()
	c.stack = c.stack[:len(c.stack)-1]
}

func (c *pdfCanvas) Stroke(p vg.Path) {
	if c.stack[len(c.stack)-1] > 0 {
		c.path(p, "D")
	}
}

func (c *pdfCanvas) Fill(p vg.Path) { c.path(p, "F") }

// FillString writes s with its baseline's left end at pt, in f embedded
// as a UTF-8 TrueType font of its own name (bold and regular are two
// families, so neither is looked up under the other's style).
func (c *pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	if f.Font.Size == 0 || c.err != nil {
		return
	}
	family := f.Name() // LiberationSans-Bold: one per face, whatever its size
	if !c.fonts[family] {
		var src bytes.Buffer
		if _, err := f.Face.WriteSourceTo(nil, &src); err != nil {
			c.err = fmt.Errorf("viz: embedding %s in a PDF: %v", family, err)
			return
		}
		c.doc.AddUTF8FontFromBytes(family, "", src.Bytes())
		c.fonts[family] = true
	}
	c.doc.SetFont(family, "", f.Font.Size.Points())
	c.Push()
	defer c.Pop()
	c.Translate(pt)
	c.Scale(1, -1) // upright in fpdf's y-down space, origin at pt
	c.doc.Text(0, 0, s)
}

func (c *pdfCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		c.err = fmt.Errorf("viz: an image in a PDF: %v", err)
		return
	}
	c.images++
	name := fmt.Sprintf("image%d.png", c.images)
	opts := fpdf.ImageOptions{ImageType: "png", ReadDpi: true}
	c.doc.RegisterImageOptionsReader(name, opts, &buf)
	size := rect.Size()
	c.doc.ImageOptions(name, rect.Min.X.Points(), rect.Min.Y.Points(), size.X.Points(), size.Y.Points(), false, opts, 0, "")
}

// path draws p, stroked ("D") or filled ("F").
func (c *pdfCanvas) path(p vg.Path, style string) {
	var x0, y0 float64
	for _, comp := range p {
		x, y := comp.Pos.X.Points(), comp.Pos.Y.Points()
		switch comp.Type {
		case vg.MoveComp:
			x0, y0 = x, y
			c.doc.MoveTo(x, y)
		case vg.LineComp:
			c.doc.LineTo(x, y)
		case vg.ArcComp:
			c.arc(comp)
		case vg.CurveComp:
			switch len(comp.Control) {
			case 1:
				c.doc.CurveTo(comp.Control[0].X.Points(), comp.Control[0].Y.Points(), x, y)
			case 2:
				c.doc.CurveBezierCubicTo(comp.Control[0].X.Points(), comp.Control[0].Y.Points(),
					comp.Control[1].X.Points(), comp.Control[1].Y.Points(), x, y)
			default:
				panic("viz: a curve with more than two control points")
			}
		case vg.CloseComp:
			c.doc.LineTo(x0, y0)
			c.doc.ClosePath()
		default:
			panic(fmt.Sprintf("viz: unknown path component %d", comp.Type))
		}
	}
	c.doc.DrawPath(style)
}

// arc continues the path along comp's circle, from its start angle
// through its angle (counter-clockwise when positive, as vg's arcs turn),
// as cubic Béziers of at most a quarter turn each.
func (c *pdfCanvas) arc(comp vg.PathComp) {
	r := comp.Radius.Points()
	cx, cy := comp.Pos.X.Points(), comp.Pos.Y.Points()
	at := func(a float64) (float64, float64) { return cx + r*math.Cos(a), cy + r*math.Sin(a) }
	c.doc.LineTo(at(comp.Start))
	n := max(1, int(math.Ceil(math.Abs(comp.Angle)/(math.Pi/2))))
	step := comp.Angle / float64(n)
	k := 4.0 / 3 * math.Tan(step/4) // the control points' distance along the tangents, per unit radius
	for i := range n {
		a0 := comp.Start + float64(i)*step
		a1 := a0 + step
		x0, y0 := at(a0)
		x1, y1 := at(a1)
		c.doc.CurveBezierCubicTo(x0-k*r*math.Sin(a0), y0+k*r*math.Cos(a0), x1+k*r*math.Sin(a1), y1-k*r*math.Cos(a1), x1, y1)
	}
}

// WriteTo closes the page and writes the document; the canvas is spent.
func (c *pdfCanvas) WriteTo(w io.Writer) (int64, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.Pop()
	c.doc.Close()
	wc := &countWriter{w: w}
	b := bufio.NewWriter(wc)
	if err := c.doc.Output(b); err != nil {
		return wc.n, fmt.Errorf("viz: writing a PDF: %v", err)
	}
	err := b.Flush()
	return wc.n, err
}

// countWriter counts the bytes written through it, for WriteTo.
type countWriter struct {
	w io.Writer
	n int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += int64(n)
	return n, err
}

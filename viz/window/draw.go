package window

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"

	"headlab/analysis"
	"headlab/tasks"
	"headlab/viz"
)

// composed is one frame, built under Viewer.mu and drawn without it: UI
// quads under the heatmaps, the heatmap instances, and overlays (hover
// outline, tooltip) above them.
type composed struct {
	under, over batch
	heat        []instance
	snap        *snapshot
}

// composeLocked builds the frame for the current state.
func (v *Viewer) composeLocked() *composed { return compose(&v.st, v.opts.Source) }

// compose builds the frame that shows st, with no GL: source names a
// checkpoint being shown.
func compose(st *state, source string) *composed {
	f := &composed{snap: st.snap}
	s := float32(st.m.ppu)
	f.under.s, f.over.s = s, s
	lay := st.layout()
	if sn := st.snap; sn != nil && (sn.l != lay.L || sn.h != lay.H || sn.t != lay.T) {
		f.snap = nil // from the previous model; the new one is on its way
	}
	task, err := st.task()
	if err != nil {
		task = nil // a folder gone since training: tokens as letters, no chance line
	}
	drawSidebar(&f.under, st, task, source)
	drawHeader(&f.under, st, task, lay, f.snap)
	drawPanels(f, st, task, lay)
	drawLegend(&f.under, lay.Legend())
	for _, w := range st.widgets(lay) {
		drawWidget(&f.under, w)
	}
	drawHover(f, st, task, lay)
	return f
}

// colGap is the least space between two column labels, so that
// neighbours ("51", "58") do not read as one ("5158").
const colGap = 3

// maxTokenW is the widest a token label is drawn: eight glyphs, as the
// figures cut theirs at a fixed width.
const maxTokenW = 8 * glyphW

// tokenLabel is how the viewer labels token id of task t (nil: as
// tasks.TokenLabel does): the figures' name for it, tasks.TokenName
// (vocab.txt's for a task read from a folder), cut with an ellipsis
// beyond maxTokenW as the figures cut theirs.
func tokenLabel(t tasks.Task, id int) string { return fit(tasks.TokenName(t, id), maxTokenW) }

func drawWidget(b *batch, w widget) {
	if w.off { // ⊘: red when the head is switched off
		bg, fg := colButton, colMuted
		if w.on {
			bg, fg = colOff, colText
		}
		b.fill(w.r, bg)
		b.offSprite(w.r.Min.X+(w.r.Dx()-offSpriteW)/2, w.r.Min.Y+(w.r.Dy()-offSpriteW)/2, fg)
		return
	}
	bg, fg := colButton, colText
	if w.on {
		bg = colButtonOn
	}
	if w.disabled {
		bg, fg = colBackground, colFaint
	}
	b.fill(w.r, bg)
	b.stroke(w.r, colFrame)
	b.text(w.r.Min.X+(w.r.Dx()-textW(w.label))/2, w.r.Min.Y+(w.r.Dy()-lineH)/2, w.label, fg)
}

// drawSidebar draws the controls' labels, the numbers and the curves;
// task is st's (nil when it cannot be read: no chance line).
func drawSidebar(b *batch, st *state, task tasks.Task, source string) {
	c := st.cfg
	b.text(sbX, yTitle, "headlab view", colText)
	if st.fps > 0 {
		b.textRight(sbX+sbW, yTitle, fmt.Sprintf("%.0f fps", st.fps), colFaint)
	}
	b.text(sbX, yConfig, fit(fmt.Sprintf("%s %c %dL x %dH %c seed %d", c.Task, viz.MidDot, st.shape.Layers, st.shape.Heads, viz.MidDot, c.Seed), sbW), colMuted)
	drawStep(b, st, source)
	maxStep := max(st.step, st.stop, 1)
	drawLoss(b, st, maxStep)
	chance := 0.0
	if task != nil {
		chance = task.Chance()
	}
	drawAccuracy(b, st, chance, maxStep)

	offText := "click " + string(runeOff) + " to switch a head off"
	offCol := colFaint
	if names := analysis.HeadNames(st.off); len(names) > 0 {
		offText, offCol = "switched off: "+strings.Join(names, ","), colOff
	}
	textWithOff(b, sbX, yOff, fit(offText, sbW), offCol)
	b.text(sbX, yAblation+(buttonH-lineH)/2, "ablation", colText)
	drawModelRows(b, st)
	y := drawKeysAndNote(b, st)
	drawCircuit(b, &st.circ, y+4, st.m.size().Y-margin)
}

// drawStep draws the training step and speed, or the checkpoint's name.
func drawStep(b *batch, st *state, source string) {
	if !st.training {
		b.text(sbX, yStep, fit("checkpoint "+source, sbW), colText)
		return
	}
	stepText := fmt.Sprintf("step %d", st.step)
	if st.stop >= 0 {
		stepText += fmt.Sprintf(" / %d", st.stop)
	}
	b.text(sbX, yStep, stepText, colText)
	if st.running {
		b.textRight(sbX+sbW, yStep, fmt.Sprintf("%.0f steps/s", st.stepsPerSec), colMuted)
	} else {
		b.textRight(sbX+sbW, yStep, "paused", colMuted)
	}
}

// drawLoss draws the loss and its curve on a log scale, steps up to
// maxStep across.
func drawLoss(b *batch, st *state, maxStep int) {
	if st.training {
		b.text(sbX, yLoss, fmt.Sprintf("loss %.4f", st.loss), colLoss)
		b.textRight(sbX+sbW, yLoss, "log scale", colFaint)
	} else {
		b.text(sbX, yLoss, fmt.Sprintf("trained %d steps", st.cfg.Steps), colMuted)
	}
	lossBox := image.Rect(sbX, yLossC, sbX+sbW, yLossC+curveH)
	b.fill(lossBox, colCurveBg)
	if len(st.lossHist) > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range st.lossHist {
			if p.v > 0 {
				lo, hi = min(lo, math.Log10(p.v)), max(hi, math.Log10(p.v))
			}
		}
		if hi-lo < 0.5 {
			lo = hi - 0.5
		}
		drawCurve(b, lossBox, st.lossHist, maxStep, lo, hi, func(x float64) float64 { return math.Log10(max(x, 1e-12)) }, colLoss)
	}
}

// drawAccuracy draws the held-out accuracy, its curve (or, for a
// checkpoint, its level) and a dashed line at chance.
func drawAccuracy(b *batch, st *state, chance float64, maxStep int) {
	acc := "held-out acc -"
	if sn := st.snap; sn != nil {
		acc = fmt.Sprintf("held-out acc %.1f%%", 100*sn.acc)
	}
	b.text(sbX, yAcc, acc, colAcc)
	b.textRight(sbX+sbW, yAcc, fmt.Sprintf("chance %.0f%%", 100*chance), colFaint)
	accBox := image.Rect(sbX, yAccC, sbX+sbW, yAccC+curveH)
	b.fill(accBox, colCurveBg)
	cy := float32(accBox.Max.Y-1) - float32(chance)*float32(curveH-2)
	for x := accBox.Min.X; x < accBox.Max.X; x += 6 { // dashed chance line
		b.fillF(float32(x), cy, float32(min(x+3, accBox.Max.X)), cy+1, colFaint)
	}
	if len(st.accHist) > 0 {
		drawCurve(b, accBox, st.accHist, maxStep, 0, 1, func(x float64) float64 { return x }, colAcc)
	} else if sn := st.snap; sn != nil && !st.training {
		y := float32(accBox.Max.Y-1) - float32(sn.acc)*float32(curveH-2)
		b.fillF(float32(accBox.Min.X), y-1, float32(accBox.Max.X), y+1, colAcc)
	}
}

// drawModelRows draws the model pickers' labels and values.
func drawModelRows(b *batch, st *state) {
	b.text(sbX, yModel, "model (a change restarts training)", colMuted)
	labels := []string{"task", "layers", "heads", "positions", "causal mask"}
	values := []string{st.cfg.Task, fmt.Sprint(st.shape.Layers), fmt.Sprint(st.shape.Heads)}
	for k, l := range labels {
		y := yPickers + k*rowPitch
		b.text(sbX, y+(buttonH-lineH)/2, l, colText)
		if k < len(values) {
			mid := (pickerX + pickerW + sbX + sbW - pickerW) / 2
			b.text(mid-textW(values[k])/2, y+(buttonH-lineH)/2, values[k], colText)
		}
	}
}

// drawKeysAndNote draws the keys' help and up to four lines of the note
// (or the error), and returns the y below them.
func drawKeysAndNote(b *batch, st *state) int {
	b.text(sbX, yKeys, fmt.Sprintf("space run/pause %c r reset", viz.MidDot), colFaint)
	b.text(sbX, yKeys+16, fmt.Sprintf("n/p next/prev example %c esc quit", viz.MidDot), colFaint)
	b.text(sbX, yKeys+32, fmt.Sprintf("+/- zoom %c arrows, wheel scroll", viz.MidDot), colFaint)
	note, noteCol := st.note, colMuted
	if st.err != nil {
		note, noteCol = "error: "+st.err.Error(), colError
	}
	y := yNote
	for k, line := range wrap(note, sbW/glyphW) {
		if k == 4 {
			break
		}
		b.text(sbX, y, line, noteCol)
		y += 16
	}
	return y
}

// textWithOff draws s, with the ⊘ rune drawn as the sprite.
func textWithOff(b *batch, x, y int, s string, c color.RGBA) {
	for _, r := range s {
		if r == runeOff {
			b.offSprite(x-2, y, c)
			x += offSpriteW - 1
			continue
		}
		x += b.text(x, y, string(r), c)
	}
}

// wrap breaks s into lines of at most n characters, at spaces if it can.
func wrap(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		rs := []rune(s)
		if len(rs) <= n {
			return append(out, s)
		}
		cut := n
		if i := strings.LastIndex(string(rs[:n]), " "); i > n/2 {
			cut = len([]rune(string(rs[:n])[:i]))
		}
		out = append(out, strings.TrimSpace(string(rs[:cut])))
		s = strings.TrimSpace(string(rs[cut:]))
	}
	return out
}

// drawCurve plots pts (step, value) in r, x from step 0 to maxStep, y from
// lo (bottom) to hi (top) after tf; samples in one pixel column are
// averaged and neighbouring columns joined.
func drawCurve(b *batch, r image.Rectangle, pts []point, maxStep int, lo, hi float64, tf func(float64) float64, col color.RGBA) {
	w := r.Dx()
	sum := make([]float64, w)
	cnt := make([]int, w)
	for _, p := range pts {
		c := int(float64(p.step) / float64(maxStep) * float64(w-1))
		if c < 0 || c >= w || math.IsNaN(p.v) || math.IsInf(p.v, 0) {
			continue
		}
		sum[c] += tf(p.v)
		cnt[c]++
	}
	h := float64(r.Dy() - 3)
	mapY := func(x float64) float64 {
		t := (x - lo) / (hi - lo)
		return float64(r.Max.Y-2) - math.Min(math.Max(t, 0), 1)*h
	}
	px, py := -1, 0.0
	for c := 0; c < w; c++ {
		if cnt[c] == 0 {
			continue
		}
		y := mapY(sum[c] / float64(cnt[c]))
		if px < 0 {
			px, py = c-1, y
		}
		for x := px + 1; x <= c; x++ {
			t0 := float64(x-1-px) / float64(c-px)
			t1 := float64(x-px) / float64(c-px)
			y0, y1 := py+t0*(y-py), py+t1*(y-py)
			b.fillF(float32(r.Min.X+x), float32(min(y0, y1)-0.75), float32(r.Min.X+x+1), float32(max(y0, y1)+0.75), col)
		}
		px, py = c, y
	}
}

// drawHeader draws the example's tokens, named as task names them, and
// how to read the panels.
func drawHeader(b *batch, st *state, task tasks.Task, lay Layout, sn *snapshot) {
	x := lay.origin().X
	w := lay.Size.X - x - margin
	line := "waiting for the first evaluation..."
	if sn != nil {
		e := st.example % sn.n
		toks := make([]string, sn.t)
		for i := range toks {
			toks[i] = tokenLabel(task, sn.tokens[e*sn.t+i])
		}
		line = fmt.Sprintf("held-out example %d of %d:  %s", e+1, sn.n, strings.Join(toks, " "))
	}
	b.text(x, margin, fit(line, w), colText)
	axes := "rows: query   columns: key   black: masked (key after query)"
	if !st.shape.Causal {
		axes = "rows: query   columns: key   (no causal mask)"
	}
	if lay.Paged() {
		axes = fmt.Sprintf("layers %d-%d of %d, heads %d-%d of %d (arrows, wheel: scroll)   ", lay.FirstL, lay.FirstL+lay.ShownL-1, lay.L,
			lay.FirstH, lay.FirstH+lay.ShownH-1, lay.H) + axes
	}
	b.text(x, margin+16, fit(axes, w), colMuted)
}

// drawPanels draws every head's frame, title, token labels (named as task
// names them, each cut to the labels' column) and heatmap instance.
func drawPanels(f *composed, st *state, task tasks.Task, lay Layout) {
	b := &f.under
	sn := f.snap
	s := b.s
	hl, hh, hi, hj, hovering := lay.CellAt(st.cursor)
	hovering = hovering && st.cursorIn && sn != nil
	labelW := lay.labelW - 4 // the row labels' column, and each column label's room at colStep
	for l := lay.FirstL; l < lay.FirstL+lay.ShownL; l++ {
		for h := lay.FirstH; h < lay.FirstH+lay.ShownH; h++ {
			p := lay.Panel(l, h)
			off := st.off.Off(l, h)
			b.stroke(p, colFrame)
			tr := lay.Title(l, h)
			tw := tr.Dx() - offSize - 6
			name := analysis.HeadName(l, h)
			label := ""
			if sn != nil {
				label = sn.scores[l*lay.H+h].Title()
			}
			col := colText
			if off {
				col, name = colMuted, name+" (off)"
			}
			ty := tr.Min.Y + 3
			switch {
			case label == "":
				b.text(tr.Min.X, ty, fit(name, tw), col)
			case lay.TwoLine:
				b.text(tr.Min.X, ty, fit(name, tw), col)
				b.text(tr.Min.X, ty+14, fit(label, tr.Dx()), col)
			default:
				b.text(tr.Min.X, ty, fit(viz.HeadTitle(name, label), tw), col)
			}
			if sn == nil {
				b.fill(p, colCurveBg)
				continue
			}
			e := st.example % sn.n
			dim := float32(1)
			if off {
				dim = 0.4
			}
			sh := texShape{l: sn.l, n: sn.n, h: sn.h, t: sn.t}
			f.heat = append(f.heat, instance{float32(p.Min.X) * s, float32(p.Min.Y) * s, float32(p.Max.X) * s, float32(p.Max.Y) * s,
				float32(sh.slice(l, e, h)), dim})

			toks := sn.tokens[e*sn.t : (e+1)*sn.t]
			here := hovering && hl == l && hh == h
			rowStep := lay.stepLabels(lineH)
			for i := 0; i < lay.T; i += rowStep {
				c := colMuted
				if here && i == hi {
					c = colText
				}
				b.textRight(p.Min.X-4, p.Min.Y+i*lay.Cell+(lay.Cell-lineH)/2, fit(tokenLabel(task, toks[i]), labelW), c)
			}
			colStep := lay.stepLabels(labelW + colGap)
			for j := 0; j < lay.T; j += colStep {
				c := colMuted
				if here && j == hj {
					c = colText
				}
				t := fit(tokenLabel(task, toks[j]), labelW)
				b.text(p.Min.X+j*lay.Cell+(lay.Cell-textW(t))/2, p.Max.Y+3, t, c)
			}
		}
	}
}

// drawLegend draws the colour bar with ticks at 0, 0.5 and 1.
func drawLegend(b *batch, r image.Rectangle) {
	b.text(r.Min.X-10, r.Min.Y-17, "weight", colMuted)
	n := r.Dy() - 1
	for y := r.Min.Y; y < r.Max.Y; y++ {
		c := viz.Viridis(1 - float64(y-r.Min.Y)/float64(n))
		b.fill(image.Rect(r.Min.X, y, r.Max.X, y+1), c)
	}
	b.stroke(r, colFrame)
	for _, t := range []struct {
		v    float64
		text string
	}{{1, "1"}, {0.5, "0.5"}, {0, "0"}} {
		y := r.Min.Y + int(math.Round((1-t.v)*float64(n)))
		b.fill(image.Rect(r.Max.X+1, y, r.Max.X+5, y+1), colFrame)
		b.text(r.Max.X+8, y-lineH/2, t.text, colMuted)
	}
}

// drawHover outlines the cell under the cursor and shows its query, key
// (named as task names them) and weight in a tooltip and in the sidebar.
func drawHover(f *composed, st *state, task tasks.Task, lay Layout) {
	sn := f.snap
	l, h, i, j, ok := lay.CellAt(st.cursor)
	b := &f.under
	if !ok || !st.cursorIn || sn == nil {
		b.text(sbX, yHover, "hover a cell: query, key, weight", colFaint)
		return
	}
	e := st.example % sn.n
	toks := sn.tokens[e*sn.t : (e+1)*sn.t]
	w := sn.probs[(((e*sn.l+l)*sn.h+h)*sn.t+i)*sn.t+j]
	masked := sn.causal && j > i
	weight := fmt.Sprintf("%.3f", w)
	if masked {
		weight = "masked"
	}
	q := fmt.Sprintf("query %d %s", i, tokenLabel(task, toks[i]))
	k := fmt.Sprintf("key %d %s", j, tokenLabel(task, toks[j]))
	b.text(sbX, yHover, analysis.HeadName(l, h)+"  "+q, colText)
	b.text(sbX, yHover+16, fmt.Sprintf("%s  weight %s", k, weight), colText)

	o := &f.over
	o.stroke(lay.CellRect(l, h, i, j), colHover)
	tip := fmt.Sprintf("%s  %s -> %s  %s", analysis.HeadName(l, h), q, k, weight)
	tw := textW(tip) + 10
	x, y := st.cursor.X+14, st.cursor.Y+16
	x = max(0, min(x, lay.Size.X-tw-2))
	y = max(0, min(y, lay.Size.Y-lineH-8))
	r := image.Rect(x, y, x+tw, y+lineH+6)
	o.fill(r, colTip)
	o.stroke(r, colFrame)
	o.text(x+5, y+3, tip, colText)
}

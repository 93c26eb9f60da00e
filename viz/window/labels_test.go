package window

import (
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz"
)

// drawnText is one run of text a batch draws: glyphs on one line, each
// starting a glyph (or two or three: spaces) after the last.
type drawnText struct {
	x, y int // its first glyph's top-left corner, logical pixels
	s    string
}

// right is where the run ends.
func (d drawnText) right() int { return d.x + textW(d.s) }

// drawnTexts reads the text back from b's glyph quads, in drawing order:
// what a frame would show, without a window.
func drawnTexts(b *batch) []drawnText {
	runeAt := map[float32]rune{}
	for r := rune(asciiFirst); r <= asciiLast; r++ {
		runeAt[float32(glyphX(r))] = r
	}
	runeAt[float32(glyphX(viz.MidDot))], runeAt[float32(glyphX(viz.Ellipsis))] = viz.MidDot, viz.Ellipsis
	var out []drawnText
	lastX := 0
	for k := 0; k+6 <= len(b.verts); k += 6 {
		a, bb, cc := b.verts[k], b.verts[k+1], b.verts[k+2]
		r, ok := runeAt[a.u]
		if !ok || bb.u-a.u != glyphW || a.v != 0 || cc.v != lineH {
			continue // a fill, the ⊘ sprite
		}
		x, y := int(a.x/b.s), int(a.y/b.s)
		if n := len(out); n > 0 && out[n-1].y == y && x > lastX && x-lastX <= 3*glyphW && (x-lastX)%glyphW == 0 {
			out[n-1].s += strings.Repeat(" ", (x-lastX)/glyphW-1) + string(r)
		} else {
			out = append(out, drawnText{x, y, string(r)})
		}
		lastX = x
	}
	return out
}

// vocabFolder is a data folder of T=4 whose vocab.txt names its four
// tokens, the last name too long for a label: one held-out example,
// tokens 0 1 2 3.
func vocabFolder(t *testing.T) (dir string, names []string) {
	t.Helper()
	dir = t.TempDir()
	names = []string{"the", "cat", "sat", "extraordinary"}
	for name, text := range map[string]string{
		"train.jsonl":   `{"tokens": [0, 1, 2, 3], "targets": [null, 1, 2, 3]}` + "\n" + `{"tokens": [3, 2, 1, 0], "targets": [null, 1, 0, 0]}` + "\n",
		"heldout.jsonl": `{"tokens": [0, 1, 2, 3], "targets": [null, 1, 2, 3]}` + "\n",
		tasks.VocabFile: strings.Join(names, "\n") + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, names
}

// TestTokenLabelsNameVocab: on a task read from a folder with a
// vocab.txt, the viewer's header, hover readout, tooltip and panel axes
// show vocab.txt's names (as the figures do, tasks.TokenName), a long one
// cut with an ellipsis at maxTokenW and every axis label inside its
// column; a built-in task's tokens stay the figures' letters.
func TestTokenLabelsNameVocab(t *testing.T) {
	dir, names := vocabFolder(t)
	c := train.Defaults(tasks.FilePrefix + dir)
	task, err := c.NewTask()
	if err != nil {
		t.Fatal(err)
	}
	st := &state{cfg: c, shape: c.Model(task), stop: -1}
	for range st.shape.Layers {
		st.off = append(st.off, make([]bool, st.shape.Heads))
	}
	size := PreferredSize(st.shape.Layers, st.shape.Heads, st.shape.SeqLen, maxTokenW/glyphW, image.Point{})
	st.m = metrics{win: size, fb: size, ppu: 1}
	L, H, T := st.shape.Layers, st.shape.Heads, st.shape.SeqLen
	sn := &snapshot{l: L, h: H, t: T, n: 1, causal: true, tokens: []int{0, 1, 2, 3}, probs: make([]float32, L*H*T*T), off: st.off}
	for l := range L {
		for h := range H {
			sn.scores = append(sn.scores, analysis.HeadScore{Layer: l, Head: h})
		}
	}
	st.published(sn, 0)
	want := []string{"the", "cat", "sat", "extraor" + string(viz.Ellipsis)}
	if got := fit(names[3], maxTokenW); got != want[3] {
		t.Fatalf("the long name cut to %q, want %q", got, want[3])
	}

	// The frame: header, hover readout and tooltip.
	lay := st.layout()
	st.cursor, st.cursorIn = lay.CellRect(1, 1, 3, 2).Min.Add(image.Pt(1, 1)), true
	f := compose(st, dir)
	var all []string
	for _, d := range append(drawnTexts(&f.under), drawnTexts(&f.over)...) {
		all = append(all, d.s)
	}
	text := strings.Join(all, "\n")
	for _, s := range []string{
		"held-out example 1 of 1:  " + strings.Join(want, " "),
		"L1H1  query 3 " + want[3],
		"key 2 sat  weight",
		"L1H1  query 3 " + want[3] + " -> key 2 sat",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the frame does not show %q; it shows:\n%s", s, text)
		}
	}
	checkAxisLabels(t, f, lay, want)

	// The panels' axes, in a layout whose label column holds maxTokenW:
	// every name, the long one cut.
	lay = NewLayout(L, H, T, maxTokenW/glyphW, st.m.size())
	f = &composed{snap: sn, under: batch{s: 1}}
	drawPanels(f, st, task, lay)
	checkAxisLabels(t, f, lay, want)

	induction, err := tasks.New("induction")
	if err != nil {
		t.Fatal(err)
	}
	for id := range 30 {
		if got := tokenLabel(induction, id); got != viz.TokenLabel(id) {
			t.Errorf("a built-in task's token %d is labelled %q, the figures' %q", id, got, viz.TokenLabel(id))
		}
	}
}

// checkAxisLabels: every panel's row and column labels in f lie inside
// their room (the label column left of the panel; under the panel, the
// labels colStep columns apart); with want, they are want's, row by row
// and at each colStep-th column.
func checkAxisLabels(t *testing.T, f *composed, lay Layout, want []string) {
	t.Helper()
	texts := drawnTexts(&f.under)
	room := lay.labelW - 4
	colStep := lay.stepLabels(room + colGap)
	for l := range lay.L {
		for h := range lay.H {
			p := lay.Panel(l, h)
			var rows, cols []string
			for _, d := range texts {
				switch {
				case d.y == p.Max.Y+3 && d.x >= p.Min.X-room && d.x < p.Max.X:
					cols = append(cols, d.s)
					if d.right()-d.x > room {
						t.Errorf("panel %d,%d: column label %q is %d wide, room %d", l, h, d.s, d.right()-d.x, room)
					}
				case d.y > p.Min.Y-lineH && d.y < p.Max.Y && d.right() <= p.Min.X && d.right() > p.Min.X-lay.labelW:
					rows = append(rows, d.s)
					if d.x < p.Min.X-lay.labelW || d.right() != p.Min.X-4 {
						t.Errorf("panel %d,%d: row label %q spans x %d..%d, its column %d..%d", l, h, d.s, d.x, d.right(), p.Min.X-lay.labelW, p.Min.X-4)
					}
				}
			}
			if want == nil {
				continue
			}
			var wantCols []string
			for j := 0; j < lay.T; j += colStep {
				wantCols = append(wantCols, want[j])
			}
			if strings.Join(rows, "|") != strings.Join(want, "|") || strings.Join(cols, "|") != strings.Join(wantCols, "|") {
				t.Errorf("panel %d,%d: rows %q, columns %q; want %q and %q", l, h, rows, cols, want, wantCols)
			}
		}
	}
}

// TestTaskMadeOncePerConfiguration: a frame asks for the task several
// times; a task read from a folder is read once per configuration, and
// made again when the configuration changes.
func TestTaskMadeOncePerConfiguration(t *testing.T) {
	dir, _ := vocabFolder(t)
	st := &state{cfg: train.Defaults(tasks.FilePrefix + dir)}
	a, err := st.task()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := st.task(); b != a {
		t.Error("the same configuration's task was made twice")
	}
	st.cfg = train.Defaults("majority")
	if b, err := st.task(); err != nil || b == a || b.Name() != "majority" {
		t.Errorf("after picking majority: %v, %v", b, err)
	}
}

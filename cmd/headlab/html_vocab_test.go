package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/internal/browsertest"
	"headlab/viz/htmlview"
)

// heads --html of a model trained on a data folder with a vocab.txt names
// the tokens as vocab.txt does, on every head's axes (a long name cut to
// htmlview.LabelChars with an ellipsis) and in the strip of tokens.
func TestHeadsHTMLVocabNames(t *testing.T) {
	dir := t.TempDir()
	names := []string{"the", "cat", "sat", "on", "mat", "a-very-long-name"}
	lines := []string{
		`{"tokens": [0, 1, 2, 3, 0, 5], "targets": [null, null, null, null, null, 4]}`,
		`{"tokens": [5, 4, 3, 2, 1, 0], "targets": [null, null, null, null, null, 4]}`,
		`{"tokens": [1, 1, 2, 2, 3, 3], "targets": [null, null, null, null, null, 4]}`,
	}
	for name, text := range map[string]string{
		"train.jsonl":   strings.Join(lines, "\n") + "\n",
		"heldout.jsonl": lines[0] + "\n",
		"vocab.txt":     strings.Join(names, "\n") + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := trained(t, "file:"+dir, "--layers", "1", "--d-model", "16")
	page := filepath.Join(t.TempDir(), "heads.html")
	if code, _, errs := headlab(t, "heads", "--run", run, "--html", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, page)
	want := []string{"the", "cat", "sat", "on", "the", "a-very-\u2026"} // held-out line 1
	if htmlview.LabelChars != 8 {
		t.Fatalf("LabelChars is %d: the long name's label above assumes 8", htmlview.LabelChars)
	}
	for _, axis := range []string{"queries", "keys"} {
		got := browsertest.Eval[[]string](t, tab, `[...document.getElementById("`+axis+`-L0H0").children].map(s => s.textContent)`)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("L0H0's %s labelled %q, want vocab.txt's names %q", axis, got, want)
		}
	}
	strip := browsertest.Eval[string](t, tab, `[...document.querySelectorAll("#tokens .tok")].map(e => e.textContent).join(" ")`)
	if strip != "the cat sat on the a-very-long-name" {
		t.Errorf("the example's tokens read %q", strip)
	}
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
}

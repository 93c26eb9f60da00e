package viz

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"headlab/analysis"
	"headlab/tasks"
)

// TestHeadGridTokenNames: a task read from a folder names the grid's
// tokens from its vocab.txt; without a task they are tasks.TokenLabel's.
func TestHeadGridTokenNames(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"train.jsonl":   `{"tokens": [0, 1, 2, 3], "targets": [null, null, 3, 0]}` + "\n",
		"heldout.jsonl": `{"tokens": [3, 1, 0, 2], "targets": [null, null, 1, 0]}` + "\n",
		"vocab.txt":     "the\ncat\nsat\nmat\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task, err := tasks.New(tasks.FilePrefix + dir)
	if err != nil {
		t.Fatal(err)
	}
	att := &analysis.Attention{N: 2, L: 1, H: 1, T: 4, Tokens: []int{0, 0, 0, 0, 3, 1, 0, 2}, Probs: make([]float32, 2*16)}
	heads := []analysis.HeadScore{{Name: "L0H0"}}
	if got := HeadGrid("t", att, heads, 1, task).Tokens; !slices.Equal(got, []string{"mat", "cat", "the", "sat"}) {
		t.Errorf("named tokens %v", got)
	}
	want := []string{tasks.TokenLabel(3), tasks.TokenLabel(1), tasks.TokenLabel(0), tasks.TokenLabel(2)}
	if got := HeadGrid("t", att, heads, 1, nil).Tokens; !slices.Equal(got, want) {
		t.Errorf("labelled tokens %v, want %v", got, want)
	}
}

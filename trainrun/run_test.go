package trainrun

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/train"
)

// TestRun: a lone run gives train.Run's result bit for bit, saves its
// checkpoint with its history, scores its heads, and reports them.
func TestRun(t *testing.T) {
	c := train.Defaults("majority")
	c.Steps, c.DModel, c.DFF, c.Layers = 20, 16, 16, 1
	c = c.Sized()
	dir := filepath.Join(t.TempDir(), "ckpt")
	var stderr strings.Builder
	m, rep, heads, att, err := Run(Options{Config: c, Device: cpu.New(), Stderr: &stderr, Every: 10, RecordEvery: 5, Save: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accuracy != want.Accuracy || rep.Loss != want.Loss || rep.TrainLoss != want.TrainLoss || rep.Params != want.Params {
		t.Errorf("report %v/%v/%v, train.Run %v/%v/%v", rep.Accuracy, rep.Loss, rep.TrainLoss, want.Accuracy, want.Loss, want.TrainLoss)
	}
	if len(rep.History) != 5 || rep.Phase == nil || rep.Config.Backend != "cpu" || len(rep.Heads) != len(heads.Heads) || att == nil {
		t.Errorf("history of %d records, phase %v, backend %q, %d heads", len(rep.History), rep.Phase, rep.Config.Backend, len(rep.Heads))
	}
	for _, f := range []string{"config.json", "model.safetensors", "history.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("checkpoint: %v", err)
		}
	}
	if !strings.Contains(stderr.String(), "saved checkpoint to "+dir+"\n") || !strings.Contains(stderr.String(), "held-out acc") {
		t.Errorf("stderr %q, want progress lines and the checkpoint's line", stderr.String())
	}
	var out strings.Builder
	rep.Write(&out, m, heads)
	for _, line := range []string{"task        majority: ", "training    next-token loss, fresh sequences, no weight decay; 20 steps of batch ", "accuracy    ",
		"\n\n| Head switched off | Label |", "\n\nphase change: "} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, out.String())
		}
	}
	if err := rep.AddUnseen(m, cpu.New()); err != nil || rep.UnseenHeads != nil {
		t.Errorf("majority holds no tokens back: %v, %v", rep.UnseenHeads, err)
	}
	_, quiet, _, _, err := Run(Options{Config: c, Device: cpu.New(), Stderr: io.Discard, Quiet: true})
	if err != nil || quiet.History != nil || quiet.Phase != nil || quiet.Accuracy != want.Accuracy {
		t.Errorf("without history: %v, %v", quiet.History, err)
	}
}

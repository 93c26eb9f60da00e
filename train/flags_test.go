package train

import (
	"testing"

	"github.com/spf13/pflag"
)

// parseFlags parses args with a fresh Flags and resolves its Config.
func parseFlags(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	var f Flags
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Config(fs.Changed)
}

// TestFlagsConfig: the flags resolve into the configuration they name,
// steps default to the task's plateau, an attention-only model drops the
// default d-ff (and refuses one given), and an invalid one is refused.
func TestFlagsConfig(t *testing.T) {
	c, err := parseFlags(t, "--task", "reverse", "--no-positions", "--layers", "1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Task != "reverse" || c.Positions || !c.Causal || c.Layers != 1 || c.Steps != Defaults("reverse").Steps || c.DFF != Defaults("reverse").DFF {
		t.Errorf("reverse: %+v", c)
	}
	if c, err = parseFlags(t, "--no-causal", "--no-mlp", "--steps", "7"); err != nil || c.Causal || c.DFF != 0 || c.Steps != 7 {
		t.Errorf("--no-mlp --steps 7: %v, %+v", err, c)
	}
	if _, err = parseFlags(t, "--no-mlp", "--d-ff", "32"); err == nil {
		t.Error("--no-mlp --d-ff 32: no error")
	}
	if _, err = parseFlags(t, "--heads", "3", "--d-model", "32"); err == nil {
		t.Error("3 heads of a 32-wide model: no error")
	}
}

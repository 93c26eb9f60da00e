package bench

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// parsedFlags is bench's flags parsed from args, and which were given.
func parsedFlags(t *testing.T, args ...string) (*Flags, func(string) bool) {
	t.Helper()
	var f Flags
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f, fs.Changed
}

// TestFlagsOptions: the defaults resolve to the default curve on the
// default model; each flag lands in its option; a value out of range is
// refused naming its flag.
func TestFlagsOptions(t *testing.T) {
	f, changed := parsedFlags(t)
	o, err := f.Options(0, "next-token", changed)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Groups) != 6 || o.Groups[5] != 1024 || o.Batch != 64 || !o.GLOptional || o.Model.DModel != 32 || o.Model.Batch != 32 || o.DispatchGroup != 64 {
		t.Errorf("defaults: %+v", o)
	}
	f, changed = parsedFlags(t, "--groups", "2,8", "--batch", "16", "--backends", "cpu", "--no-mlp", "--layers", "3", "--parts", "model")
	if o, err = f.Options(5, "answers", changed); err != nil {
		t.Fatal(err)
	}
	if len(o.Groups) != 2 || o.Groups[1] != 8 || o.Batch != 16 || o.GLOptional || o.Model.Layers != 3 || !o.Model.NoMLP || o.Model.DFF != 0 ||
		o.Timing.Steps != 5 || o.Loss != "answers" || !o.Parts["model"] || o.Parts["groups"] {
		t.Errorf("given: %+v", o)
	}
	for _, c := range []struct {
		args  []string
		steps int
		loss  string
		want  string
	}{
		{[]string{"--batch", "0"}, 0, "next-token", "--batch must be in 1..4096"},
		{nil, -1, "next-token", "--steps and --max-step not negative"},
		{[]string{"--dispatch-group", "0"}, 0, "next-token", "--dispatch-group must be positive"},
		{nil, 0, "mse", "mse"},
		{[]string{"--heads", "3"}, 0, "next-token", "head"},
		{[]string{"--groups", "0"}, 0, "next-token", "--groups"},
	} {
		f, changed := parsedFlags(t, c.args...)
		if _, err := f.Options(c.steps, c.loss, changed); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v steps %d loss %s: %v, want %q", c.args, c.steps, c.loss, err, c.want)
		}
	}
}

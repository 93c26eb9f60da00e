package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"headlab/inspect"
	"headlab/internal/preflight"
	"headlab/train"
)

// resolved is the sweep of flags args over the default induction model.
func resolved(t *testing.T, args ...string) (DB, string, error) {
	t.Helper()
	t.Setenv("JOB_COMPLETION_INDEX", "")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	var f Flags
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Resolve(train.Defaults("induction"), nil, inspect.AblateMean, fs.Changed)
}

// TestFlagsResolve: the flags become the shard's pairs, the layout asked
// for and the analysis; bad input is refused before any work, leaving a
// foreign file as it was.
func TestFlagsResolve(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	d, note, err := resolved(t, "--seeds", "1-4", "--grid", "layers=1,2", "--db", db, "--shard", "1/2", "--group", "3", "--measure", "none", "--retry-failed")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pairs) != 4 || d.Path != db || d.Ask != (Ask{Group: 3}) || !d.RetryFailed || d.Analysis.Ablation != inspect.AblateMean ||
		d.Analysis.Measure.Has(MeasureCircuit) || note != "sweep: shard 1/2: 4 of 8 pairs" {
		t.Errorf("resolved %+v, note %q", d, note)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0", "--db", db}, "--workers must be at least 1"},
		{[]string{"--group", "0", "--db", db}, "--group must be at least 1"},
		{[]string{"--measure", "everything", "--db", db}, "everything"},
		{[]string{"--seeds", "x", "--db", db}, "x"},
		{nil, "--db FILE is required"},
		{[]string{"--db", text}, text},
	} {
		_, _, err := resolved(t, c.args...)
		var r *preflight.Refusal
		if err == nil || !errors.As(err, &r) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a refusal saying %q", c.args, err, c.want)
		}
	}
	if b, _ := os.ReadFile(text); string(b) != "not a database\n" {
		t.Errorf("the foreign file changed: %q", b)
	}
}

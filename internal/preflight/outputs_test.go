package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputs: each kind of output is refused where it cannot be
// written, with a message naming its flag and path, and nothing is left
// in the directory; writable ones pass.
func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out  Output
		want string // "" passes
	}{
		{File("png", filepath.Join(dir, "a.png")), ""},
		{File("png", dir), "--png " + dir + ": is a directory, want a file"},
		{File("png", filepath.Join(dir, "missing", "a.png")), "does not exist"},
		{Dir("out", filepath.Join(dir, "new", "deeper")), ""},
		{Dir("out", file), "is not a directory"},
		{Checkpoint("save", filepath.Join(dir, "ckpt")), ""},
		{Database("db", filepath.Join(file, "s.db")), "is not a directory"},
		{Database("db", "-"), "--db -: names a database, which cannot be written to stdout"},
		{File("", ""), ""},
	} {
		err := Outputs(tc.out)
		var r *Refusal
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: refused: %v", tc.out, err)
		case tc.want != "" && (err == nil || !errors.As(err, &r) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: err %v, want a refusal saying %q", tc.out, err, tc.want)
		}
	}
	if err := Outputs(File("png", "-"), File("arcs", "-")); err == nil || err.Error() != "--png and --arcs both write to stdout; give one of them a file" {
		t.Errorf("two outputs on stdout: %v", err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 {
		t.Errorf("the checks left %d entries in %s, want only the file", len(left), dir)
	}
}

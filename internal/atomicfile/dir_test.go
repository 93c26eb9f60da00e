package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceDir: a new directory appears whole, a second replaces the
// first whole (no file of the first is left), a failing fill leaves the
// current one as it was, and no temporary stays behind.
func TestReplaceDir(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	write := func(files map[string]string) func(string) error {
		return func(tmp string) error {
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(tmp, name), []byte(data), 0o644); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := ReplaceDir(dir, write(map[string]string{"a": "1", "b": "1"})); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceDir(dir, write(map[string]string{"a": "2"})); err != nil {
		t.Fatal(err)
	}
	err := ReplaceDir(dir, func(tmp string) error {
		os.WriteFile(filepath.Join(tmp, "a"), []byte("half"), 0o644)
		return errors.New("boom")
	})
	if err == nil {
		t.Fatal("a failing fill succeeded")
	}
	entries, _ := os.ReadDir(dir)
	got, _ := os.ReadFile(filepath.Join(dir, "a"))
	if len(entries) != 1 || string(got) != "2" {
		t.Fatalf("dir holds %d entries, a = %q; want the second save alone", len(entries), got)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v", fi.Mode())
	}
	if all, _ := os.ReadDir(parent); len(all) != 1 {
		t.Fatalf("%d entries beside the directory, want none", len(all)-1)
	}
}

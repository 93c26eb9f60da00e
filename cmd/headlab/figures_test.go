package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportFigureFormats checks report's histograms in each format and
// the refusal of an unknown one before anything is written.
func TestReportFigureFormats(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if code, _, errs := headlab(t, args("--seeds", "1-2", "--db", db)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	for ext, magic := range map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF-"} {
		out := filepath.Join(dir, ext)
		if code, _, errs := headlab(t, "report", "--db", db, "--figure", out, "--figure-format", ext); code != 0 {
			t.Fatalf("report --figure-format %s: %s", ext, errs)
		}
		files, _ := filepath.Glob(filepath.Join(out, "hist-*."+ext))
		if len(files) != 1 {
			t.Fatalf("%s histograms: %v", ext, files)
		}
		if data, err := os.ReadFile(files[0]); err != nil || !strings.HasPrefix(string(data), magic) {
			t.Errorf("%s: %v %.8q", files[0], err, data)
		}
	}
	code, out, errs := headlab(t, "report", "--db", db, "--png", filepath.Join(dir, "bad"), "--figure-format", "jpeg")
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("--figure-format jpeg: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); err == nil {
		t.Errorf("a refused report made its directory")
	}
}

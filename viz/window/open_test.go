package window

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"headlab/internal/preflight"
)

// TestOpenDisplayNoDisplay: with DISPLAY unset the window is refused as
// bad input, in headlab view's words, before GLFW is asked.
func TestOpenDisplayNoDisplay(t *testing.T) {
	t.Setenv("DISPLAY", "")
	var stderr bytes.Buffer
	th, name, err := OpenDisplay("auto", &stderr)
	var r *preflight.Refusal
	if th != nil || !errors.As(err, &r) {
		t.Fatalf("OpenDisplay with no DISPLAY: thread %v, error %v; want a *preflight.Refusal", th, err)
	}
	if want := "view: no display: DISPLAY is not set (run it on a desktop, or under xvfb-run)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if name != "auto" || stderr.Len() != 0 {
		t.Errorf("backend %q, stderr %q; want auto and nothing said", name, stderr.String())
	}
	if err := CheckDisplay(); !errors.As(err, &r) {
		t.Errorf("CheckDisplay with no DISPLAY: %v, want a *preflight.Refusal", err)
	}
}

// TestOpenDisplay opens the viewer's window for each backend: cpu draws on
// 4.1, gl and auto want 4.3; without a 4.3 window (the 4.1 child of
// TestWindowGL41) auto falls back to cpu in one line and gl is refused.
func TestOpenDisplay(t *testing.T) {
	needGL(t)
	if err := CheckDisplay(); err != nil {
		t.Fatalf("CheckDisplay with DISPLAY %q: %v", os.Getenv("DISPLAY"), err)
	}
	major, minor := display.Version()
	has43 := major > 4 || major == 4 && minor >= 3
	for _, be := range []string{"cpu", "gl", "auto"} {
		var stderr bytes.Buffer
		th, name, err := OpenDisplay(be, &stderr)
		switch {
		case be == "gl" && !has43:
			var r *preflight.Refusal
			if th != nil || !errors.As(err, &r) || !strings.HasPrefix(err.Error(), "view: ") {
				t.Errorf("gl without 4.3: thread %v, error %v; want a refusal saying view: ...", th, err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", be, err)
			continue
		}
		wantName, fellBack := be, be == "auto" && !has43
		if fellBack {
			wantName = "cpu"
		}
		said := stderr.String()
		if name != wantName || fellBack != (said != "") {
			t.Errorf("%s: backend %q, stderr %q; want %q", be, name, said, wantName)
		}
		if fellBack && (!strings.HasPrefix(said, "headlab: using the cpu backend: ") || strings.Count(said, "\n") != 1) {
			t.Errorf("auto on 4.1 said %q, want one line of fallback to the cpu", said)
		}
		wantMinor := 1
		if wantName != "cpu" {
			wantMinor = 3
		}
		if major, minor := th.Version(); major < 4 || major == 4 && minor < wantMinor {
			t.Errorf("%s: OpenGL %d.%d, want 4.%d or later", be, major, minor, wantMinor)
		}
		th.Close()
	}
}

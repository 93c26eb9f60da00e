package window

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/backend/cpu"
)

func TestStatsLine(t *testing.T) {
	st := Stats{Frames: 120, Seconds: 2, FrameSeconds: 0.6, Steps: 400, Refreshes: 8, RefreshSeconds: 0.4}
	want := "view: 120 frames in 2.0 s (60 fps, 5.0 ms each), 400 steps (200 steps/s), 8 refreshes (50 ms each), backend gl"
	if got := st.Line("gl"); got != want {
		t.Errorf("Line:\n got %q\nwant %q", got, want)
	}
	// No frames or refreshes: their costs are 0, not NaN.
	st = Stats{Seconds: 0.5}
	want = "view: 0 frames in 0.5 s (0 fps, 0.0 ms each), 0 steps (0 steps/s), 0 refreshes (0 ms each), backend cpu"
	if got := st.Line("cpu"); got != want {
		t.Errorf("Line with nothing done:\n got %q\nwant %q", got, want)
	}
}

func TestScreenshotLine(t *testing.T) {
	s := Status{Step: 40, Accuracy: 0.8125, Circuit: []string{"L1H1 -> logits", "L0H0 -> L1H1.k"}, CircuitStep: 40}
	st := Stats{Steps: 40, Seconds: 0.5, Refreshes: 4, RefreshSeconds: 0.1}
	want := "wrote v.png: step 40, held-out accuracy 0.812, 80 steps/s with 4 refreshes of 25 ms, circuit of 2 edges at step 40"
	if got := screenshotLine("v.png", s, st); got != want {
		t.Errorf("trained, with a circuit:\n got %q\nwant %q", got, want)
	}
	// A saved model shown without training: no rate.
	want = "wrote -: step 20, held-out accuracy 1.000"
	if got := screenshotLine("-", Status{Step: 20, Accuracy: 1}, Stats{Seconds: 1}); got != want {
		t.Errorf("untrained:\n got %q\nwant %q", got, want)
	}
}

// TestWriteScreenshot writes the frame of a viewer that trained 20 steps
// to a file and to stdout ("-"), the same PNG of the window's size, each
// with its one line on stderr; a path that cannot be written says so.
func TestWriteScreenshot(t *testing.T) {
	v := open(t, Options{Config: tiny(20), Steps: 20, Kernels: cpu.New()})
	path := filepath.Join(t.TempDir(), "v.png")
	var stdout, stderr bytes.Buffer
	if err := v.WriteScreenshot(path, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	wantLine := fmt.Sprintf("wrote %s: step 20, held-out accuracy %.3f, ", path, v.Status().Accuracy)
	if said := stderr.String(); stdout.Len() != 0 || !strings.HasPrefix(said, wantLine) || strings.Count(said, "\n") != 1 {
		t.Errorf("stdout %d bytes, stderr %q; want nothing and one line starting %q", stdout.Len(), said, wantLine)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	lay, ppu := v.Layout()
	if want := lay.Size.Mul(ppu); img.Bounds().Size() != want {
		t.Errorf("PNG of %v, want the window's %v", img.Bounds().Size(), want)
	}

	stderr.Reset()
	if err := v.WriteScreenshot("-", &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if piped, err := png.Decode(&stdout); err != nil || piped.Bounds() != img.Bounds() {
		t.Errorf("PNG on stdout: %v, %v; want one of %v", err, piped, img.Bounds())
	}
	if !strings.HasPrefix(stderr.String(), "wrote -: step 20") {
		t.Errorf("stderr %q for stdout", stderr.String())
	}

	stderr.Reset()
	err = v.WriteScreenshot(filepath.Join(t.TempDir(), "none", "v.png"), &stdout, &stderr)
	if err == nil || !strings.HasPrefix(err.Error(), "view: writing the screenshot: ") || stderr.Len() != 0 {
		t.Errorf("unwritable path: %v, stderr %q; want the write's error and nothing said", err, stderr.String())
	}
}

// TestWriteScreenshotClosed: a viewer told to quit before it was idle
// writes nothing and returns ErrClosedBeforeScreenshot.
func TestWriteScreenshotClosed(t *testing.T) {
	needGL(t)
	v, err := Open(Options{Config: tiny(20), Steps: 20, Kernels: cpu.New(), Display: display})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Quit()
	path := filepath.Join(t.TempDir(), "v.png")
	var stdout, stderr bytes.Buffer
	err = v.WriteScreenshot(path, &stdout, &stderr)
	if !errors.Is(err, ErrClosedBeforeScreenshot) || err.Error() != "view: the window was closed before the screenshot" {
		t.Errorf("after Quit: %v, want ErrClosedBeforeScreenshot", err)
	}
	if _, serr := os.Stat(path); serr == nil || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("after Quit: file written (%v), stdout %d bytes, stderr %q; want nothing", serr, stdout.Len(), stderr.String())
	}
}

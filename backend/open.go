// Package backend opens the device a command computes on from its name:
// the one factory of devices in headlab.
package backend

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/glctx"
	"headlab/kernels"
)

// Names are the device names Open takes.
var Names = []string{"cpu", "gl", "auto"}

// Refused is an error of bad input: an unknown name, or gl asked for and
// not to be had. Its message is the error's own.
type Refused struct{ error }

func (r Refused) Unwrap() error { return r.error }

// Refusef is a Refused of the message format makes of args, for callers
// that refuse a backend in words of their own.
func Refusef(format string, args ...any) error { return Refused{fmt.Errorf(format, args...)} }

// Check refuses an unknown name before any work starts.
func Check(name string) error {
	if slices.Contains(Names, name) {
		return nil
	}
	return Refused{fmt.Errorf("unknown --backend %q (want cpu, gl or auto)", name)}
}

// Open returns the named device and a function that releases it, its GL
// device on thread th (a viewer's window), or on a headless context of
// its own when th is nil. With auto, a GL failure falls back to the CPU
// with one line on stderr; and where an NVIDIA GPU's EGL device fails,
// auto (alone, or HEADLAB_GL_CONTEXT=auto) may still run GL on another
// renderer, saying which in one line, where gl refuses.
func Open(name string, stderr io.Writer, th *glctx.Thread) (kernels.Device, func(), error) {
	if err := Check(name); err != nil {
		return nil, nil, err
	}
	if name == "cpu" {
		return cpu.New(), func() {}, nil
	}
	opts := gl.Options{Thread: th}
	if name == "auto" {
		opts.Context = "auto" // HEADLAB_GL_CONTEXT still overrides it
	}
	g, err := gl.New(opts)
	if err == nil {
		if fb := g.Thread().Fallback(); fb != "" {
			fmt.Fprintln(stderr, FallbackLine(fb, g.Renderer()))
		}
		return g, func() { g.Close() }, nil
	}
	if name == "gl" || errors.Is(err, glctx.ErrDeviceChoice) {
		return nil, nil, Refused{fmt.Errorf("--backend %s: %w", name, err)}
	}
	fmt.Fprintf(stderr, "headlab: using the cpu backend: %v\n", err)
	return cpu.New(), func() {}, nil
}

// FallbackLine is the one line saying that GL runs on renderer because an
// NVIDIA device failed (why).
func FallbackLine(why, renderer string) string {
	return fmt.Sprintf("headlab: the NVIDIA GPU's EGL device failed, so GL runs on %s: %s", renderer, why)
}

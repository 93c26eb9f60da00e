package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/glctx"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/sweep"
)

// backendFlag is --backend, shared by every command that computes. open
// is the one factory of devices in headlab: every command, bench, view,
// sweep and reproduce included, gets its device from it.
type backendFlag struct{ name string }

func (b *backendFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&b.name, "backend", "cpu", "where the model computes: cpu, gl (the whole step on OpenGL 4.3 compute; EGL without a display) or auto (gl when a context can be made)")
	_ = cmd.RegisterFlagCompletionFunc("backend", cobra.FixedCompletions(backendNames, cobra.ShellCompDirectiveNoFileComp))
}

// backendNames are the values --backend takes.
var backendNames = []string{"cpu", "gl", "auto"}

// check refuses an unknown backend name before any work starts.
func (b *backendFlag) check() error {
	if slices.Contains(backendNames, b.name) {
		return nil
	}
	return usagef("unknown --backend %q (want cpu, gl or auto)", b.name)
}

// open returns the chosen device and a function that releases it. With
// auto, a GL failure falls back to the CPU with one line on stderr; and
// where an NVIDIA GPU's EGL device fails, auto (alone, or
// HEADLAB_GL_CONTEXT=auto) may still run GL on another renderer, saying
// which in one line, where gl refuses (exit 2).
func (b *backendFlag) open(stderr io.Writer) (kernels.Device, func(), error) {
	return b.openOn(stderr, nil)
}

// openOn is open with a GL device on thread th (the viewer's window), or
// on a headless context of its own when th is nil.
func (b *backendFlag) openOn(stderr io.Writer, th *glctx.Thread) (kernels.Device, func(), error) {
	if err := b.check(); err != nil {
		return nil, nil, err
	}
	if b.name == "cpu" {
		return cpu.New(), func() {}, nil
	}
	opts := gl.Options{Thread: th}
	if b.name == "auto" {
		opts.Context = "auto" // HEADLAB_GL_CONTEXT still overrides it
	}
	g, err := gl.New(opts)
	if err == nil {
		if fb := g.Thread().Fallback(); fb != "" {
			fmt.Fprintln(stderr, fallbackLine(fb, g.Renderer()))
		}
		return g, func() { g.Close() }, nil
	}
	if b.name == "gl" || errors.Is(err, glctx.ErrDeviceChoice) {
		return nil, nil, usageError{fmt.Errorf("--backend %s: %w", b.name, err)}
	}
	fmt.Fprintf(stderr, "headlab: using the cpu backend: %v\n", err)
	return cpu.New(), func() {}, nil
}

// fallbackLine is the one line saying that GL runs on renderer because an
// NVIDIA device failed (why).
func fallbackLine(why, renderer string) string {
	return fmt.Sprintf("headlab: the NVIDIA GPU's EGL device failed, so GL runs on %s: %s", renderer, why)
}

// platform describes dev for the records a sweep stores.
func platform(dev kernels.Device) sweep.Platform {
	p := sweep.Platform{Device: dev, SIMD: simd.Path()}
	if dr, ok := dev.(kernels.Driver); ok {
		p.Renderer = dr.Renderer()
	}
	return p
}

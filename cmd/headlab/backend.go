package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"headlab/backend"
	"headlab/glctx"
	"headlab/kernels"
)

// backendFlag is --backend, shared by every command that computes; every
// device comes from package backend through open.
type backendFlag struct{ name string }

func (b *backendFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&b.name, "backend", "cpu", "where the model computes: cpu, gl (the whole step on OpenGL 4.3 compute; EGL without a display) or auto (gl when a context can be made)")
	_ = cmd.RegisterFlagCompletionFunc("backend", cobra.FixedCompletions(backend.Names, cobra.ShellCompDirectiveNoFileComp))
}

// check refuses an unknown backend name before any work starts.
func (b *backendFlag) check() error { return refusal(backend.Check(b.name)) }

// open returns the chosen device and a function that releases it
// (backend.Open); a refusal is bad input (exit 2).
func (b *backendFlag) open(stderr io.Writer) (kernels.Device, func(), error) {
	return b.openOn(stderr, nil)
}

// openOn is open with a GL device on thread th (the viewer's window), or
// on a headless context of its own when th is nil.
func (b *backendFlag) openOn(stderr io.Writer, th *glctx.Thread) (kernels.Device, func(), error) {
	dev, closeDev, err := backend.Open(b.name, stderr, th)
	return dev, closeDev, refusal(err)
}

// refusal makes backend's refusals bad input.
func refusal(err error) error {
	if r := (backend.Refused{}); errors.As(err, &r) {
		return usageError{r.Unwrap()}
	}
	return err
}

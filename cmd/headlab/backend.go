package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"headlab/backend/cpu"
	"headlab/backend/gl"
	"headlab/kernels"
)

// backendFlag is --backend, shared by every command that computes. This is
// the only place in headlab that chooses a backend.
type backendFlag struct{ name string }

func (b *backendFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&b.name, "backend", "cpu", "attention kernels: cpu, gl (OpenGL 4.3 compute) or auto (gl when a context can be made)")
}

// open returns the chosen backend and a function that releases it. With
// auto, a GL failure falls back to the CPU with one line on stderr.
func (b *backendFlag) open(stderr io.Writer) (kernels.Backend, func(), error) {
	switch b.name {
	case "cpu":
		return cpu.New(), func() {}, nil
	case "gl", "auto":
		g, err := gl.New(gl.Options{})
		if err == nil {
			return g, func() { g.Close() }, nil
		}
		if b.name == "gl" {
			return nil, nil, usageError{fmt.Errorf("--backend gl: %w", err)}
		}
		fmt.Fprintf(stderr, "headlab: using the cpu backend: %v\n", err)
		return cpu.New(), func() {}, nil
	default:
		return nil, nil, usagef("unknown --backend %q (want cpu, gl or auto)", b.name)
	}
}

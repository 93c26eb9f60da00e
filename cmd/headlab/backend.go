package main

import (
	"github.com/spf13/cobra"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// backendFlag is --backend, shared by every command that computes. This is
// the only place in headlab that chooses a backend.
type backendFlag struct{ name string }

func (b *backendFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&b.name, "backend", "cpu", "attention kernels: cpu, gl or auto")
}

// open returns the chosen backend and a function that releases it.
func (b *backendFlag) open() (kernels.Backend, func(), error) {
	switch b.name {
	case "cpu":
		return cpu.New(), func() {}, nil
	default:
		return nil, nil, usagef("unknown --backend %q (want cpu, gl or auto)", b.name)
	}
}

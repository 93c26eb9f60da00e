package main

import (
	"github.com/spf13/cobra"

	"headlab/internal/atomicfile"
	"headlab/interop"
	"headlab/train"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newExportCmd(e, nil) })
}

// exportOptions are export's flags, and what check makes of them.
type exportOptions struct {
	run         runFlag
	format, out string

	layout    interop.ExportFormat
	outFormat interop.Format
	// beside is whether the TransformerLens config goes in a file beside
	// out: not beside stdout or a device (/dev/stdout.json), where it is
	// in the metadata only.
	beside bool
}

func newExportCmd(e *env, runF func(*exportOptions) error) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export --run DIR --format transformerlens|hf --out FILE.safetensors",
		Short: "Write a saved model's weights in TransformerLens's or PyTorch's layout",
		Long:  longHelp("export"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runExport),
	}
	o.run.register(cmd, "checkpoint directory written by train --save")
	cmd.Flags().StringVar(&o.format, "format", string(interop.TransformerLens), "layout: transformerlens or hf")
	cmd.Flags().StringVar(&o.out, "out", "", `output file (.safetensors or .npz; "-" is stdout)`)
	return cmd
}

func (o *exportOptions) check(*cobra.Command, []string) error {
	if o.run.dir == "" || o.out == "" {
		return usagef("--run DIR and --out FILE are required")
	}
	var err error
	if o.layout, err = interop.ParseExportFormat(o.format); err != nil {
		return usagef("--format: %v", err)
	}
	if o.outFormat, err = interop.ChooseFormat(o.out, "", interop.Safetensors, interop.Safetensors, interop.NPZ); err != nil {
		return usageError{err}
	}
	o.beside = o.layout == interop.TransformerLens && !atomicfile.InPlace(o.out)
	outs := []output{fileOut("out", o.out)}
	if o.beside {
		outs = append(outs, fileOut("out", interop.TLConfigPath(o.out)))
	}
	return checkOutputs(outs...)
}

func runExport(e *env, o *exportOptions) error {
	m, res, err := train.Load(o.run.dir)
	if err != nil {
		return usageError{err}
	}
	return interop.WriteExport(m, res, o.layout, o.outFormat, o.out, e.stdout, o.beside, provenance())
}

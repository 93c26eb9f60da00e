package main

import (
	"io"

	"github.com/spf13/cobra"

	"headlab/internal/atomicfile"
	"headlab/interop"
	"headlab/train"
)

func init() { commands = append(commands, exportCmd) }

func exportCmd(e *env) *cobra.Command {
	var runDir, format, out string
	cmd := &cobra.Command{
		Use:   "export --run DIR --format transformerlens|hf --out FILE.safetensors",
		Short: "Write a saved model's weights in TransformerLens's or PyTorch's layout",
		Long: `Writes a checkpoint's weights for Python (docs/interop.md):

  transformerlens  HookedTransformer's state dict (embed.W_E, blocks.0.attn.W_Q
                   [n_heads, d_model, d_head], ...); FILE.json beside it, and the
                   safetensors metadata, hold the HookedTransformerConfig fields
  hf               PyTorch's usual names, nn.Linear weights [out, in]

FILE ends in .safetensors or .npz ("-" writes safetensors to stdout). Every
file carries headlab's config, the task's vocabulary and the revision.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runDir == "" || out == "" {
				return usagef("--run DIR and --out FILE are required")
			}
			f, err := interop.ParseExportFormat(format)
			if err != nil {
				return usagef("--format: %v", err)
			}
			ff, err := outputFormat(out, "", interop.Safetensors, interop.Safetensors, interop.NPZ)
			if err != nil {
				return err
			}
			outs := []output{fileOut("out", out)}
			if f == interop.TransformerLens && out != atomicfile.Stdio {
				outs = append(outs, fileOut("out", interop.TLConfigPath(out)))
			}
			if err := checkOutputs(outs...); err != nil {
				return err
			}
			m, _, err := train.Load(runDir)
			if err != nil {
				return usageError{err}
			}
			b, err := interop.Export(m, f, provenance())
			if err != nil {
				return err
			}
			if err := atomicfile.WriteStdout(out, e.stdout, func(w io.Writer) error { return interop.Write(w, ff, b) }); err != nil {
				return err
			}
			if f != interop.TransformerLens || out == atomicfile.Stdio {
				return nil
			}
			return atomicfile.Write(interop.TLConfigPath(out), func(w io.Writer) error { return interop.WriteTLConfig(w, m.Shape) })
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory written by train --save")
	cmd.Flags().StringVar(&format, "format", string(interop.TransformerLens), "layout: transformerlens or hf")
	cmd.Flags().StringVar(&out, "out", "", `output file (.safetensors or .npz; "-" is stdout)`)
	return cmd
}

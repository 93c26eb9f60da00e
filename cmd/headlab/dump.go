package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/interop"
	"headlab/tasks"
	"headlab/train"
)

func init() { commands = append(commands, dumpCmd) }

func dumpCmd(e *env) *cobra.Command {
	var (
		runDir, out, format, ablate string
		examples                    int
		bf                          backendFlag
		af                          ablationFlag
	)
	cmd := &cobra.Command{
		Use:   "dump --run DIR --out FILE.safetensors",
		Short: "Write tokens, attention and logits of a saved model on held-out examples",
		Long: `Runs a checkpoint on its first held-out examples and writes, for Python
(docs/interop.md), tokens and targets [N, T], attention [N, L, H, T, T] and
logits [N, T, V], with the token strings and headlab's config in the metadata.
The format follows FILE's extension (or --format): .safetensors, .npz, or
.json, the attention file headlab score reads (no logits). "-" is stdout
(safetensors unless --format says otherwise). Heads in --ablate are switched
off as --ablation says; mean and resample ablation take their replacements
from the examples dumped (docs/causal.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runDir == "" || out == "" {
				return usagef("--run DIR and --out FILE are required")
			}
			ff, err := outputFormat(out, format, interop.Safetensors, interop.DumpFormats...)
			if err != nil {
				return err
			}
			if err := checkOutputs(fileOut("out", out)); err != nil {
				return err
			}
			if examples < 1 || examples > train.HeldOutExamples {
				return usagef("--examples %d: want 1 to %d", examples, train.HeldOutExamples)
			}
			method, err := af.method()
			if err != nil {
				return err
			}
			if examples < method.MinExamples() {
				return usagef("--examples %d: %s ablation needs at least %d", examples, method, method.MinExamples())
			}
			m, off, be, closeBackend, err := openRun(e, runDir, ablate, &bf)
			if err != nil {
				return err
			}
			defer closeBackend()
			ev, err := train.NewEvaluator(m, be)
			if err != nil {
				return err
			}
			defer ev.Close()
			b := train.HeldOut(m)
			b.N, b.Tokens, b.Targets = examples, b.Tokens[:examples*b.T], b.Targets[:examples*b.T]
			ab, err := inspect.NewAblator(ev, []*tasks.Batch{b}, method)
			if err != nil {
				return err
			}
			sn, err := ab.Snapshot([]*tasks.Batch{b}, train.SnapshotOptions{Off: [][][]bool{off}, Attention: b.N, Logits: true})
			if err != nil {
				return err
			}
			d := interop.DumpOf(m, sn[0].Attention, b.Targets, sn[0].Logits)
			return atomicfile.WriteStdout(out, e.stdout, func(w io.Writer) error {
				return interop.WriteDump(w, ff, d, interop.Metadata(m, provenance()))
			})
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory written by train --save")
	cmd.Flags().StringVar(&out, "out", "", `output file (.safetensors, .npz or .json; "-" is stdout)`)
	cmd.Flags().StringVar(&format, "format", "", "safetensors, npz or json (default: from the extension)")
	cmd.Flags().IntVar(&examples, "examples", inspect.ScoredExamples, "how many held-out examples, from the first")
	ablateFlag(cmd, &ablate, &runDir)
	af.register(cmd)
	bf.register(cmd)
	return cmd
}

// outputFormat is the format --format names, or else the one out's
// extension names (def for "-"), among allowed; anything else is bad input.
func outputFormat(out, flag string, def interop.Format, allowed ...interop.Format) (interop.Format, error) {
	if flag == "" {
		f, err := interop.FormatOf(out, def, allowed...)
		if err != nil {
			return "", usagef("--out %v", err)
		}
		return f, nil
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if interop.Format(flag) == f {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", usagef("unknown --format %q: want %s", flag, strings.Join(names, ", "))
}

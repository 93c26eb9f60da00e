package main

import (
	"io"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/interop"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newDumpCmd(e, nil) })
}

// dumpOptions are dump's flags, and what check makes of them.
type dumpOptions struct {
	run                 runFlag
	out, format, ablate string
	examples            int
	backend             backendFlag
	ablation            ablationFlag

	outFormat interop.Format
	method    inspect.Ablation
}

func newDumpCmd(e *env, runF func(*dumpOptions) error) *cobra.Command {
	o := &dumpOptions{}
	cmd := &cobra.Command{
		Use:   "dump --run DIR --out FILE.safetensors",
		Short: "Write tokens, attention and logits of a saved model on held-out examples",
		Long:  longHelp("dump"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runDump),
	}
	o.run.register(cmd, "checkpoint directory written by train --save")
	cmd.Flags().StringVar(&o.out, "out", "", `output file (.safetensors, .npz or .json; "-" is stdout)`)
	cmd.Flags().StringVar(&o.format, "format", "", "safetensors, npz or json (default: from the extension)")
	cmd.Flags().IntVar(&o.examples, "examples", inspect.ScoredExamples, "how many held-out examples, from the first")
	ablateFlag(cmd, &o.ablate, &o.run.dir)
	o.ablation.register(cmd)
	o.backend.register(cmd)
	return cmd
}

func (o *dumpOptions) check(*cobra.Command, []string) error {
	if o.run.dir == "" || o.out == "" {
		return usagef("--run DIR and --out FILE are required")
	}
	var err error
	if o.outFormat, err = interop.ChooseFormat(o.out, o.format, interop.Safetensors, interop.DumpFormats...); err != nil {
		return usageError{err}
	}
	if err := checkOutputs(fileOut("out", o.out)); err != nil {
		return err
	}
	if err := checkExamples(o.examples, 1); err != nil {
		return err
	}
	if o.method, err = o.ablation.method(); err != nil {
		return err
	}
	return enoughExamples(o.method, o.examples)
}

func runDump(e *env, o *dumpOptions) error {
	m, off, err := o.run.loadOff(o.ablate)
	if err != nil {
		return err
	}
	ev, done, err := openEvaluator(e, m, &o.backend)
	if err != nil {
		return err
	}
	defer done()
	b, sn, err := inspect.Dumped(ev, m, o.examples, o.method, off)
	if err != nil {
		return err
	}
	d := interop.DumpOf(m, sn.Attention, b.Targets, sn.Logits)
	return atomicfile.WriteStdout(o.out, e.stdout, func(w io.Writer) error {
		return interop.WriteDump(w, o.outFormat, d, interop.Metadata(m, provenance()))
	})
}

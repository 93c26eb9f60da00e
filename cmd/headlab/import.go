package main

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"headlab/interop"
	"headlab/tasks"
	"headlab/train"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newImportCmd(e, nil) })
}

// importOptions are import's flags, and what check makes of them.
type importOptions struct {
	format, in, out, task string
	backend               backendFlag
	json                  bool

	// What check read: the model, and the result to save with it.
	model *train.Model
	// own is the result the file carries when its config is headlab's
	// own and unchanged (an export of a checkpoint): saved as it is.
	own *train.Result
}

func newImportCmd(e *env, runF func(*importOptions) error) *cobra.Command {
	o := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import --format transformerlens|hf --in FILE.safetensors --out DIR [--task NAME]",
		Short: "Read a model trained elsewhere (TransformerLens or PyTorch weights) into a checkpoint",
		Long:  longHelp("import"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runImport),
	}
	cmd.Flags().StringVar(&o.format, "format", string(interop.TransformerLens), "layout: transformerlens or hf")
	cmd.Flags().StringVar(&o.in, "in", "", "weights file (.safetensors)")
	cmd.Flags().StringVar(&o.out, "out", "", "checkpoint directory to write")
	cmd.Flags().StringVar(&o.task, "task", "", "task to evaluate on, as train takes it: "+strings.Join(tasks.Names(), ", ")+" (default: the one a headlab export names)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object on stdout")
	o.backend.register(cmd)
	return cmd
}

// check reads and converts the file, refusing anything headlab cannot
// take, before the evaluation; nothing is written on a refusal.
func (o *importOptions) check(cmd *cobra.Command, _ []string) error {
	if o.in == "" || o.out == "" {
		return usagef("--in FILE and --out DIR are required")
	}
	layout, err := interop.ParseExportFormat(o.format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	if err := o.backend.check(); err != nil {
		return err
	}
	if err := checkOutputs(checkpointOut("out", o.out)); err != nil {
		return err
	}
	if _, err := os.Stat(o.in); err != nil {
		return usagef("--in: %v", err)
	}
	if o.model, o.own, err = interop.Load(layout, o.in, o.task); err != nil {
		return usageError{err}
	}
	return nil
}

func runImport(e *env, o *importOptions) error {
	m := o.model
	ev, done, err := openEvaluator(e, m, &o.backend)
	if err != nil {
		return err
	}
	defer done()
	res, err := interop.Evaluate(ev, m)
	if err != nil {
		return err
	}
	saved := &res
	if o.own != nil {
		saved = o.own
	}
	if err := train.Save(o.out, m, saved); err != nil {
		return err
	}
	rep := &interop.ImportReport{Config: m.Train, Result: res, Kept: o.own != nil}
	return e.report(o.json, rep, func(w io.Writer) { rep.WriteText(w, m, o.in, o.out) })
}

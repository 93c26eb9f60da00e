package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"headlab/internal/interrupt"
	"headlab/viz/window"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newViewCmd(e, nil) })
}

// viewOptions are view's flags, and what check makes of them.
type viewOptions struct {
	model      trainFlags
	backend    backendFlag
	run        runFlag
	screenshot string
	after      int
	circuit    bool

	// window is the viewer's options: the model to train, or with --run
	// the checkpoint's (read by runView).
	window window.Options
}

func newViewCmd(e *env, runF func(*viewOptions) error) *cobra.Command {
	o := &viewOptions{}
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Train in a window and watch every head's attention form; click ⊘ to switch a head off",
		Long:  longHelp("view"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runView),
	}
	o.model.register(cmd)
	o.backend.register(cmd)
	o.run.register(cmd, "show the checkpoint in this directory without training")
	cmd.Flags().StringVar(&o.screenshot, "screenshot", "", "draw one frame to this PNG file and exit")
	cmd.Flags().IntVar(&o.after, "after-steps", 0, "pause training after this many steps (default: --steps)")
	cmd.Flags().BoolVar(&o.circuit, "circuit", false, "find the model's circuit for the side panel whenever training pauses (and for --run's checkpoint), before --screenshot's frame; else press c")
	return cmd
}

func (o *viewOptions) check(cmd *cobra.Command, _ []string) error {
	if o.after < 0 {
		return usagef("--after-steps must be >= 0, got %d", o.after)
	}
	if err := checkOutputs(fileOut("screenshot", o.screenshot)); err != nil {
		return err
	}
	o.window = window.Options{Circuit: o.circuit}
	if o.run.dir != "" {
		// The checkpoint defines the model: every flag of trainFlags
		// would be ignored.
		for _, name := range o.model.names {
			if cmd.Flags().Changed(name) {
				return usagef("--%s cannot be used with --run: the checkpoint defines the model", name)
			}
		}
		if cmd.Flags().Changed("after-steps") {
			return usagef("--after-steps cannot be used with --run: a checkpoint is shown without training")
		}
		return nil
	}
	c, err := o.model.config(cmd)
	if err != nil {
		return err
	}
	c = c.Sized()
	o.window.Config, o.window.Steps = c, c.Steps
	if cmd.Flags().Changed("after-steps") {
		o.window.Steps = o.after
	}
	return nil
}

func runView(e *env, o *viewOptions) error {
	opts := o.window
	if o.run.dir != "" {
		m, err := o.run.load()
		if err != nil {
			return err
		}
		opts.Model, opts.Source = m, o.run.dir
	}
	// A missing display is said before a bad --backend.
	if err := window.CheckDisplay(); err != nil {
		return err
	}
	if err := o.backend.check(); err != nil {
		return err
	}
	display, name, err := window.OpenDisplay(o.backend.name, e.stderr)
	if err != nil {
		return err
	}
	defer display.Close()
	// GL kernels share the window's thread, so the heatmaps are
	// filled on the GPU.
	be, closeBackend, err := (&backendFlag{name: name}).openOn(e.stderr, display)
	if err != nil {
		return err
	}
	defer closeBackend()
	opts.Kernels, opts.Display = be, display
	v, err := window.Open(opts)
	if err != nil {
		return err
	}
	defer v.Close()
	// Ctrl-C in the terminal closes the window as Esc does.
	interrupted, stop := interrupt.Once(v.Quit)
	defer stop()
	if o.screenshot != "" {
		err = v.WriteScreenshot(o.screenshot, e.stdout, e.stderr)
		if errors.Is(err, window.ErrClosedBeforeScreenshot) && interrupted() {
			return interruptedError{errors.New("view: interrupted before the screenshot")}
		}
		return err
	}
	err = v.Run()
	fmt.Fprintln(e.stderr, v.Stats().Line(be.Name()))
	if err == nil && interrupted() {
		return interruptedError{errors.New("view: interrupted")}
	}
	return err
}

package main

import (
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"sync/atomic"

	"github.com/spf13/cobra"

	"headlab/glctx"
	"headlab/internal/atomicfile"
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
		Long: `view opens a window, trains a model and redraws every head's attention on
one held-out example as training proceeds (rows: query, columns: key), each
panel titled with the head's current label and score. Click ⊘ on a panel to
switch that head off for evaluation and watch the held-out accuracy; the
side panel's ablation button says how (zero, mean, resample).

Keys: space run/pause, r reset, n/p next/previous example, +/- zoom,
arrows (or the mouse wheel) scroll the panels when not all fit, c finds the
model's circuit for the side panel (--circuit: whenever training pauses),
Esc quit.
Training pauses after --after-steps (default: --steps, the task's plateau);
space trains on. --run DIR shows a saved checkpoint without training.
--screenshot FILE.png draws one frame once training has paused (or the
checkpoint is evaluated), writes it and exits. Needs a display (DISPLAY);
use xvfb-run on a machine without one.`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runView),
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
	display, bf, err := openViewWindow(e, o.backend)
	if err != nil {
		return err
	}
	defer display.Close()
	// GL kernels share the window's thread, so the heatmaps are
	// filled on the GPU.
	be, closeBackend, err := bf.openOn(e.stderr, display)
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
	sig := make(chan os.Signal, 1)
	defer close(sig)
	defer stopsGracefully(sig)()
	var interrupted atomic.Bool
	go func() {
		if _, ok := <-sig; ok {
			interrupted.Store(true)
			v.Quit()
		}
	}()
	if o.screenshot != "" {
		return screenshot(e, v, o.screenshot, interrupted.Load)
	}
	err = v.Run()
	st := v.Stats()
	fmt.Fprintf(e.stderr, "view: %d frames in %.1f s (%.0f fps, %.1f ms each), %d steps (%.0f steps/s), %d refreshes (%.0f ms each), backend %s\n",
		st.Frames, st.Seconds, float64(st.Frames)/st.Seconds, 1000*st.FrameSeconds/float64(max(st.Frames, 1)), st.Steps, float64(st.Steps)/st.Seconds,
		st.Refreshes, 1000*st.RefreshSeconds/float64(max(st.Refreshes, 1)), be.Name())
	if err == nil && interrupted.Load() {
		return interruptedError{errors.New("view: interrupted")}
	}
	return err
}

// openViewWindow opens the viewer's window: OpenGL 4.1 core to draw
// (macOS's ceiling), 4.3 where the GL device computes in the same
// context. With --backend auto and no 4.3 window, it draws on 4.1 and
// the backend returned is the CPU's, saying so in one line.
func openViewWindow(e *env, bf backendFlag) (*glctx.Thread, backendFlag, error) {
	// GLFW without an X server only complains through a callback:
	// say it plainly before trying.
	if os.Getenv("DISPLAY") == "" {
		return nil, bf, usagef("view: no display: DISPLAY is not set (run it on a desktop, or under xvfb-run)")
	}
	if err := bf.check(); err != nil {
		return nil, bf, err
	}
	window41 := glctx.Options{Context: "glfw", Window: true, Major: 4, Minor: 1}
	want := window41
	if bf.name != "cpu" {
		want.Minor = 3
	}
	display, err := glctx.New(want)
	if err != nil && bf.name == "auto" {
		// No 4.3 window (macOS, an old driver): draw on 4.1 and
		// compute on the CPU.
		if d41, err41 := glctx.New(window41); err41 == nil {
			fmt.Fprintf(e.stderr, "headlab: using the cpu backend: %v\n", err)
			display, err, bf = d41, nil, backendFlag{name: "cpu"}
		}
	}
	if err != nil {
		return nil, bf, usageError{fmt.Errorf("view: %w", err)}
	}
	return display, bf, nil
}

// screenshot waits for the viewer to pause (or the checkpoint to be
// evaluated), writes one frame to path and says on stderr what it shows.
func screenshot(e *env, v *window.Viewer, path string, interrupted func() bool) error {
	if err := v.WaitIdle(0); errors.Is(err, window.ErrClosed) && interrupted() {
		return interruptedError{errors.New("view: interrupted before the screenshot")}
	} else if errors.Is(err, window.ErrClosed) {
		return errors.New("view: the window was closed before the screenshot")
	} else if err != nil {
		return err
	}
	img, err := v.Screenshot()
	if err == nil {
		err = atomicfile.WriteStdout(path, e.stdout, func(w io.Writer) error { return png.Encode(w, img) })
	}
	if err != nil {
		return fmt.Errorf("view: writing the screenshot: %w", err)
	}
	s, st := v.Status(), v.Stats()
	rate := ""
	if st.Steps > 0 {
		rate = fmt.Sprintf(", %.0f steps/s with %d refreshes of %.0f ms", float64(st.Steps)/st.Seconds,
			st.Refreshes, 1000*st.RefreshSeconds/float64(st.Refreshes))
	}
	if s.Circuit != nil {
		rate += fmt.Sprintf(", circuit of %d edges at step %d", len(s.Circuit), s.CircuitStep)
	}
	fmt.Fprintf(e.stderr, "wrote %s: step %d, held-out accuracy %.3f%s\n", path, s.Step, s.Accuracy, rate)
	return nil
}

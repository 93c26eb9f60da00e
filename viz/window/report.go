package window

import (
	"errors"
	"fmt"
	"image/png"
	"io"

	"headlab/internal/atomicfile"
)

// ErrClosedBeforeScreenshot is WriteScreenshot's error when the window
// was closed (or Quit called) before the frame could be drawn.
var ErrClosedBeforeScreenshot = errors.New("view: the window was closed before the screenshot")

// WriteScreenshot waits for the viewer to pause (or the saved model to be
// evaluated), writes one frame to path as a PNG, whole ("-" is stdout),
// and says on stderr in one line what it shows.
func (v *Viewer) WriteScreenshot(path string, stdout, stderr io.Writer) error {
	if err := v.WaitIdle(0); errors.Is(err, ErrClosed) {
		return ErrClosedBeforeScreenshot
	} else if err != nil {
		return err
	}
	img, err := v.Screenshot()
	if err == nil {
		err = atomicfile.WriteStdout(path, stdout, func(w io.Writer) error { return png.Encode(w, img) })
	}
	if err != nil {
		return fmt.Errorf("view: writing the screenshot: %w", err)
	}
	fmt.Fprintln(stderr, screenshotLine(path, v.Status(), v.Stats()))
	return nil
}

// screenshotLine says what the screenshot at path shows: the step, the
// held-out accuracy, the training rate when it trained, and the circuit
// when one is shown.
func screenshotLine(path string, s Status, st Stats) string {
	rate := ""
	if st.Steps > 0 {
		rate = fmt.Sprintf(", %.0f steps/s with %d refreshes of %.0f ms", float64(st.Steps)/st.Seconds,
			st.Refreshes, 1000*st.RefreshSeconds/float64(st.Refreshes))
	}
	if s.Circuit != nil {
		rate += fmt.Sprintf(", circuit of %d edges at step %d", len(s.Circuit), s.CircuitStep)
	}
	return fmt.Sprintf("wrote %s: step %d, held-out accuracy %.3f%s", path, s.Step, s.Accuracy, rate)
}

// Line is the one line headlab view prints when its window closes: frame
// and step rates, refresh cost, and the backend that computed
// (backendName), without a newline.
func (st Stats) Line(backendName string) string {
	return fmt.Sprintf("view: %d frames in %.1f s (%.0f fps, %.1f ms each), %d steps (%.0f steps/s), %d refreshes (%.0f ms each), backend %s",
		st.Frames, st.Seconds, float64(st.Frames)/st.Seconds, 1000*st.FrameSeconds/float64(max(st.Frames, 1)), st.Steps, float64(st.Steps)/st.Seconds,
		st.Refreshes, 1000*st.RefreshSeconds/float64(max(st.Refreshes, 1)), backendName)
}

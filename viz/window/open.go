package window

import (
	"errors"
	"fmt"
	"io"
	"os"

	"headlab/glctx"
	"headlab/internal/preflight"
)

// CheckDisplay refuses a process with no X display: GLFW without one only
// complains through a callback, so it is said plainly before trying.
func CheckDisplay() error {
	if os.Getenv("DISPLAY") == "" {
		return preflight.Refuse(errors.New("view: no display: DISPLAY is not set (run it on a desktop, or under xvfb-run)"))
	}
	return nil
}

// OpenDisplay opens the viewer's window on a thread of its own for the
// --backend named backendName (cpu, gl or auto; the caller checks the
// name): OpenGL 4.1 core to draw (macOS's ceiling), 4.3 where the GL
// device computes in the same context. With auto and no 4.3 window it
// draws on 4.1 and returns "cpu" as the backend to open, saying so in one
// line on stderr; otherwise it returns backendName. No display, or no
// window, is a preflight.Refusal.
func OpenDisplay(backendName string, stderr io.Writer) (*glctx.Thread, string, error) {
	if err := CheckDisplay(); err != nil {
		return nil, backendName, err
	}
	window41 := glctx.Options{Context: "glfw", Window: true, Major: 4, Minor: 1}
	want := window41
	if backendName != "cpu" {
		want.Minor = 3
	}
	display, err := glctx.New(want)
	if err != nil && backendName == "auto" {
		// No 4.3 window (macOS, an old driver): draw on 4.1 and
		// compute on the CPU.
		if d41, err41 := glctx.New(window41); err41 == nil {
			fmt.Fprintf(stderr, "headlab: using the cpu backend: %v\n", err)
			display, err, backendName = d41, nil, "cpu"
		}
	}
	if err != nil {
		return nil, backendName, preflight.Refuse(fmt.Errorf("view: %w", err))
	}
	return display, backendName, nil
}

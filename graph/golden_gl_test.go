//go:build cgo

package graph

import (
	"os"
	"testing"

	"headlab/backend/gl"
)

// TestGoldenGL holds the GL device to the same values (it must have a
// context under CI).
func TestGoldenGL(t *testing.T) {
	golden(t, glDevice(t))
}

// glDevice is a GL device for a test, closed when it ends; without a
// context the test skips, unless CI is set, where it fails.
func glDevice(t *testing.T) *gl.Device {
	t.Helper()
	d, err := gl.New(gl.Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and no OpenGL 4.3 context: %v", err)
		}
		t.Skipf("no OpenGL 4.3 context: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

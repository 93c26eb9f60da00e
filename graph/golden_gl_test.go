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
	d, err := gl.New(gl.Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and no OpenGL 4.3 context: %v", err)
		}
		t.Skipf("no OpenGL 4.3 context: %v", err)
	}
	defer d.Close()
	golden(t, d)
}

//go:build cgo

package graph

import "testing"

// TestTailIsTheWholePassGL: the same bits on the GL device.
func TestTailIsTheWholePassGL(t *testing.T) { tailIsTheWholePass(t, glDevice(t)) }

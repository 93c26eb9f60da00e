package sweep

import (
	"errors"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/simd"
	"headlab/kernels"
)

// TestPlatforms: the first worker gets the device given, each later one
// a device of its own from open, whose failure is the worker's.
func TestPlatforms(t *testing.T) {
	first := cpu.New()
	opened := 0
	var fail error
	next := Platforms(first, func() (kernels.Device, error) {
		opened++
		return cpu.New(), fail
	})
	p, err := next()
	if err != nil || p.Device != first || opened != 0 || p.SIMD != simd.Path() || p.Renderer != "" {
		t.Fatalf("first worker: %+v, %v, %d opened", p, err, opened)
	}
	if p, err = next(); err != nil || p.Device == first || opened != 1 {
		t.Errorf("second worker: %+v, %v, %d opened", p, err, opened)
	}
	fail = errors.New("no device")
	if _, err = next(); !errors.Is(err, fail) {
		t.Errorf("a failing open: %v", err)
	}
}

package kernels_test

import (
	"slices"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// TestArena: Dense gives S zeroed arrays end to end, Shared one array
// every model reads; Free may be called again.
func TestArena(t *testing.T) {
	a := kernels.Arena{Dev: cpu.New(), S: 3}
	d, err := a.Dense(4)
	if err != nil || d.Len != 4 || d.Stride != 4 || d.Buf.Len() != 12 {
		t.Fatalf("Dense: %+v, %v", d, err)
	}
	s, err := a.Shared([]float32{1, 2})
	if err != nil || s.Stride != 0 || s.Len != 2 {
		t.Fatalf("Shared: %+v, %v", s, err)
	}
	got := make([]float32, 6)
	if err := a.Dev.Download(got, s, 3); err != nil || !slices.Equal(got, []float32{1, 2, 1, 2, 1, 2}) {
		t.Fatalf("every model reads %v, %v", got, err)
	}
	a.Free()
	a.Free() // nothing left to free
}

package analysis

import (
	"reflect"
	"testing"
)

// TestMask: NewMask takes the heads base switches off into a model's
// shape, With switches one more off in a copy, and Off reads a head the
// mask does not hold as on.
func TestMask(t *testing.T) {
	base := Mask{{false, true}} // smaller than the model: layer 1 absent
	m := NewMask(2, 3, base)
	if want := (Mask{{false, true, false}, {false, false, false}}); !reflect.DeepEqual(m, want) {
		t.Fatalf("NewMask(2, 3, %v) = %v, want %v", base, m, want)
	}
	w := m.With(1, 2)
	if !w.Off(1, 2) || !w.Off(0, 1) || m.Off(1, 2) {
		t.Errorf("With(1, 2) = %v from %v: want L1H2 off in the copy alone, L0H1 kept", w, m)
	}
	if got := HeadNames(w); !reflect.DeepEqual(got, []string{"L0H1", "L1H2"}) {
		t.Errorf("HeadNames(%v) = %v", w, got)
	}
	c := w.Clone()
	c[0][0] = true
	if w.Off(0, 0) {
		t.Error("Clone shares rows with the mask it copies")
	}
	var none Mask
	if none.Off(0, 0) || m.Off(2, 0) || m.Off(0, 3) || m.Off(0, 0) {
		t.Error("a head the mask does not hold, or holds on, reads as off")
	}
	if got := NewMask(1, 2, nil); !reflect.DeepEqual(got, Mask{{false, false}}) {
		t.Errorf("NewMask(1, 2, nil) = %v, want every head on", got)
	}
}

package kernels

import "testing"

func TestShape(t *testing.T) {
	s := Shape{B: 2, T: 3, H: 4, Dh: 5, Causal: true}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.QKVLen() != 2*3*4*5 || s.ProbsLen() != 2*4*3*3 {
		t.Fatalf("lengths %d, %d", s.QKVLen(), s.ProbsLen())
	}
	if !s.Visible(2, 1) || !s.Visible(1, 1) || s.Visible(1, 2) {
		t.Fatal("causal visibility wrong")
	}
	s.Causal = false
	if !s.Visible(1, 2) {
		t.Fatal("without the mask every key is visible")
	}
	for _, bad := range []Shape{{T: 3, H: 1, Dh: 1}, {B: 1, T: 0, H: 1, Dh: 1}, {B: 1, T: 1, H: -1, Dh: 1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

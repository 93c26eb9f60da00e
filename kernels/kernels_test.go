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
	for _, bad := range []Shape{{T: 3, H: 1, Dh: 1}, {B: 1, T: 0, H: 1, Dh: 1}, {B: 1, T: 1, H: -1, Dh: 1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

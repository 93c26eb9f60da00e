package bench

import (
	"reflect"
	"strings"
	"testing"

	"headlab/kernels"
)

// TestEveryKernelHasACost: the cost model's entry for each kernel of
// kernels.Kernels describes a call of that kernel by its own name, and
// Model knows the name (a kernel Model lacks is refused by name).
func TestEveryKernelHasACost(t *testing.T) {
	ki := reflect.TypeFor[kernels.Kernels]()
	errType := reflect.TypeFor[error]()
	kernelsSeen := 0
	for i := range ki.NumMethod() {
		m := ki.Method(i)
		if m.Type.NumOut() != 1 || m.Type.Out(0) != errType {
			continue // Fuses, Attends: no kernel
		}
		kernelsSeen++
		var c Call
		method := reflect.ValueOf(costModel{&c}).MethodByName(m.Name)
		args := make([]reflect.Value, m.Type.NumIn())
		for j := range args {
			args[j] = reflect.Zero(m.Type.In(j))
		}
		args[0] = reflect.ValueOf(1) // S
		if err := method.Call(args)[0].Interface(); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if c.Kernel != m.Name || c.S != 1 {
			t.Errorf("%s: the cost model describes %q for %d seeds", m.Name, c.Kernel, c.S)
		}
		if _, err := Model(c); err != nil && strings.Contains(err.Error(), "has no kernel") {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
	if kernelsSeen < 30 {
		t.Errorf("%d kernels in kernels.Kernels, want at least 30", kernelsSeen)
	}
}

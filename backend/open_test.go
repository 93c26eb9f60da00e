package backend

import (
	"bytes"
	"errors"
	"testing"
)

// TestOpen: cpu opens the CPU device with nothing on stderr; an unknown
// name is Refused, in the message the commands print.
func TestOpen(t *testing.T) {
	var stderr bytes.Buffer
	dev, release, err := Open("cpu", &stderr, nil)
	if err != nil || dev == nil || stderr.Len() != 0 {
		t.Fatalf("cpu: %v, %v, %q", dev, err, stderr.String())
	}
	if dev.Name() != "cpu" {
		t.Errorf("cpu opened %q", dev.Name())
	}
	release()
	_, _, err = Open("tpu", &stderr, nil)
	var r Refused
	if !errors.As(err, &r) || err.Error() != `unknown --backend "tpu" (want cpu, gl or auto)` {
		t.Errorf("tpu: %v", err)
	}
	for _, n := range Names {
		if Check(n) != nil {
			t.Errorf("Check(%q) = %v", n, Check(n))
		}
	}
}

// TestRefusef: a refusal in the caller's words is a Refused whose message
// is those words.
func TestRefusef(t *testing.T) {
	err := Refusef("--backends gl: %s", "no context")
	if r := (Refused{}); !errors.As(err, &r) || err.Error() != "--backends gl: no context" || r.Unwrap().Error() != "--backends gl: no context" {
		t.Errorf("Refusef: %#v", err)
	}
}

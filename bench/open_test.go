package bench

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"headlab/backend"
	"headlab/glctx"
)

// TestOpenBackendCPU: the CPU opens, its device released by the function
// returned.
func TestOpenBackendCPU(t *testing.T) {
	dev, release, err := OpenBackend(&bytes.Buffer{}, false)("cpu")
	if err != nil || dev.Name() != "cpu" {
		t.Fatalf("cpu: %v, %v", dev, err)
	}
	release()
}

// TestOpenBackendGLFails: gl that cannot open (an unknown kind of
// context fails before any driver is touched) is a SkipError saying why
// when optional, and a refusal as --backends gl when asked for.
func TestOpenBackendGLFails(t *testing.T) {
	t.Setenv("HEADLAB_GL_CONTEXT", "no-such-context")
	_, _, want := backend.Open("gl", &bytes.Buffer{}, nil)
	if want == nil {
		t.Skip("a GL context opened")
	}
	why := strings.TrimPrefix(want.Error(), "--backend gl: ")
	var skip *SkipError
	if _, _, err := OpenBackend(&bytes.Buffer{}, true)("gl"); !errors.As(err, &skip) || skip.Reason != why {
		t.Errorf("optional gl: %v, want a SkipError %q", err, why)
	}
	_, _, err := OpenBackend(&bytes.Buffer{}, false)("gl")
	if r := (backend.Refused{}); !errors.As(err, &r) || err.Error() != "--backends gl: "+why {
		t.Errorf("gl asked for: %v, want a backend.Refused %q", err, "--backends gl: "+why)
	}
}

// TestOpenBackendBadEGLDevice: a HEADLAB_EGL_DEVICE that names no device
// is refused even where gl is optional.
func TestOpenBackendBadEGLDevice(t *testing.T) {
	t.Setenv("HEADLAB_EGL_DEVICE", "not-a-number")
	t.Setenv("HEADLAB_GL_CONTEXT", "") // the EGL path, which reads HEADLAB_EGL_DEVICE
	_, _, got := backend.Open("gl", &bytes.Buffer{}, nil)
	if !errors.Is(got, glctx.ErrDeviceChoice) {
		if os.Getenv("CI") != "" {
			t.Fatalf("a bad HEADLAB_EGL_DEVICE under CI: %v, want glctx.ErrDeviceChoice", got)
		}
		t.Skipf("no EGL here to read HEADLAB_EGL_DEVICE: %v", got)
	}
	_, _, err := OpenBackend(&bytes.Buffer{}, true)("gl")
	var skip *SkipError
	if r := (backend.Refused{}); errors.As(err, &skip) || !errors.As(err, &r) || !strings.HasPrefix(err.Error(), "--backends gl: ") {
		t.Errorf("optional gl with a bad HEADLAB_EGL_DEVICE: %v, want a refusal", err)
	}
}

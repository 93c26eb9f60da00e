package bench

import (
	"errors"
	"io"
	"strings"

	"headlab/backend"
	"headlab/glctx"
	"headlab/kernels"
)

// OpenBackend opens the backend name for a `headlab bench` (backend.Open,
// its lines on stderr). Where glOptional, gl that cannot open is a
// *SkipError saying why, unless HEADLAB_EGL_DEVICE is what failed; gl
// that must open and cannot is refused as --backends gl (backend.Refused:
// bad input).
func OpenBackend(stderr io.Writer, glOptional bool) func(name string) (kernels.Device, func(), error) {
	return func(name string) (kernels.Device, func(), error) {
		dev, release, err := backend.Open(name, stderr, nil)
		if err == nil || name != "gl" {
			return dev, release, err
		}
		// A bad HEADLAB_EGL_DEVICE is refused even where GL is optional.
		if glOptional && !errors.Is(err, glctx.ErrDeviceChoice) {
			return nil, nil, &SkipError{Reason: glFailure(err)}
		}
		return nil, nil, backend.Refusef("--backends gl: %s", strings.TrimPrefix(err.Error(), "--backend gl: "))
	}
}

// glFailure is why GL failed, without backend's "--backend gl: ".
func glFailure(err error) string {
	if r := (backend.Refused{}); errors.As(err, &r) {
		if why := errors.Unwrap(r.Unwrap()); why != nil {
			return why.Error()
		}
	}
	return err.Error()
}

package version

import (
	"runtime/debug"
	"testing"
)

func TestRevision(t *testing.T) {
	saved := revision
	defer func() { revision = saved }()

	revision = "0123abc"
	if got := Revision(); got != "0123abc" {
		t.Errorf("with -X set: Revision() = %q", got)
	}
	// Without -X: the build info's stamp if the toolchain wrote one, else
	// "unknown" (builds here run with -buildvcs=false).
	revision = ""
	want := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				want = s.Value
			}
		}
	}
	if got := Revision(); got != want {
		t.Errorf("without -X: Revision() = %q, want %q", got, want)
	}
}

func TestModule(t *testing.T) {
	// A test binary is built from the checkout: Go calls that "(devel)".
	if got := Module(); got != "(devel)" {
		t.Errorf("Module() = %q, want (devel)", got)
	}
}

package version

import (
	"runtime/debug"
	"testing"
)

func TestRevision(t *testing.T) {
	saved := revision
	defer func() { revision = saved }()
	stamp := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				stamp = s.Value
			}
		}
	}
	or := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	// The build info's stamp where the toolchain wrote one (test binaries
	// and -buildvcs=false builds have none), else -X, else "unknown".
	revision = "0123abc"
	if got, want := Revision(), or(stamp, "0123abc"); got != want {
		t.Errorf("with -X set: Revision() = %q, want %q", got, want)
	}
	revision = ""
	if got, want := Revision(), or(stamp, "unknown"); got != want {
		t.Errorf("without -X: Revision() = %q, want %q", got, want)
	}
}

func TestModule(t *testing.T) {
	// A test binary is built from the checkout: Go calls that "(devel)".
	if got := Module(); got != "(devel)" {
		t.Errorf("Module() = %q, want (devel)", got)
	}
}

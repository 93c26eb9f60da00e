// Package version says which headlab this is: its module version and the
// VCS revision it was built from.
package version

import "runtime/debug"

// revision is set at link time, for builds without VCS stamping
// (GOFLAGS=-buildvcs=false):
//
//	go build -ldflags "-X headlab/internal/version.revision=$(git rev-parse HEAD)"
var revision string

// Revision is the VCS revision headlab was built from: the one set with
// -ldflags -X, else the build info's vcs.revision (with "-dirty" when the
// tree had changes), else "".
func Revision() string {
	if revision != "" {
		return revision
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// Module is headlab's module version from the build info: "(devel)" for a
// build from a checkout, "" when the binary carries no build info.
func Module() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return bi.Main.Version
}

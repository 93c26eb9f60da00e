// Package version says which build of headlab is running: the module
// version and the VCS revision it was built from.
package version

import "runtime/debug"

// revision is set at link time, for builds that carry no VCS stamp (here
// they run with GOFLAGS=-buildvcs=false; a container build has no .git):
//
//	go build -ldflags "-X headlab/internal/version.revision=$(git rev-parse HEAD)"
var revision string

// Revision is the VCS revision headlab was built from: the one the Go
// toolchain stamped into the build info, else the one set at link time,
// else "unknown".
func Revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	if revision != "" {
		return revision
	}
	return "unknown"
}

// Module is headlab's module version from the build info: "(devel)" for a
// build from a checkout, a tag such as v0.2.0 for `go install
// headlab/cmd/headlab@v0.2.0`.
func Module() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

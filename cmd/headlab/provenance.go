package main

import (
	buildinfo "headlab/internal/version"
	"headlab/interop"
)

// provenance is the version and VCS revision exported files record
// (internal/version: the build info's revision, or the one scripts/run.sh
// and scripts/test.sh link in; "unknown" when neither is there).
func provenance() interop.Provenance {
	return interop.Provenance{Version: buildinfo.Module(), Revision: buildinfo.Revision()}
}

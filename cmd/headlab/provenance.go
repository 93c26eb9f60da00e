package main

import (
	"runtime/debug"

	"headlab/interop"
)

// provenance is the version and VCS revision exported files record. The
// revision comes from the build info, which builds with -buildvcs=false
// leave without one; it is then "".
func provenance() interop.Provenance {
	p := interop.Provenance{Version: version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				p.Revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && p.Revision != "" {
			p.Revision += "-dirty"
		}
	}
	return p
}

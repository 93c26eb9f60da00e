package version

import "testing"

// TestRevisionFromLinker: a revision set at link time wins over the build
// info, which builds with -buildvcs=false lack.
func TestRevisionFromLinker(t *testing.T) {
	defer func(old string) { revision = old }(revision)
	revision = "0123abc"
	if got := Revision(); got != "0123abc" {
		t.Errorf("Revision() = %q with -X revision=0123abc", got)
	}
}

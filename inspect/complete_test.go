package inspect

import (
	"slices"
	"testing"
)

// TestCompleteHeads: every head not named yet that the last item starts,
// after the items typed.
func TestCompleteHeads(t *testing.T) {
	for typed, want := range map[string][]string{
		"":        {"L0H0", "L0H1", "L1H0", "L1H1"},
		"L1":      {"L1H0", "L1H1"},
		"L0H1,L":  {"L0H1,L0H0", "L0H1,L1H0", "L0H1,L1H1"},
		"L0H1,L2": nil,
	} {
		if got := CompleteHeads(2, 2, typed); !slices.Equal(got, want) {
			t.Errorf("%q completes to %v, want %v", typed, got, want)
		}
	}
}

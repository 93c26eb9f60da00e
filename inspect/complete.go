package inspect

import (
	"slices"
	"strings"

	"headlab/analysis"
)

// CompleteHeads completes a list of heads (--ablate) of a model of
// layers x heads: the list typed so far (a comma-separated prefix)
// followed by each head it does not name yet.
func CompleteHeads(layers, heads int, typed string) []string {
	done, prefix := "", typed
	if k := strings.LastIndexByte(typed, ','); k >= 0 {
		done, prefix = typed[:k+1], typed[k+1:]
	}
	named := strings.Split(done, ",")
	var out []string
	for l := range layers {
		for h := range heads {
			name := analysis.HeadName(l, h)
			if strings.HasPrefix(name, prefix) && !slices.Contains(named, name) {
				out = append(out, done+name)
			}
		}
	}
	return out
}

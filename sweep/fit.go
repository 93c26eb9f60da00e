package sweep

import (
	"errors"
	"fmt"
	"io"

	"headlab/internal/preflight"
	"headlab/kernels"
	"headlab/train"
)

// LayOut lays out pairs on dev as ask says (NewLayout, then Fit), each
// model with the probed graph when probed, refusing before any work
// (preflight.Refusal) a run that does not fit the process's memory or
// the device's, or a group the device cannot hold, and saying in one
// line on stderr when the default group size splits a configuration's
// seeds.
func LayOut(stderr io.Writer, dev kernels.Device, pairs []Pair, ask Ask, probed bool) (Layout, error) {
	lay := NewLayout(dev, len(pairs), ask)
	configs := configsOf(pairs)
	// Before Fit, which builds one model of each shape.
	if err := preflight.HostMemory(dev, configs, lay.Models(len(pairs)), probed); err != nil {
		return lay, err
	}
	note, err := lay.Fit(dev, pairs, probed)
	var tl *TooLarge
	if errors.As(err, &tl) {
		return lay, preflight.Refusef("--group %d: at most %d fit (%s)", tl.Asked, tl.Limit, tl.Why)
	}
	if err != nil {
		return lay, preflight.Refuse(err)
	}
	if note != "" {
		fmt.Fprintf(stderr, "sweep: %s\n", note)
	}
	return lay, preflight.DeviceMemory(stderr, dev, configs, lay.Group, probed)
}

// configsOf lists the configurations of pairs, one per shape.
func configsOf(pairs []Pair) []train.Config {
	var out []train.Config
	for _, g := range Groups(pairs, len(pairs)+1) {
		out = append(out, g[0].Config)
	}
	return out
}

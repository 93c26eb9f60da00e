package sweep

import (
	"fmt"

	"headlab/train"
)

// ConfigName is a configuration in words, for titles.
func ConfigName(c train.Config) string {
	return fmt.Sprintf("%s, %d layer%s x %d heads, positions %s, causal %s, %d steps",
		c.Task, c.Layers, map[bool]string{true: "", false: "s"}[c.Layers == 1], c.Heads,
		OnOff(c.Positions), OnOff(c.Causal), c.Steps)
}

// OnOff is "on" or "off".
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

package sweep

import (
	"fmt"
	"path/filepath"

	"headlab/train"
)

// ConfigName is a configuration in words, for titles.
func ConfigName(c train.Config) string {
	name := fmt.Sprintf("%s, %d layer%s x %d heads, d-model %d", c.Task, c.Layers, map[bool]string{true: "", false: "s"}[c.Layers == 1], c.Heads, c.DModel)
	if c.DFF != 2*c.DModel && !c.NoMLP {
		name += fmt.Sprintf(", d-ff %d", c.DFF)
	}
	name += fmt.Sprintf(", positions %s, causal %s, %d steps of batch %d at lr %g", OnOff(c.Positions), OnOff(c.Causal), c.Steps, c.Batch, c.LR)
	if c.TiedEmbeddings {
		name += ", tied embeddings"
	}
	if c.NoMLP {
		name += ", attention only"
	}
	name += ", " + c.Loss + " loss"
	if c.TrainExamples > 0 {
		name += fmt.Sprintf(", %d training sequences", c.TrainExamples)
	}
	if c.WeightDecay != 0 {
		name += fmt.Sprintf(", weight decay %g", c.WeightDecay)
	}
	return name
}

// OnOff is "on" or "off".
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// YesNo is "yes" or "no".
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// HistogramFile is where a configuration's accuracy histogram goes in dir,
// as ext (".png", ".svg" or ".pdf").
func HistogramFile(dir, ext string, cr *ConfigReport) string {
	return filepath.Join(dir, "hist-"+Slug(cr.Key)+ext)
}

package inspect

import (
	"fmt"

	"headlab/analysis"
	"headlab/train"
)

// HeadWeights slices every head's Q, K, V and output projections out of a
// model's weights (head h owns columns h*Dh..(h+1)*Dh-1 of Q, K and V and
// the same rows of the output projection).
func HeadWeights(m *train.Model) []analysis.HeadWeights {
	c := m.Shape
	d, dh := c.DModel, c.HeadDim()
	cols := func(name string, h int) analysis.Matrix {
		w := m.Weights.Get(name).Data
		out := analysis.Matrix{Rows: d, Cols: dh, Data: make([]float64, d*dh)}
		for r := 0; r < d; r++ {
			for j := 0; j < dh; j++ {
				out.Data[r*dh+j] = float64(w[r*d+h*dh+j])
			}
		}
		return out
	}
	var heads []analysis.HeadWeights
	for l := 0; l < c.Layers; l++ {
		b := fmt.Sprintf("blocks.%d.attn.", l)
		wo := m.Weights.Get(b + "out.weight").Data
		for h := 0; h < c.Heads; h++ {
			o := analysis.Matrix{Rows: dh, Cols: d, Data: make([]float64, dh*d)}
			for r := 0; r < dh; r++ {
				for j := 0; j < d; j++ {
					o.Data[r*d+j] = float64(wo[(h*dh+r)*d+j])
				}
			}
			heads = append(heads, analysis.HeadWeights{Layer: l, Head: h,
				Q: cols(b+"q.weight", h), K: cols(b+"k.weight", h), V: cols(b+"v.weight", h), O: o})
		}
	}
	return heads
}

// CompositionReport is every cross-layer pair's composition scores beside
// the random baseline for the model's shapes.
type CompositionReport struct {
	Pairs    []analysis.Composition `json:"pairs"`
	Baseline analysis.Composition   `json:"baseline"`
}

// Composition scores how m's later heads read its earlier heads.
func Composition(m *train.Model) CompositionReport {
	return CompositionReport{
		Pairs:    analysis.Compositions(HeadWeights(m)),
		Baseline: analysis.CompositionBaseline(m.Shape.DModel, m.Shape.HeadDim(), 200, m.Train.Seed),
	}
}

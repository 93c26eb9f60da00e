package interop

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"headlab/graph"
	"headlab/train"
)

// Import inverts Export exactly, in both layouts, on every shape of
// model (positions or not, tied embeddings, attention-only), and refuses
// a file whose repeated or filled-in weights disagree with its config.
func TestImportInvertsExport(t *testing.T) {
	base := graph.Arch{Layers: 2, Heads: 2, DModel: 6, DFF: 8, Positions: true, Causal: true}
	var shapes []graph.Arch
	for _, edit := range []func(a *graph.Arch){
		func(*graph.Arch) {},
		func(a *graph.Arch) { a.Positions, a.Causal = false, false },
		func(a *graph.Arch) { a.TiedEmbeddings = true },
		func(a *graph.Arch) { a.NoMLP, a.DFF, a.TiedEmbeddings, a.Positions = true, 0, true, false },
	} {
		a := base
		edit(&a)
		shapes = append(shapes, a)
	}
	for _, a := range shapes {
		c := graph.Config{Vocab: 5, SeqLen: 4, Arch: a}
		m := &train.Model{Train: train.Config{Task: "induction", Arch: a}, Shape: c, Weights: graph.InitWeights(c, 3)}
		for _, f := range ExportFormats {
			t.Run(fmt.Sprintf("%s/%+v", f, a), func(t *testing.T) {
				b, err := Export(m, f, Provenance{})
				if err != nil {
					t.Fatal(err)
				}
				im, err := Import(f, b, nil)
				if err != nil {
					t.Fatal(err)
				}
				if im.Shape != c {
					t.Fatalf("shape %s, want %s", im.Shape, c)
				}
				for i, p := range im.Weights.Params {
					want := m.Weights.Params[i]
					for j := range p.Data {
						if math.Float32bits(p.Data[j]) != math.Float32bits(want.Data[j]) {
							t.Fatalf("%s[%d] = %v, exported %v", p.Name, j, p.Data[j], want.Data[j])
						}
					}
				}
				// A repeated weight that disagrees, or a filled-in zero
				// that is not, is refused by name.
				names := map[ExportFormat][2]string{TransformerLens: {"unembed.W_U", "pos_embed.W_pos"}, HF: {"unembed.weight", "pos_emb.weight"}}[f]
				var name string
				switch {
				case a.TiedEmbeddings:
					name = names[0]
				case !a.Positions:
					name = names[1]
				default:
					return
				}
				for i := range b.Tensors {
					if b.Tensors[i].Name == name {
						b.Tensors[i].F32 = append([]float32(nil), b.Tensors[i].F32...)
						b.Tensors[i].F32[1] += 1
					}
				}
				var u *Unrepresentable
				if _, err := Import(f, b, nil); !errors.As(err, &u) {
					t.Errorf("%s changed: %v", name, err)
				}
			})
		}
	}
}

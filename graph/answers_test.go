package graph

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"headlab/backend/cpu"
)

// answerBatch is a batch of model seed's random tokens with random
// targets at the given positions only.
func answerBatch(c Config, batch int, seed uint64, answers []int) (tok, tgt []int) {
	rng := rand.New(rand.NewPCG(seed, 2))
	tok, tgt = make([]int, batch*c.SeqLen), make([]int, batch*c.SeqLen)
	for i := range tok {
		tok[i], tgt[i] = rng.IntN(c.Vocab), -1
	}
	for b := range batch {
		for _, a := range answers {
			tgt[b*c.SeqLen+a] = rng.IntN(c.Vocab)
		}
	}
	return tok, tgt
}

// runBoth builds, for three models, Build's training Net and
// BuildTrain's for answers on one block, gives both the same batches
// and runs them.
func runBoth(t *testing.T, c Config, batch int, answers []int) (full, pruned *Net) {
	t.Helper()
	seeds := []uint64{3, 4, 5}
	b, err := NewBlock(cpu.New(), c, len(seeds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Free)
	var ws []*Weights
	for _, s := range seeds {
		ws = append(ws, InitWeights(c, s))
	}
	if err := b.Upload(ws); err != nil {
		t.Fatal(err)
	}
	if full, err = Build(b, batch, true); err != nil {
		t.Fatal(err)
	}
	if pruned, err = BuildTrain(b, batch, answers); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { full.Close(); pruned.Close() })
	for _, n := range []*Net{full, pruned} {
		for i, s := range seeds {
			tok, tgt := answerBatch(c, batch, s, answers)
			if err := n.SetInputs(i, tok, tgt); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Run(); err != nil {
			t.Fatal(err)
		}
	}
	return full, pruned
}

// TestBuildTrainMatchesBuild: a training Net that computes its last
// layers on the answer rows alone gives the loss, every parameter's and
// gate's gradient and the attention of the Net that computes every row,
// bit for bit, and the answer rows' logits; for every shape of model and
// answers that are a block, scattered, one position, or all of them.
func TestBuildTrainMatchesBuild(t *testing.T) {
	tied := smallConfig(true, true)
	tied.TiedEmbeddings = true
	one := smallConfig(false, true)
	one.Layers = 1
	for _, c := range []Config{smallConfig(true, true), smallConfig(false, false), tied, one} {
		for _, answers := range [][]int{{3, 4, 5}, {0, 2, 5}, {5}, {1}, {0, 1, 2, 3, 4, 5}} {
			const batch = 3
			full, pruned := runBoth(t, c, batch, answers)
			if got, want := read(t, pruned.Losses), read(t, full.Losses); !sameFloats(got, want) {
				t.Fatalf("%v answers %v: losses %v, the full Net's %v", c, answers, got, want)
			}
			got := read(t, func() ([]float32, error) { return pruned.read(pruned.Grads()) })
			want := read(t, func() ([]float32, error) { return full.read(full.Grads()) })
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%v answers %v: gradient %d of %d is %v, the full Net's %v", c, answers, j, len(want), got[j], want[j])
				}
			}
			for l := range c.Layers {
				if !sameFloats(read(t, func() ([]float32, error) { return pruned.Probs(l, batch) }), read(t, func() ([]float32, error) { return full.Probs(l, batch) })) {
					t.Fatalf("%v answers %v: layer %d's attention differs", c, answers, l)
				}
			}
			gp, err := pruned.GateGrads()
			if err != nil {
				t.Fatal(err)
			}
			gf, _ := full.GateGrads()
			for s := range gf {
				for l := range gf[s] {
					for h := range gf[s][l] {
						if gp[s][l][h] != gf[s][l][h] {
							t.Fatalf("%v answers %v: model %d gate L%dH%d gradient %v, the full Net's %v", c, answers, s, l, h, gp[s][l][h], gf[s][l][h])
						}
					}
				}
			}
			pb, _ := pruned.Traffic()
			fb, _ := full.Traffic()
			if len(answers) < c.SeqLen && pb >= fb || len(answers) == c.SeqLen && pb != fb {
				t.Errorf("%v answers %v: the Net moves %d bytes, the full Net %d", c, answers, pb, fb)
			}
			lp, lf := read(t, pruned.Logits), read(t, full.Logits)
			rows, v := batch*len(answers), c.Vocab
			if len(lp) != 3*rows*v {
				t.Fatalf("%v answers %v: %d logits, want %d", c, answers, len(lp), 3*rows*v)
			}
			for s := range 3 {
				for r := range rows {
					at := (s*batch*c.SeqLen + r/len(answers)*c.SeqLen + answers[r%len(answers)]) * v
					if !sameFloats(lp[(s*rows+r)*v:][:v], lf[at:][:v]) {
						t.Fatalf("%v answers %v: model %d answer row %d's logits differ from the full Net's", c, answers, s, r)
					}
				}
			}
		}
	}
}

// TestBuildTrainRefuses positions that are not ascending positions of a
// sequence, and a batch with a target where the Net does not read.
func TestBuildTrainRefuses(t *testing.T) {
	c := smallConfig(true, true)
	b, err := NewBlock(cpu.New(), c, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	for _, bad := range [][]int{nil, {}, {2, 1}, {1, 1}, {-1, 2}, {6}} {
		if n, err := BuildTrain(b, 2, bad); err == nil {
			n.Close()
			t.Errorf("BuildTrain took answer positions %v of a sequence of %d", bad, c.SeqLen)
		}
	}
	n, err := BuildTrain(b, 2, []int{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	tok, tgt := answerBatch(c, 2, 1, []int{4, 5})
	if err := n.SetInputs(0, tok, tgt); err != nil {
		t.Fatal(err)
	}
	tgt[c.SeqLen+3] = 1
	if err := n.SetInputs(0, tok, tgt); err == nil || !strings.Contains(err.Error(), "position 3") {
		t.Errorf("a target at position 3 of a Net reading 4 and 5: %v", err)
	}
}

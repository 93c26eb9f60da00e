package train

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"headlab/backend/cpu"
	"headlab/internal/simd"
	"headlab/tasks"
)

// weightsDigest is the first 8 bytes of the SHA-256 of m's weights' bits.
func weightsDigest(m *Model) string {
	h := sha256.New()
	for _, p := range m.Weights.Params {
		for _, v := range p.Data {
			h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

// TestAnswersLossKeepsItsBits: --loss answers trains exactly as headlab
// did before the loss was a choice. The digests are of the weights after
// 100 steps, made by the build before it (265e9d3), on each family of
// vector paths (avx512, avx2 and neon give the same bits; go its own).
func TestAnswersLossKeepsItsBits(t *testing.T) {
	want := map[string]string{"induction": "3b22391a13f7916e", "agreement": "c97eb2f66b13ded8"}
	if simd.Path() == "go" {
		want = map[string]string{"induction": "ac2ce37e93f0102d", "agreement": "38a7df4cae1dfda5"}
	}
	for _, task := range []string{"induction", "agreement"} {
		c := Defaults(task)
		c.Steps, c.Loss = 100, tasks.Answers
		m, _, err := Run(c, cpu.New(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := weightsDigest(m); got != want[task] {
			t.Errorf("%s on %s, --loss answers: weights digest %s, the build before the loss choice made %s", task, simd.Path(), got, want[task])
		}
	}
}

// Under --loss answers the answer loss is the training loss, bit for bit;
// under next-token the training loss also counts the other positions,
// so the two differ, and every position carries a target.
func TestAnswerLossBesideTheTrainingLoss(t *testing.T) {
	for _, loss := range tasks.Losses() {
		c := Defaults("induction")
		c.Steps, c.Loss = 30, loss
		g, err := NewGroup([]Config{c}, cpu.New())
		if err != nil {
			t.Fatal(err)
		}
		for range c.Steps {
			if err := g.TrainStep(); err != nil {
				t.Fatal(err)
			}
		}
		l, err := g.Losses()
		if err != nil {
			t.Fatal(err)
		}
		al, err := g.AnswerLosses()
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		if !(al[0] > 0) || math.IsInf(al[0], 0) {
			t.Fatalf("%s: answer loss %v", loss, al[0])
		}
		if (loss == tasks.Answers) != (l[0] == al[0]) {
			t.Errorf("%s: training loss %v, answer loss %v", loss, l[0], al[0])
		}
	}
}

// The finite training set and weight decay change what a run learns, and
// each is deterministic.
func TestTrainingSetAndWeightDecay(t *testing.T) {
	base := Defaults("induction")
	base.Steps = 40
	run := func(c Config) *Model {
		t.Helper()
		m, _, err := Run(c, cpu.New(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := weightsDigest(run(base))
	set, decay := base, base
	set.TrainExamples = 64
	decay.WeightDecay = 1
	for _, c := range []Config{set, decay} {
		a, b := weightsDigest(run(c)), weightsDigest(run(c))
		if a != b {
			t.Errorf("%+v: two runs gave %s and %s", c, a, b)
		}
		if a == plain {
			t.Errorf("%+v trained as the default does", c)
		}
	}
	// Decay shrinks the weights: the sum of squares ends smaller.
	norm := func(m *Model) (s float64) {
		for _, p := range m.Weights.Params {
			for _, v := range p.Data {
				s += float64(v) * float64(v)
			}
		}
		return s
	}
	if a, b := norm(run(base)), norm(run(decay)); !(b < a) {
		t.Errorf("weight decay 1 left a squared norm of %.1f, without it %.1f", b, a)
	}
}

func TestValidateLossOptions(t *testing.T) {
	for _, bad := range []func(*Config){
		func(c *Config) { c.Loss = "tokens" },
		func(c *Config) { c.Loss = "" },
		func(c *Config) { c.TrainExamples = -1 },
		func(c *Config) { c.TrainExamples = c.Batch - 1 },
		func(c *Config) { c.TrainExamples = tasks.MaxTrainingSet + 1 },
		func(c *Config) { c.WeightDecay = -0.1 },
		func(c *Config) { c.WeightDecay = math.NaN() },
		func(c *Config) { c.WeightDecay = 1 / c.LR },
	} {
		c := Defaults("induction")
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v validated", c)
		}
	}
	c := Defaults("induction")
	c.TrainExamples, c.WeightDecay = c.Batch, 0.1
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

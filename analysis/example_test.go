package analysis_test

import (
	"fmt"
	"log"
	"strings"

	"headlab/analysis"
)

// ExampleScoreHead scores a previous-token head built by hand: every query
// puts 0.9 of its attention on the token before it and 0.1 on itself.
func ExampleScoreHead() {
	const T = 6
	a := &analysis.Attention{
		Causal: true,
		N:      1, L: 1, H: 1, T: T,
		Tokens: []int{0, 1, 2, 3, 4, 5}, // all distinct: no induction or matching queries
		Probs:  make([]float32, T*T),
	}
	for i := 0; i < T; i++ {
		row := a.Probs[i*T : (i+1)*T] // example 0, layer 0, head 0, query i
		if i == 0 {
			row[0] = 1 // with the causal mask query 0 sees only itself
			continue
		}
		row[i-1], row[i] = 0.9, 0.1
	}
	if err := a.Validate(); err != nil {
		log.Fatal(err)
	}

	s := analysis.ScoreHead(a, 0, 0)
	fmt.Println(s.Name, s.Title())
	for _, p := range analysis.Patterns {
		fmt.Printf("%-14s %.2f\n", p, s.Scores[p])
	}
	// Output:
	// L0H0 previous-token 0.90
	// previous-token 0.90
	// induction      0.00
	// matching       0.00
	// mirror         0.30
	// attention-sink 0.18
	// offset         0.00
	// position       0.30
	// uniform        0.28
}

// ExampleReadAttention reads an attention file (the JSON that `headlab heads
// --dump-attention` writes, or any other program) and names every head.
func ExampleReadAttention() {
	// One example of five tokens, one layer of two heads: L0H0 parks on
	// position 0, L0H1 spreads evenly over what it can see.
	const file = `{
	  "causal": true,
	  "tokens": [[7, 2, 9, 4, 1]],
	  "attention": [[[
	    [[1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]],
	    [[1, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0], [0.333333, 0.333333, 0.333334, 0, 0],
	     [0.25, 0.25, 0.25, 0.25, 0], [0.2, 0.2, 0.2, 0.2, 0.2]]
	  ]]]
	}`
	a, err := analysis.ReadAttention(strings.NewReader(file))
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range analysis.ScoreAll(a) {
		fmt.Printf("%s: %s\n", s.Name, s.Title())
	}
	// Output:
	// L0H0: attention-sink 1.00
	// L0H1: uniform 1.00
}

// ExampleAttention_Validate prints the one-line error for attention that is
// not a distribution: query 1's visible cells sum to 0.8, not 1.
func ExampleAttention_Validate() {
	a := &analysis.Attention{
		Causal: true,
		N:      1, L: 1, H: 1, T: 2,
		Tokens: []int{0, 1},
		Probs:  []float32{1, 0, 0.4, 0.4},
	}
	fmt.Println(a.Validate())
	// Output:
	// attention[0][0][0] row 1: visible weights sum to 0.8, want 1 within 0.001
}

// ExamplePhaseChange finds the phase change in a recorded training history:
// the best induction score and the held-out accuracy both jump between steps
// 200 and 300, so they rise together.
func ExamplePhaseChange() {
	steps := []int{0, 100, 200, 300, 400, 500}
	induction := []float64{0.05, 0.06, 0.10, 0.85, 0.95, 0.96}
	accuracy := []float64{0.10, 0.11, 0.15, 0.90, 0.99, 0.99}
	p := analysis.PhaseChange(steps, induction, accuracy)
	fmt.Printf("induction rises over steps %d-%d by %.2f\n", p.InductionFrom, p.InductionTo, p.InductionRise)
	fmt.Printf("accuracy rises over steps %d-%d by %.2f\n", p.AccuracyFrom, p.AccuracyTo, p.AccuracyRise)
	fmt.Println("together:", p.Together)
	// Output:
	// induction rises over steps 200-300 by 0.75
	// accuracy rises over steps 200-300 by 0.75
	// together: true
}

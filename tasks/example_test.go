package tasks_test

import (
	"fmt"
	"log"
	"math/rand/v2"
	"strings"

	"headlab/tasks"
)

// ExampleNew looks a task up by its command-line name and reads its shape:
// the vocabulary, the sequence length and the chance floor.
func ExampleNew() {
	t, err := tasks.New("induction")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Name(), "vocab", t.Vocab(), "length", t.SeqLen())
	fmt.Printf("chance %.3f\n", t.Chance())
	// Output:
	// induction vocab 16 length 16
	// chance 0.143
}

// ExampleNewStream draws a batch of the training split and marks the answer
// positions: at each one the model must predict the token shown below it,
// the one that followed the same token's earlier copy.
func ExampleNewStream() {
	t, err := tasks.New("induction")
	if err != nil {
		log.Fatal(err)
	}
	b := tasks.NewStream(t, 1, tasks.Train).Next(2) // seed 1: the same batch every time
	fmt.Println("answer positions in the batch:", b.Answers())
	for n := 0; n < b.N; n++ {
		var toks, answers []string
		for i := 0; i < b.T; i++ {
			toks = append(toks, tasks.TokenLabel(b.Tokens[n*b.T+i]))
			if target := b.Targets[n*b.T+i]; target != tasks.NoTarget {
				answers = append(answers, tasks.TokenLabel(target))
			} else {
				answers = append(answers, ".")
			}
		}
		fmt.Println("tokens: ", strings.Join(toks, " "))
		fmt.Println("answers:", strings.Join(answers, " "))
	}
	// Output:
	// answer positions in the batch: 16
	// tokens:  E L I O C H D N O C H D N E L I
	// answers: . . . . . . . . C H D N O L I O
	// tokens:  F E B O N K A C O N K A C F E B
	// answers: . . . . . . . . N K A C O E B O
}

// ExampleTask_Sample writes one example of a task of any size into
// caller-owned slices, from the caller's own random source.
func ExampleTask_Sample() {
	var t tasks.Task = tasks.Repeat{N: 4, V: 6} // four tokens over six, then the same four again
	tokens := make([]int, t.SeqLen())
	targets := make([]int, t.SeqLen())
	t.Sample(rand.New(rand.NewPCG(2, 3)), tokens, targets)
	fmt.Println(tokens)
	for i, target := range targets {
		if target != tasks.NoTarget {
			fmt.Printf("position %d: predict %d\n", i, target) // the token at i+1
		}
	}
	// Output:
	// [3 0 1 5 3 0 1 5]
	// position 3: predict 3
	// position 4: predict 0
	// position 5: predict 1
	// position 6: predict 5
}

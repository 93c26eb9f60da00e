package train_test

import (
	"fmt"
	"log"

	"headlab/backend/cpu"
	"headlab/train"
)

// ExampleNewTrainer trains the default induction model for a few steps on
// the CPU device and measures its loss on the held-out set before and after.
func ExampleNewTrainer() {
	c := train.Defaults("induction")
	c.Steps, c.Batch = 50, 8 // a short demonstration; the task's plateau is c.Steps as Defaults sets it
	tr, err := train.NewTrainer(c, cpu.New())
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	eval, err := tr.Evaluator() // reads the weights on the device, so it sees every step
	if err != nil {
		log.Fatal(err)
	}
	defer eval.Close()
	held := train.HeldOut(tr.Model)

	_, before, err := eval.Accuracy(held, nil)
	if err != nil {
		log.Fatal(err)
	}
	for tr.Step < c.Steps {
		if _, err := tr.TrainStep(); err != nil {
			log.Fatal(err)
		}
	}
	_, after, err := eval.Accuracy(held, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", tr.Model.Weights.Count())
	fmt.Println("steps:", tr.Step)
	fmt.Printf("held-out loss %.1f -> %.1f\n", before, after)
	fmt.Println("loss fell:", after < before)
	// Output:
	// parameters: 18704
	// steps: 50
	// held-out loss 2.9 -> 2.8
	// loss fell: true
}

// ExampleRun trains a model start to finish and reads the report: held-out
// accuracy on train.HeldOutExamples examples beside the task's chance floor.
func ExampleRun() {
	c := train.Defaults("majority")
	c.Steps, c.Batch = 60, 16
	_, res, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", res.Params)
	fmt.Printf("chance: %.2f\n", res.Chance)
	fmt.Println("beats chance by 0.2:", res.Accuracy > res.Chance+0.2)
	// Output:
	// parameters: 17827
	// chance: 0.33
	// beats chance by 0.2: true
}

// ExampleEvaluator_Accuracy switches heads off (off[layer][head]) and
// measures what the model loses: majority needs attention to count.
func ExampleEvaluator_Accuracy() {
	c := train.Defaults("majority")
	c.Steps, c.Batch = 60, 16
	m, res, err := train.Run(c, cpu.New(), 0, nil) // res.Accuracy: every head on
	if err != nil {
		log.Fatal(err)
	}
	eval, err := train.NewEvaluator(m, cpu.New())
	if err != nil {
		log.Fatal(err)
	}
	defer eval.Close()
	held := train.HeldOut(m) // the examples res.Accuracy was measured on

	// off[layer][head]: switch every head of both layers off.
	off := [][]bool{{true, true}, {true, true}}
	ablated, _, err := eval.Accuracy(held, off)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("examples:", held.N)
	fmt.Println("every head off costs over 0.2:", ablated < res.Accuracy-0.2)
	// Output:
	// examples: 1000
	// every head off costs over 0.2: true
}

// ExampleNewGroup trains two seeds of one configuration in lockstep (one
// graph and one set of kernel launches per step for both models); each
// model trains exactly as it would alone.
func ExampleNewGroup() {
	a := train.Defaults("induction")
	a.Steps, a.Batch = 10, 8
	b := a
	b.Seed = 2 // configurations in a group may differ in seed and learning rate only
	g, err := train.NewGroup([]train.Config{a, b}, cpu.New())
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	for g.Step < a.Steps {
		if err := g.TrainStep(); err != nil {
			log.Fatal(err)
		}
	}
	losses, err := g.Losses() // the last step's batch loss of each model
	if err != nil {
		log.Fatal(err)
	}

	alone, err := train.NewTrainer(b, cpu.New())
	if err != nil {
		log.Fatal(err)
	}
	defer alone.Close()
	var last float64
	for alone.Step < b.Steps {
		if last, err = alone.TrainStep(); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("models:", len(g.Models), "steps:", g.Step)
	fmt.Println("seeds differ:", losses[0] != losses[1])
	fmt.Println("seed 2 as alone, bit for bit:", losses[1] == last)
	// Output:
	// models: 2 steps: 10
	// seeds differ: true
	// seed 2 as alone, bit for bit: true
}

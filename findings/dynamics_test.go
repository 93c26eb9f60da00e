package findings

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/tasks"
)

// TestRunDynamicsEarlyIsTheShortRun: the first rule's phase, taken from
// the first steps of the whole run's history, is the phase a run of only
// those steps records (the same seed, data and updates up to there), and
// the whole run's phase is its own.
func TestRunDynamicsEarlyIsTheShortRun(t *testing.T) {
	p := NewPlan(1, 1, 0.01, false, tasks.NextToken) // 25 steps, history every step, the first 5 for the first rule
	long, err := p.RunDynamics(1, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	if long.Seed != 1 || long.Steps != 25 || long.EarlySteps != 5 {
		t.Fatalf("seed %d, %d steps, early %d; want 1, 25, 5", long.Seed, long.Steps, long.EarlySteps)
	}
	short := p
	short.Dynamics.Steps = long.EarlySteps
	got, err := short.RunDynamics(1, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != long.Early || got.EarlySteps != long.EarlySteps || got.Early != got.Phase {
		t.Errorf("the first %d steps' phase %+v, a run of %d steps %+v (its own early %+v)", long.EarlySteps, long.Early, got.Steps, got.Phase, got.Early)
	}
	t.Logf("whole %+v, early %+v", long.Phase, long.Early)
}

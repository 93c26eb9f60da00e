package findings

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// What reproduce measures beyond the sweep's records, for the claims and
// section 6: each run's Extra, taken from its trained model, and claim
// 7's seeds, trained outside the sweep with a history; ClaimsFile keeps
// both beside the database.

// DynamicsEvery is how often, in steps, claim 7 records a history over
// the default run (scaled with the steps).
const DynamicsEvery = 5

// dynamicsEarly is the stretch, in steps before scaling, the first rule
// of claim 7 watched: the first 500 steps.
const dynamicsEarly = 500

// Extra is what reproduce measures on a trained model beyond its sweep
// record: pruning curves (claim 8), accuracy on attractor examples with
// each relation head off and with all of them off together (claim 9),
// accuracy on unseen tokens (claim 10), and for the default model's
// circuit seeds the circuit by other measures (section 6).
type Extra struct {
	Prune *inspect.PruneReport `json:"prune,omitempty"`
	// AttractorIntact is accuracy on attractor examples; Syntax lists every
	// head named after verb->subject with that accuracy when it is off;
	// SyntaxOff is that accuracy with all of them off together (the
	// intact accuracy when there are none).
	AttractorIntact *float64     `json:"attractor_intact,omitempty"`
	Syntax          []SyntaxHead `json:"syntax,omitempty"`
	SyntaxOff       *float64     `json:"syntax_off,omitempty"`
	Unseen          *float64     `json:"unseen_accuracy,omitempty"`
	// Circuit is the default model's circuit by other measures.
	Circuit *CircuitMeasures `json:"circuit,omitempty"`
}

// Complete reports whether x holds every measurement its run needs: an
// agreement run's stored before claim 9 switched its heads off together
// lacks SyntaxOff, and is measured again; an extra that holds nothing is
// not complete either.
func (x *Extra) Complete() bool {
	// Circuit measures taken before the revised label rule lack its
	// labels' joint ablations.
	if x != nil && x.Circuit != nil && x.Circuit.LabelRule < analysis.RevisedRule {
		return false
	}
	return x != nil && (x.AttractorIntact == nil || x.SyntaxOff != nil) &&
		(x.Prune != nil || x.AttractorIntact != nil || x.Unseen != nil || x.Circuit != nil)
}

// SyntaxHead is a head that beats verb->subject's baseline by the margin.
type SyntaxHead struct {
	Name         string  `json:"name"`
	Argmax       float64 `json:"argmax"`
	Baseline     float64 `json:"baseline"`
	AttractorOff float64 `json:"attractor_off"`
}

// NeedsExtra reports whether the run of c (its seed included) is
// measured beyond its record: every run of the claims' configurations
// that have extras, and the default model's circuit seeds (section 6).
func (p Plan) NeedsExtra(c train.Config) bool {
	k := sweep.Key(c)
	if k == sweep.Key(p.Induction) {
		return slices.Contains(p.CircuitSeeds, c.Seed)
	}
	for _, x := range []train.Config{p.Wide, p.Agreement, p.Unseen, p.UnseenTied} {
		if sweep.Key(x) == k {
			return true
		}
	}
	return false
}

// Measure takes the Extra of a finished run of one of p's configurations
// on dev (nil for a configuration that needs none).
func (p Plan) Measure(o *sweep.Outcome, dev kernels.Device) (*Extra, error) {
	m := o.Model
	if !p.NeedsExtra(m.Train) {
		return nil, nil
	}
	if sweep.Key(m.Train) == sweep.Key(p.Wide) {
		// Pruning evaluates the model on evaluators of its own.
		pr, err := inspect.Prune(m, dev, inspect.ScoredExamples, 5, []string{inspect.OrderOneShot, inspect.OrderGreedy, inspect.OrderRandom})
		if err != nil {
			return nil, err
		}
		return &Extra{Prune: pr}, nil
	}
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	x := &Extra{}
	switch {
	case sweep.Key(m.Train) == sweep.Key(p.Induction):
		if x.Circuit, err = measureCircuit(e, o.Report); err != nil {
			return nil, err
		}
	case tasks.HasUnseen(m.Task):
		acc, err := train.UnseenAccuracy(e, m)
		if err != nil {
			return nil, err
		}
		x.Unseen = &acc
	default:
		if err := measureSyntax(e, o.Report, x); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// measureSyntax takes claim 9's measurements of the model of e, an
// agreement model, with the relation scores of its report: accuracy on
// attractor examples intact, with each head named after verb->subject
// switched off alone, and with all of them off together.
func measureSyntax(e *train.Evaluator, rep *inspect.Report, x *Extra) error {
	m := e.Models[0]
	kt, ok := m.Task.(tasks.KindTask)
	if !ok {
		return fmt.Errorf("findings: %s has no kinds", m.Task.Name())
	}
	attr := inspect.KindBatches(kt, train.HeldOut(m))[0]
	acc, _, err := e.Accuracy(attr, nil)
	if err != nil {
		return err
	}
	x.AttractorIntact = &acc
	L, H := m.Shape.Layers, m.Shape.Heads
	all := analysis.NewMask(L, H, nil)
	for _, h := range rep.Heads {
		if len(h.Relations) == 0 || !h.Relations[0].Beats() {
			continue
		}
		a, _, err := e.Accuracy(attr, analysis.NewMask(L, H, nil).With(h.Layer, h.Head))
		if err != nil {
			return err
		}
		x.Syntax = append(x.Syntax, SyntaxHead{Name: h.Name, Argmax: h.Relations[0].Argmax, Baseline: h.Relations[0].Baseline, AttractorOff: a})
		all[h.Layer][h.Head] = true
	}
	joint := acc
	if len(x.Syntax) > 0 {
		if joint, _, err = e.Accuracy(attr, all); err != nil {
			return err
		}
	}
	x.SyntaxOff = &joint
	return nil
}

// DynamicsSeed is one seed of claim 7: where the best induction score and
// the accuracy rise, recorded every DynamicsEvery steps over the whole
// run (Phase) and over its first EarlySteps (Early, the first rule's).
type DynamicsSeed struct {
	Seed       uint64         `json:"seed"`
	Steps      int            `json:"steps"`
	Accuracy   float64        `json:"accuracy"`
	Phase      analysis.Phase `json:"phase"`
	EarlySteps int            `json:"early_steps"`
	Early      analysis.Phase `json:"early_phase"`
}

// dynamicsEvery is DynamicsEvery scaled with the steps.
func (p Plan) dynamicsEvery() int { return max(1, int(math.Round(DynamicsEvery*p.Scale))) }

// dynamicsEarly is dynamicsEarly scaled with the steps.
func (p Plan) dynamicsEarly() int { return max(1, int(math.Round(dynamicsEarly*p.Scale))) }

// RunDynamics trains p.Dynamics for seed on dev with a history. The first
// rule's phase is that of the history's first dynamicsEarly steps: a run
// of that many steps would have recorded the same (the same seed, data
// and updates up to there) when, as at scale 1, the interval divides
// dynamicsEarly; otherwise the short run's last record, at its final
// step, is missing here.
func (p Plan) RunDynamics(seed uint64, dev kernels.Device) (DynamicsSeed, error) {
	c := p.Dynamics
	c.Seed = seed
	var rec inspect.Recorder
	_, res, err := train.Run(c, dev, 0, nil, rec.Hook(p.dynamicsEvery()))
	if err != nil {
		return DynamicsSeed{}, err
	}
	early := min(p.dynamicsEarly(), c.Steps)
	h := rec.History
	k := 0
	for k < len(h) && h[k].Step <= early {
		k++
	}
	return DynamicsSeed{Seed: seed, Steps: c.Steps, Accuracy: res.Accuracy, Phase: h.Phase(), EarlySteps: early, Early: h[:k].Phase()}, nil
}

// ClaimsFile holds the claims' measurements beside the database, in
// OUT/findings/, so that --resume keeps them.
const ClaimsFile = "claims.json"

// Measured is what ClaimsFile holds: the Extras by run and the claim-7
// seeds, each taken by this reproduce or the one it resumes.
type Measured struct {
	Extras   []KeyedExtra   `json:"extras"`
	Dynamics []DynamicsSeed `json:"dynamics"`
	// DynamicsConfig is the configuration the Dynamics seeds trained, so
	// that a resume with another setting does not reuse them.
	DynamicsConfig train.Config `json:"dynamics_config"`
	// Grokking is the grokking run, with its configuration (GrokkingFor).
	Grokking *Grokking `json:"grokking,omitempty"`
}

// KeyedExtra is one run's Extra.
type KeyedExtra struct {
	Key   string `json:"config_key"`
	Seed  uint64 `json:"seed"`
	Extra *Extra `json:"extra"`
}

// NewMeasured builds the file's contents from extras and dynamics, in a
// stable order.
func NewMeasured(p Plan, extras map[sweep.RunID]*Extra, dyn []DynamicsSeed) Measured {
	m := Measured{Dynamics: dyn, DynamicsConfig: p.Dynamics}
	for id, x := range extras {
		m.Extras = append(m.Extras, KeyedExtra{Key: id.Key, Seed: id.Seed, Extra: x})
	}
	sort.Slice(m.Extras, func(i, j int) bool {
		a, b := m.Extras[i], m.Extras[j]
		return a.Key < b.Key || a.Key == b.Key && a.Seed < b.Seed
	})
	return m
}

// Map is the extras by run.
func (m Measured) Map() map[sweep.RunID]*Extra {
	out := map[sweep.RunID]*Extra{}
	for _, k := range m.Extras {
		out[sweep.RunID{Key: k.Key, Seed: k.Seed}] = k.Extra
	}
	return out
}

// DynamicsFor is the stored seeds of p's claim-7 setting, in p.SmallSet
// order, or nil unless every one of them is stored.
func (m Measured) DynamicsFor(p Plan) []DynamicsSeed {
	if m.DynamicsConfig != p.Dynamics {
		return nil
	}
	var out []DynamicsSeed
	for _, s := range p.SmallSet {
		i := slices.IndexFunc(m.Dynamics, func(d DynamicsSeed) bool { return d.Seed == s })
		if i < 0 {
			return nil
		}
		out = append(out, m.Dynamics[i])
	}
	return out
}

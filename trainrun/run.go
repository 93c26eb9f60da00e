// Package trainrun is train's run of one model: trained with progress
// on stderr and an optional history, saved as a checkpoint, its heads
// scored, and the report train prints.
package trainrun

import (
	"fmt"
	"io"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/train"
)

// Options say how to run: the configuration, on which device, where
// progress goes, and what to keep.
type Options struct {
	Config train.Config
	Device kernels.Device
	Stderr io.Writer
	// Every is the steps between progress lines; Quiet, none.
	Every int
	Quiet bool
	// RecordEvery records the history every so many steps (0: none).
	RecordEvery int
	// Save is the checkpoint's directory ("": none).
	Save string
	// Relation is the task's relation whose heads are scored.
	Relation int
}

// Run trains o's model, saves it when asked, and scores its heads: the
// model, its report (without UnseenHeads: AddUnseen) and its heads'.
func Run(o Options) (*train.Model, Report, *inspect.Report, *analysis.Attention, error) {
	c := o.Config
	var hooks []train.Hook
	var onProgress func(train.Progress)
	var finish func()
	if !o.Quiet {
		onProgress, hooks, finish = Progress(o.Stderr, c.Steps, c.Loss)
	}
	var rec inspect.Recorder
	if o.RecordEvery > 0 {
		hooks = append(hooks, rec.Hook(o.RecordEvery))
	}
	m, res, err := train.Run(c, o.Device, o.Every, onProgress, hooks...)
	if finish != nil {
		finish()
	}
	if err != nil {
		return nil, Report{}, nil, nil, err
	}
	if err := save(o, m, &res, rec.History); err != nil {
		return nil, Report{}, nil, nil, err
	}
	heads, att, err := inspect.Analyze(m, o.Device, inspect.Options{Relation: o.Relation})
	if err != nil {
		return nil, Report{}, nil, nil, err
	}
	r := Report{Config: Config{Config: c, Backend: o.Device.Name(), SIMD: simd.Path()}, Result: res, Heads: heads.Heads, ByKind: heads.ByKind, History: rec.History}
	if rec.History != nil {
		p := rec.History.Phase()
		r.Phase = &p
	}
	return m, r, heads, att, nil
}

// save writes m's checkpoint, with its history when there is one, into
// o.Save, unless that is "".
func save(o Options, m *train.Model, res *train.Result, h inspect.History) error {
	var extra []train.File
	if h != nil {
		f, err := h.File()
		if err != nil {
			return err
		}
		extra = append(extra, f)
	}
	if o.Save == "" {
		return nil
	}
	if err := train.Save(o.Save, m, res, extra...); err != nil {
		return err
	}
	fmt.Fprintf(o.Stderr, "saved checkpoint to %s\n", o.Save)
	return nil
}

// AddUnseen scores m's heads on sequences of never-trained tokens when
// its task holds such tokens back.
func (r *Report) AddUnseen(m *train.Model, dev kernels.Device) error {
	if r.UnseenAccuracy == nil {
		return nil
	}
	var err error
	r.UnseenHeads, err = inspect.UnseenScores(m, dev)
	return err
}

package findings

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"headlab/internal/atomicfile"
	"headlab/kernels"
	"headlab/sweep"
)

// ReproduceOptions is what Reproduce needs: the plan, where to write, and
// what the command supplies (the device, the sweep's runner with its
// progress and signals, the drawing), so that the workflow here makes no
// device and draws nothing itself.
type ReproduceOptions struct {
	Plan Plan
	// Out gets findings.md; the pictures, claims.json and the database go
	// in Out/findings.
	Out string
	// Resume keeps the runs and extra measurements of an earlier
	// reproduce instead of starting over.
	Resume, Quiet bool
	Stderr        io.Writer
	// Device is the device the command opened: the runs trained again,
	// the dynamics, the grokking run and the claims' extra measurements
	// all compute on it.
	Device kernels.Device
	// Workers and Sharing are the sweep's layout: runs in flight, and how
	// many share Device at once.
	Workers, Sharing int
	Version          string
	// Platform describes a device for the records.
	Platform func(kernels.Device) sweep.Platform
	// Sweep runs pairs into st, calling keep on each finished run.
	Sweep func(st *sweep.Store, pairs []sweep.Pair, keep func(*sweep.Outcome)) (sweep.Summary, error)
	// Each runs do(0) ... do(n-1) on Device, Sharing at once, showing
	// progress counted in unit and described by note.
	Each func(n int, unit, note string, do func(i int, d kernels.Device) error) error
	Draw Drawing
}

// Drawing draws the report's pictures; each writes path (or, for
// Histograms, the files sweep.HistogramFile names in dir).
type Drawing struct {
	Heads      func(path string, o *sweep.Outcome) error
	Grokking   func(path string, g *Grokking) error
	Histograms func(dir string, reports []sweep.ConfigReport) error
	Atlas      func(path string, atlas []sweep.ConfigAtlas) error
}

// ReproduceResult says what Reproduce did: the sweep's summary (which
// may be Interrupted: then nothing after the sweep was done) and the
// files it wrote.
type ReproduceResult struct {
	Summary    sweep.Summary
	DB, Report string
	Pictures   string
}

// ClaimsFileError is a claims.json that a resumed reproduce cannot read.
type ClaimsFileError struct {
	Path string
	Err  error
}

func (e *ClaimsFileError) Error() string {
	return fmt.Sprintf("%s: %v (remove it to measure the claims again)", e.Path, strings.ReplaceAll(e.Err.Error(), "\n", " "))
}

// ReproduceAnalysis is what the runs of p measure: everything, the
// signature on the atlas's configurations alone.
func ReproduceAnalysis(p Plan) sweep.Analysis {
	return sweep.Analysis{Measure: sweep.AllMeasures(), Signed: p.Signed()}
}

// Reproduce runs p's sweep into Out/findings/findings.db, takes the
// claims' extra measurements, trains again what a resumed database
// lacks, and writes Out/findings.md with its pictures.
func Reproduce(o ReproduceOptions) (ReproduceResult, error) {
	p := o.Plan
	pairs := p.Pairs()
	pics := filepath.Join(o.Out, "findings")
	res := ReproduceResult{DB: filepath.Join(pics, "findings.db"), Report: filepath.Join(o.Out, "findings.md"), Pictures: pics}
	claimsPath := filepath.Join(pics, ClaimsFile)
	if err := os.MkdirAll(pics, 0o755); err != nil {
		return res, err
	}
	dbPath := res.DB
	if !o.Resume {
		// Start over: every number in the report comes from this run.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return res, err
			}
		}
		old, _ := filepath.Glob(filepath.Join(pics, "hist-*.png"))
		for _, f := range append(old, filepath.Join(pics, HeatmapFile), filepath.Join(pics, GrokkingFile), claimsPath) {
			os.Remove(f)
		}
	}
	var stored Measured
	if o.Resume {
		data, err := os.ReadFile(claimsPath)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return res, err
		default:
			if err := json.Unmarshal(data, &stored); err != nil {
				return res, &ClaimsFileError{Path: claimsPath, Err: err}
			}
		}
	}
	st, err := sweep.Create(dbPath)
	if err != nil {
		return res, err
	}
	defer st.Close()
	seed1 := sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}
	heatmap := filepath.Join(pics, HeatmapFile)
	// The claims' extra measurements, taken on the models as they finish,
	// on the command's device. Each is written to claims.json as soon as
	// it is taken, so that an interrupted reproduce keeps it.
	extras := stored.Map()
	for id := range extras {
		if !slices.ContainsFunc(pairs, func(pr sweep.Pair) bool { return pr.Key == id.Key && pr.Config.Seed == id.Seed }) {
			delete(extras, id) // an earlier plan's
		}
	}
	var dyn []DynamicsSeed
	grok := stored.GrokkingFor(p)
	var extraErr error
	var mu sync.Mutex
	save := func() error {
		m := NewMeasured(p, extras, dyn)
		m.Grokking = grok
		data, err := json.MarshalIndent(m, "", " ")
		if err != nil {
			return err
		}
		return atomicfile.Write(claimsPath, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err })
	}
	measure := func(out *sweep.Outcome) {
		x, err := p.Measure(out, o.Device)
		mu.Lock()
		defer mu.Unlock()
		if err == nil && x != nil {
			extras[out.Record.ID()] = x
			err = save()
		}
		extraErr = cmp.Or(extraErr, err)
	}
	keep := func(out *sweep.Outcome) {
		if out.Record.ID() == seed1 {
			if err := o.Draw.Heads(heatmap, out); err != nil {
				fmt.Fprintf(o.Stderr, "reproduce: %v\n", err)
			}
		}
		measure(out)
	}
	fmt.Fprintf(o.Stderr, "reproduce: %d runs into %s\n", len(pairs), dbPath)
	start := time.Now()
	sum, err := o.Sweep(st, pairs, keep)
	res.Summary = sum
	if err != nil || sum.Interrupted {
		return res, err
	}
	wall := time.Since(start)
	all, err := st.Records()
	if err != nil {
		return res, err
	}
	// The report is of this plan's runs: a resumed database may hold
	// others (an earlier plan's), which stay there but count nowhere.
	inPlan := map[sweep.RunID]bool{}
	for _, pr := range pairs {
		inPlan[sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}] = true
	}
	var recs []sweep.Record
	for _, r := range all {
		if inPlan[r.ID()] {
			recs = append(recs, r)
		}
	}
	byID := map[sweep.RunID]*sweep.Record{}
	for i := range recs {
		byID[recs[i].ID()] = &recs[i]
	}
	// A resumed run may hold seed 1 from before: train it again for its
	// pictures, which also checks that the stored numbers reproduce.
	var notes []string
	if _, err := os.Stat(heatmap); err != nil && byID[seed1] != nil && byID[seed1].Status == sweep.StatusOK {
		p1 := sweep.Pair{Key: seed1.Key, Config: byID[seed1].Config}
		again, err := sweep.RunOne(p1, o.Platform(o.Device), sweep.AnalysisOf(byID[seed1]), nil)
		if err != nil {
			return res, err
		}
		if f, a, b := sweep.Differ(byID[seed1], &again.Record); f != "" {
			notes = append(notes, fmt.Sprintf("Retraining seed 1 for its pictures gave a different %s (%s, stored %s): the stored runs may come from another build.", f, b, a))
		}
		if err := o.Draw.Heads(heatmap, again); err != nil {
			return res, err
		}
	}
	// Runs carried over by --resume have no extra measurements, or lack
	// some: train them again and measure them.
	var redo []sweep.Pair
	for _, pr := range pairs {
		id := sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}
		if r := byID[id]; r != nil && r.Status == sweep.StatusOK && p.NeedsExtra(pr.Config) && !extras[id].Complete() {
			redo = append(redo, pr)
		}
	}
	if len(redo) > 0 && !o.Quiet {
		fmt.Fprintf(o.Stderr, "reproduce: %d runs carried over lack their extra measurements; training them again\n", len(redo))
	}
	err = o.Each(len(redo), "runs", "again for their extra measurements", func(i int, d kernels.Device) error {
		again, err := sweep.RunOne(redo[i], o.Platform(d), sweep.Analysis{}, nil)
		if err == nil {
			measure(again)
		}
		return err
	})
	if err != nil {
		return res, err
	}
	if extraErr != nil {
		return res, extraErr
	}
	if dyn = stored.DynamicsFor(p); dyn == nil {
		if !o.Quiet {
			fmt.Fprintf(o.Stderr, "reproduce: %d seeds of %d steps with a history for the phase change\n", len(p.SmallSet), p.Dynamics.Steps)
		}
		dyn = make([]DynamicsSeed, len(p.SmallSet))
		err := o.Each(len(p.SmallSet), "seeds", "histories for the phase change", func(i int, d kernels.Device) (err error) {
			dyn[i], err = p.RunDynamics(p.SmallSet[i], d)
			return err
		})
		if err != nil {
			return res, err
		}
		if err := save(); err != nil {
			return res, err
		}
	}
	if grok == nil {
		if !o.Quiet {
			fmt.Fprintf(o.Stderr, "reproduce: the grokking run, %d steps of modular addition with a history\n", p.Grokking.Steps)
		}
		if grok, err = p.RunGrokking(o.Device); err != nil {
			return res, err
		}
		if err := save(); err != nil {
			return res, err
		}
	}
	// Its curves, from the history kept in claims.json (a resumed run's
	// too).
	if err := o.Draw.Grokking(filepath.Join(pics, GrokkingFile), grok); err != nil {
		return res, err
	}
	reports := sweep.Summarize(p.Reported(recs))
	if err := o.Draw.Histograms(pics, reports); err != nil {
		return res, err
	}
	// A resumed folder may hold an earlier plan's histograms: the folder
	// holds this report's pictures alone.
	kept := map[string]bool{}
	for i := range reports {
		kept[sweep.HistogramFile(pics, ".png", &reports[i])] = true
	}
	old, _ := filepath.Glob(filepath.Join(pics, "hist-*.png"))
	for _, f := range old {
		if !kept[f] {
			if err := os.Remove(f); err != nil {
				return res, err
			}
		}
	}
	in := Input{Plan: p, Reports: reports, ByID: byID, Summary: sum, Wall: wall,
		Workers: o.Workers, Out: o.Out, Notes: notes, Version: o.Version, Extras: extras, Dynamics: dyn, Grokking: grok}
	if err := writeAtlas(filepath.Join(pics, AtlasFile), &in, o.Draw.Atlas); err != nil {
		return res, err
	}
	var md strings.Builder
	Markdown(&md, in)
	if err := atomicfile.Write(res.Report, func(w io.Writer) error { _, err := io.WriteString(w, md.String()); return err }); err != nil {
		return res, err
	}
	fmt.Fprintf(o.Stderr, "reproduce: wrote %s and its pictures in %s\n", res.Report, pics)
	return res, nil
}

// writeAtlas draws the atlas of in's plan into path, or removes an older
// one when there is none to draw.
func writeAtlas(path string, in *Input, draw func(string, []sweep.ConfigAtlas) error) error {
	atlas, err := sweep.Atlas(in.AtlasRecords())
	if err != nil {
		return err
	}
	if len(atlas) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return draw(path, atlas)
}

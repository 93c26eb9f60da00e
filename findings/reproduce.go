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
	pics := filepath.Join(o.Out, "findings")
	r := &reproduction{o: o, p: p, pairs: p.Pairs(), pics: pics, claimsPath: filepath.Join(pics, ClaimsFile),
		heatmap: filepath.Join(pics, HeatmapFile), seed1: sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}}
	r.res = ReproduceResult{DB: filepath.Join(pics, "findings.db"), Report: filepath.Join(o.Out, "findings.md"), Pictures: pics}
	stored, err := r.prepare()
	if err != nil {
		return r.res, err
	}
	st, err := sweep.Create(r.res.DB)
	if err != nil {
		return r.res, err
	}
	defer st.Close()
	r.keepExtras(stored)
	fmt.Fprintf(o.Stderr, "reproduce: %d runs into %s\n", len(r.pairs), r.res.DB)
	start := time.Now()
	sum, err := o.Sweep(st, r.pairs, r.keep)
	r.res.Summary = sum
	if err != nil || sum.Interrupted {
		return r.res, err
	}
	wall := time.Since(start)
	recs, byID, err := r.planRecords(st)
	if err != nil {
		return r.res, err
	}
	notes, err := r.retrainSeed1(byID)
	if err != nil {
		return r.res, err
	}
	if err := r.completeExtras(byID); err != nil {
		return r.res, err
	}
	if err := r.dynamicsAndGrokking(stored); err != nil {
		return r.res, err
	}
	in := Input{Plan: p, ByID: byID, Summary: sum, Wall: wall,
		Workers: o.Workers, Out: o.Out, Notes: notes, Version: o.Version, Extras: r.extras, Dynamics: r.dyn, Grokking: r.grok}
	if err := r.write(&in, recs); err != nil {
		return r.res, err
	}
	fmt.Fprintf(o.Stderr, "reproduce: wrote %s and its pictures in %s\n", r.res.Report, pics)
	return r.res, nil
}

// reproduction is one Reproduce under way: its paths, and the claims'
// extra measurements as they are taken.
type reproduction struct {
	o                         ReproduceOptions
	p                         Plan
	pairs                     []sweep.Pair
	res                       ReproduceResult
	pics, claimsPath, heatmap string
	seed1                     sweep.RunID

	mu       sync.Mutex // guards extras, dyn, grok and extraErr while runs finish
	extras   map[sweep.RunID]*Extra
	dyn      []DynamicsSeed
	grok     *Grokking
	extraErr error
}

// prepare makes the pictures' folder and, starting over, removes what an
// earlier reproduce left there; resuming, it reads the measurements
// claims.json kept.
func (r *reproduction) prepare() (Measured, error) {
	var stored Measured
	if err := os.MkdirAll(r.pics, 0o755); err != nil {
		return stored, err
	}
	if !r.o.Resume {
		// Start over: every number in the report comes from this run.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(r.res.DB + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return stored, err
			}
		}
		old, _ := filepath.Glob(filepath.Join(r.pics, "hist-*.png"))
		for _, f := range append(old, r.heatmap, filepath.Join(r.pics, GrokkingFile), r.claimsPath) {
			os.Remove(f)
		}
		return stored, nil
	}
	data, err := os.ReadFile(r.claimsPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return stored, err
	default:
		if err := json.Unmarshal(data, &stored); err != nil {
			return stored, &ClaimsFileError{Path: r.claimsPath, Err: err}
		}
	}
	return stored, nil
}

// keepExtras starts the claims' extra measurements from those stored
// that this plan's runs still have.
func (r *reproduction) keepExtras(stored Measured) {
	r.extras = stored.Map()
	for id := range r.extras {
		if !slices.ContainsFunc(r.pairs, func(pr sweep.Pair) bool { return pr.Key == id.Key && pr.Config.Seed == id.Seed }) {
			delete(r.extras, id) // an earlier plan's
		}
	}
	r.grok = stored.GrokkingFor(r.p)
}

// save writes every measurement taken so far to claims.json, so that an
// interrupted reproduce keeps it.
func (r *reproduction) save() error {
	m := NewMeasured(r.p, r.extras, r.dyn)
	m.Grokking = r.grok
	data, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Write(r.claimsPath, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err })
}

// measure takes a finished run's extra measurements on the command's
// device, as the models finish.
func (r *reproduction) measure(out *sweep.Outcome) {
	x, err := r.p.Measure(out, r.o.Device)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && x != nil {
		r.extras[out.Record.ID()] = x
		err = r.save()
	}
	r.extraErr = cmp.Or(r.extraErr, err)
}

// keep is the sweep's Keep: seed 1's heatmap, and every run's extras.
func (r *reproduction) keep(out *sweep.Outcome) {
	if out.Record.ID() == r.seed1 {
		if err := r.o.Draw.Heads(r.heatmap, out); err != nil {
			fmt.Fprintf(r.o.Stderr, "reproduce: %v\n", err)
		}
	}
	r.measure(out)
}

// planRecords reads the stored runs of this plan: a resumed database may
// hold others (an earlier plan's), which stay there but count nowhere.
func (r *reproduction) planRecords(st *sweep.Store) ([]sweep.Record, map[sweep.RunID]*sweep.Record, error) {
	all, err := st.Records()
	if err != nil {
		return nil, nil, err
	}
	inPlan := map[sweep.RunID]bool{}
	for _, pr := range r.pairs {
		inPlan[sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}] = true
	}
	var recs []sweep.Record
	for _, rec := range all {
		if inPlan[rec.ID()] {
			recs = append(recs, rec)
		}
	}
	byID := map[sweep.RunID]*sweep.Record{}
	for i := range recs {
		byID[recs[i].ID()] = &recs[i]
	}
	return recs, byID, nil
}

// retrainSeed1 trains seed 1 again when a resumed run holds it from
// before without its pictures, which also checks that the stored numbers
// reproduce; it returns the report's note when they do not.
func (r *reproduction) retrainSeed1(byID map[sweep.RunID]*sweep.Record) ([]string, error) {
	rec := byID[r.seed1]
	if _, err := os.Stat(r.heatmap); err == nil || rec == nil || rec.Status != sweep.StatusOK {
		return nil, nil
	}
	var notes []string
	again, err := sweep.RunOne(sweep.Pair{Key: r.seed1.Key, Config: rec.Config}, r.o.Platform(r.o.Device), sweep.AnalysisOf(rec), nil)
	if err != nil {
		return nil, err
	}
	if f, a, b := sweep.Differ(rec, &again.Record); f != "" {
		notes = append(notes, fmt.Sprintf("Retraining seed 1 for its pictures gave a different %s (%s, stored %s): the stored runs may come from another build.", f, b, a))
	}
	return notes, r.o.Draw.Heads(r.heatmap, again)
}

// completeExtras trains again the runs carried over by --resume that
// have no extra measurements, or lack some, and measures them.
func (r *reproduction) completeExtras(byID map[sweep.RunID]*sweep.Record) error {
	var redo []sweep.Pair
	for _, pr := range r.pairs {
		id := sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}
		if rec := byID[id]; rec != nil && rec.Status == sweep.StatusOK && r.p.NeedsExtra(pr.Config) && !r.extras[id].Complete() {
			redo = append(redo, pr)
		}
	}
	if len(redo) > 0 && !r.o.Quiet {
		fmt.Fprintf(r.o.Stderr, "reproduce: %d runs carried over lack their extra measurements; training them again\n", len(redo))
	}
	err := r.o.Each(len(redo), "runs", "again for their extra measurements", func(i int, d kernels.Device) error {
		again, err := sweep.RunOne(redo[i], r.o.Platform(d), sweep.Analysis{}, nil)
		if err == nil {
			r.measure(again)
		}
		return err
	})
	if err != nil {
		return err
	}
	return r.extraErr
}

// dynamicsAndGrokking runs the phase change's histories and the grokking
// run unless claims.json holds them for this plan, saving each.
func (r *reproduction) dynamicsAndGrokking(stored Measured) error {
	p, o := r.p, r.o
	if r.dyn = stored.DynamicsFor(p); r.dyn == nil {
		if !o.Quiet {
			fmt.Fprintf(o.Stderr, "reproduce: %d seeds of %d steps with a history for the phase change\n", len(p.SmallSet), p.Dynamics.Steps)
		}
		dyn := make([]DynamicsSeed, len(p.SmallSet))
		err := o.Each(len(p.SmallSet), "seeds", "histories for the phase change", func(i int, d kernels.Device) (err error) {
			dyn[i], err = p.RunDynamics(p.SmallSet[i], d)
			return err
		})
		r.dyn = dyn
		if err != nil {
			return err
		}
		if err := r.save(); err != nil {
			return err
		}
	}
	if r.grok != nil {
		return nil
	}
	if !o.Quiet {
		fmt.Fprintf(o.Stderr, "reproduce: the grokking run, %d steps of modular addition with a history\n", p.Grokking.Steps)
	}
	var err error
	if r.grok, err = p.RunGrokking(o.Device); err != nil {
		return err
	}
	return r.save()
}

// write draws the pictures (the grokking curves from the history kept in
// claims.json, a resumed run's too; the histograms; the atlas) and
// writes findings.md.
func (r *reproduction) write(in *Input, recs []sweep.Record) error {
	if err := r.o.Draw.Grokking(filepath.Join(r.pics, GrokkingFile), r.grok); err != nil {
		return err
	}
	in.Reports = sweep.Summarize(r.p.Reported(recs))
	if err := r.o.Draw.Histograms(r.pics, in.Reports); err != nil {
		return err
	}
	// A resumed folder may hold an earlier plan's histograms: the folder
	// holds this report's pictures alone.
	kept := map[string]bool{}
	for i := range in.Reports {
		kept[sweep.HistogramFile(r.pics, ".png", &in.Reports[i])] = true
	}
	old, _ := filepath.Glob(filepath.Join(r.pics, "hist-*.png"))
	for _, f := range old {
		if !kept[f] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if err := writeAtlas(filepath.Join(r.pics, AtlasFile), in, r.o.Draw.Atlas); err != nil {
		return err
	}
	var md strings.Builder
	Markdown(&md, *in)
	return atomicfile.Write(r.res.Report, func(w io.Writer) error { _, err := io.WriteString(w, md.String()); return err })
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

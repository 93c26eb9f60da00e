package sweep

import (
	"fmt"
	"io"

	"headlab/internal/interrupt"
	"headlab/internal/preflight"
	"headlab/kernels"
)

// DB is a sweep into a database file, once its device is open: the
// sweep command's work.
type DB struct {
	// Path is the database, created if missing (Create).
	Path  string
	Pairs []Pair
	// Shard is the shard Pairs are of (All without one), SweepID the
	// sweep every pair belongs to (Plan's).
	Shard   Shard
	SweepID int32
	// Ask is the workers and group size asked for (LayOut).
	Ask         Ask
	Analysis    Analysis
	RetryFailed bool
	// Progress shows a progress bar on Stderr.
	Progress bool
	// Device is the device the layout is made on; NewPlatform gives each
	// worker its own (Platforms).
	Device      kernels.Device
	NewPlatform func() (Platform, error)
	Stderr      io.Writer
}

// InterruptedError is a sweep stopped by a signal before every pair ran.
type InterruptedError struct {
	Summary Summary
	Path    string // the database
}

func (e *InterruptedError) Error() string {
	s := e.Summary
	return fmt.Sprintf("interrupted: %d of %d pairs are in %s (%d abandoned in flight); rerun the same command to finish",
		s.Skipped+s.Done, s.Total, e.Path, s.Abandoned)
}

// RunDB lays d's pairs out on its device (LayOut), runs them into its
// database with progress and notes on Stderr, stopping cleanly on a
// signal (RunInterruptible), and ends with the summary line. A file
// Create refuses is a preflight.Refusal; a sweep a signal stopped
// returns *InterruptedError once its runs are stored.
func RunDB(d DB) error {
	lay, err := LayOut(d.Stderr, d.Device, d.Pairs, d.Ask, d.Analysis.Probed())
	if err != nil {
		return err
	}
	st, err := Create(d.Path)
	if err != nil {
		return preflight.Refuse(err)
	}
	sum, err := d.run(st, lay)
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	sum.Write(d.Stderr, d.Shard, d.Path)
	if sum.Interrupted {
		return &InterruptedError{Summary: sum, Path: d.Path}
	}
	return nil
}

// run marks st's shard, notes what it holds unlike d, and runs d's pairs
// into it as lay says.
func (d DB) run(st *Store, lay Layout) (Summary, error) {
	if err := st.MarkShard(d.Shard, d.SweepID); err != nil {
		return Summary{}, err
	}
	if err := st.NoteMixed(d.Stderr, d.Device.Name(), d.Analysis); err != nil {
		return Summary{}, err
	}
	return RunInterruptible(d.Stderr, st, d.Pairs, Options{Workers: lay.Workers, Group: lay.Group, RetryFailed: d.RetryFailed,
		Analysis: d.Analysis, NewPlatform: d.NewPlatform}, d.Progress)
}

// RunInterruptible is RunShown stopping cleanly on SIGINT or SIGTERM:
// the first stops new runs, the second abandons those in flight
// (interrupt.Twice, overriding opt.Abort).
func RunInterruptible(stderr io.Writer, st *Store, pairs []Pair, opt Options, bar bool) (Summary, error) {
	ctx, abort, stop := interrupt.Twice(stderr, "sweep", "starting no new runs, finishing the runs in flight (again to abandon them)", "abandoning the runs in flight")
	defer stop()
	opt.Abort = abort
	return RunShown(ctx, stderr, st, pairs, opt, bar)
}

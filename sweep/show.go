package sweep

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"headlab/inspect"
	"headlab/internal/progress"
)

// RunShown is Run with its notes on stderr and, with bar, a progress bar
// there: the counts, failures and runs in flight, and in a log the run
// that just landed.
func RunShown(ctx context.Context, stderr io.Writer, st *Store, pairs []Pair, opt Options, bar bool) (Summary, error) {
	pb := progress.New(stderr, "sweep", "runs", len(pairs))
	opt.Note = func(n string) { fmt.Fprintf(stderr, "sweep: %s: %s\n", st.Path(), n) }
	if bar {
		opt.Progress = func(p Progress) {
			if p.Last == nil {
				pb.Resume(p.Skipped)
			}
			pb.Update(p.Skipped+p.Done, p.note(pb.OnTerminal()))
		}
	}
	sum, err := Run(ctx, st, pairs, opt)
	if bar {
		pb.Finish()
	}
	return sum, err
}

// note is what the progress line says beside the counts: failures and
// runs in flight, and in a log (not tty) the run that just landed.
func (p Progress) note(tty bool) string {
	note := fmt.Sprintf("%d failed, %d running", p.Failed, p.Running)
	if p.Elsewhere > 0 {
		note += fmt.Sprintf(", %d in another process", p.Elsewhere)
	}
	if p.Last == nil {
		return note + fmt.Sprintf(", %d already in the database", p.Skipped)
	}
	if tty {
		return note
	}
	r := p.Last
	what := fmt.Sprintf("accuracy %.1f%%", 100*r.Accuracy)
	if r.Status != StatusOK {
		what = "FAILED: " + r.Error
	}
	return note + fmt.Sprintf(" · seed %d %s: %s in %.1f s", r.Config.Seed, r.Key, what, r.Seconds)
}

// NoteMixed says in a line on stderr when st holds runs made on another
// backend than backend, or by another ablation method than a's.
func (s *Store) NoteMixed(stderr io.Writer, backend string, a Analysis) error {
	err := noteOthers(stderr, s.Backends, backend, func(held []string) string {
		return fmt.Sprintf("sweep: %s holds runs made on %s; these run on %s (backends agree as distributions over seeds, not bit for bit)",
			s.Path(), strings.Join(held, ", "), backend)
	})
	if err != nil {
		return err
	}
	method := string(cmp.Or(a.Ablation, inspect.AblateZero))
	return noteOthers(stderr, s.AblationMethods, method, func(held []string) string {
		return fmt.Sprintf("sweep: %s holds runs whose ablation table and circuit verdict are by %s ablation; these run by %s (each record says which, and report names both)",
			s.Path(), strings.Join(held, " and "), method)
	})
}

// noteOthers writes the line line(held) when the values a store holds
// (list: its backends, its ablation methods) name one besides this, the
// one of the runs to come.
func noteOthers(stderr io.Writer, list func() ([]string, error), this string, line func(held []string) string) error {
	held, err := list()
	if err != nil {
		return err
	}
	for _, v := range held {
		if v != this {
			fmt.Fprintln(stderr, line(held))
			break
		}
	}
	return nil
}

// MeasureNames lists the measurements --measure names.
func MeasureNames() string {
	var names []string
	for _, m := range Measures {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// Write writes the line that ends a sweep of shard s into db.
func (sum Summary) Write(w io.Writer, s Shard, db string) {
	in := ""
	if s != All {
		in = " in shard " + s.String()
	}
	fmt.Fprintf(w, "sweep: %d pairs%s: %d already in %s, %d run now (%d failed)\n", sum.Total, in, sum.Skipped, db, sum.Done, sum.Failed)
}

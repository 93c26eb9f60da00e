package sweep

import (
	"fmt"
	"io"
	"strings"

	"headlab/internal/preflight"
)

// DBReport is what report --json prints: a database's configurations
// summarised and, against another, how the two agree.
type DBReport struct {
	Database string         `json:"database"`
	Runs     int            `json:"runs"`
	Configs  []ConfigReport `json:"configs"`
	// Against and Agreement: with --against, the other database and how
	// the two agree as distributions over seeds.
	Against   string      `json:"against,omitempty"`
	Agreement []Agreement `json:"agreement,omitempty"`
}

// ReportDB reads the database at path (and against, unless ""),
// summarises it and compares the two, writing CSV files into csvDir
// unless that is ""; notes go to stderr. A database that cannot be
// opened is refused (preflight.Refusal).
func ReportDB(stderr io.Writer, path, against, csvDir string) (DBReport, error) {
	recs, err := ReadDB(stderr, path, csvDir)
	if err != nil {
		return DBReport{}, err
	}
	if csvDir != "" {
		fmt.Fprintf(stderr, "report: %s in %s\n", strings.Join(CSVFiles, " and "), csvDir)
	}
	rep := DBReport{Database: path, Runs: len(recs), Against: against}
	if against != "" {
		other, err := ReadDB(stderr, against, "")
		if err != nil {
			return rep, err
		}
		rep.Agreement = Agree(recs, other)
	}
	rep.Configs = Summarize(recs)
	return rep, nil
}

// Write writes the report as text.
func (r *DBReport) Write(w io.Writer) {
	fmt.Fprintf(w, "%s: %d runs, %d configurations\n\n", r.Database, r.Runs, len(r.Configs))
	WriteText(w, r.Configs)
	if r.Against != "" {
		fmt.Fprintln(w)
		WriteAgreement(w, r.Database, r.Against, r.Agreement)
	}
}

// Disagreement is the error of a comparison that fails: a configuration
// on which the two databases differ, or no pair they share; nil when
// they agree or there was none.
func (r *DBReport) Disagreement() error {
	for _, g := range r.Agreement {
		if !g.Agree {
			return fmt.Errorf("%s and %s differ on %s", r.Database, r.Against, g.Key)
		}
	}
	if r.Against != "" && len(r.Agreement) == 0 {
		return fmt.Errorf("%s and %s share no finished pair", r.Database, r.Against)
	}
	return nil
}

// ReadDB reads every run of the sweep database at path, read-only, and
// writes its CSV files into csvDir unless that is "". A database that
// cannot be opened is refused (preflight.Refusal).
func ReadDB(stderr io.Writer, path, csvDir string) ([]Record, error) {
	st, err := OpenExisting(path)
	if err != nil {
		return nil, preflight.Refuse(err)
	}
	defer st.Close()
	recs, err := st.Records()
	if err != nil {
		return nil, err
	}
	if n := st.Note(); n != "" {
		fmt.Fprintf(stderr, "report: %s\n", n)
	}
	if v := st.Version(); v < 5 {
		fmt.Fprintf(stderr, "report: %s is of schema version %d, before version 5's measurements: its runs have no mean or resample ablation, direct logit attribution, circuit scores or lens layer (empty in heads.csv, absent from runs.csv), and their ablations are by zero\n", path, v)
	}
	if csvDir != "" {
		if err := st.WriteCSV(csvDir); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// AtlasDB reads the database at path, read-only, and groups its runs
// (only those of the configuration key, unless key is "") into
// mechanisms (Atlas). A database that cannot be opened, has no run of
// key, or holds no signature is refused (preflight.Refusal).
func AtlasDB(path, key string) ([]ConfigAtlas, error) {
	st, err := OpenExisting(path)
	if err != nil {
		return nil, preflight.Refuse(err)
	}
	recs, err := st.Records()
	st.Close()
	if err != nil {
		return nil, err
	}
	if key != "" {
		var mine []Record
		for _, r := range recs {
			if r.Key == key {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			return nil, preflight.Refusef("--config %q: no run of %s has that key", key, path)
		}
		recs = mine
	}
	atlas, err := Atlas(recs)
	if err == nil && len(atlas) == 0 {
		err = preflight.Refusef("%s holds no circuit signature (swept before schema version 7, or with --measure leaving signature out): sweep with --measure signature to take them", path)
	}
	return atlas, err
}

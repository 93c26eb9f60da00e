package sweep

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"headlab/analysis"
	"headlab/tasks"
	"headlab/train"
)

// ConfigReport summarises the runs of one configuration over its seeds.
type ConfigReport struct {
	Key string `json:"config_key"`
	// Config is the configuration with Seed 0.
	Config train.Config `json:"config"`
	// Seeds counts the runs that finished ok; every statistic is over
	// them. Failed lists the others.
	Seeds  int       `json:"seeds"`
	Failed []Failure `json:"failed"`
	Chance float64   `json:"chance"`
	// Leakage is how many held-out sequences of a task read from a
	// folder also occur in its training file, when the folder can be
	// read (tasks.Data.Leakage).
	Leakage *int `json:"leakage,omitempty"`
	// Accuracy is held-out accuracy over seeds; Values has every seed's.
	Accuracy  Stats       `json:"accuracy"`
	Values    []SeedValue `json:"values"`
	Histogram []Bin       `json:"histogram"`
	Modes     Modes       `json:"modes"`
	// Circuit is the fraction of seeds that formed the induction circuit.
	Circuit Proportion `json:"circuit"`
	// Ablations sets single-head and joint ablations side by side, per
	// seed; AblationMethods are the methods they switched heads off by
	// (zero, mean, resample: Record.AblationMethod), each once.
	Ablations       []SeedAblation `json:"ablations"`
	AblationMethods []string       `json:"ablation_methods"`
	// Measures summarises the measurements beyond the ablation table
	// (Analysis) over the runs that took them.
	Measures MeasureSummary `json:"measures"`
	// Seconds is the wall time per run (training and analysis).
	Seconds Stats `json:"seconds"`
}

// Failure is a failed run.
type Failure struct {
	Seed  uint64 `json:"seed"`
	Error string `json:"error"`
}

// SeedValue is one seed's value.
type SeedValue struct {
	Seed  uint64  `json:"seed"`
	Value float64 `json:"value"`
}

// Proportion is k of n with its 95% Wilson interval.
type Proportion struct {
	Count    int     `json:"count"`
	Of       int     `json:"of"`
	Fraction float64 `json:"fraction"`
	Low      float64 `json:"wilson_low"`
	High     float64 `json:"wilson_high"`
}

// NewProportion computes k of n and its Wilson interval.
func NewProportion(k, n int) Proportion {
	p := Proportion{Count: k, Of: n}
	if n > 0 {
		p.Fraction = float64(k) / float64(n)
	}
	p.Low, p.High = Wilson(k, n)
	return p
}

// SeedAblation is one seed's ablations of the two circuit halves: the
// lowest accuracy with any single head of the label off, and the accuracy
// with all of them off together. Nil when the run has no head of that label.
type SeedAblation struct {
	Seed            uint64   `json:"seed"`
	Accuracy        float64  `json:"accuracy"`
	Labels          []string `json:"labels"`
	InductionHeads  []string `json:"induction_heads"`
	InductionSingle *float64 `json:"induction_single"`
	InductionJoint  *float64 `json:"induction_joint"`
	PrevHeads       []string `json:"prev_token_heads"`
	PrevSingle      *float64 `json:"prev_token_single"`
	PrevJoint       *float64 `json:"prev_token_joint"`
	Circuit         bool     `json:"circuit"`
	// Method is how the ablations switched heads off.
	Method string `json:"ablation_method"`
}

// Summarize groups records by configuration, in the order of the records
// (Store.Records orders them by key and seed), and computes each group's
// statistics. The circuit verdict is recomputed from the stored heads and
// ablations with Record.FormsCircuit.
func Summarize(recs []Record) []ConfigReport {
	var out []ConfigReport
	index := map[string]int{}
	var accs, secs [][]float64
	for _, r := range recs {
		i, ok := index[r.Key]
		if !ok {
			i = len(out)
			index[r.Key] = i
			c := r.Config
			c.Seed = 0
			out = append(out, ConfigReport{Key: r.Key, Config: c, Failed: []Failure{}, Values: []SeedValue{}, Ablations: []SeedAblation{}, AblationMethods: []string{}})
			if t, err := c.NewTask(); err == nil {
				if d, ok := t.(*tasks.Data); ok {
					n := d.Leakage()
					out[len(out)-1].Leakage = &n
				}
			}
			accs, secs = append(accs, nil), append(secs, nil)
		}
		cr := &out[i]
		if r.Status != StatusOK {
			cr.Failed = append(cr.Failed, Failure{r.Config.Seed, r.Error})
			continue
		}
		cr.Seeds++
		cr.Chance = r.Chance
		accs[i] = append(accs[i], r.Accuracy)
		secs[i] = append(secs[i], r.Seconds)
		cr.Values = append(cr.Values, SeedValue{r.Config.Seed, r.Accuracy})
		cr.Ablations = append(cr.Ablations, seedAblation(&r))
		if m := string(r.method()); !slices.Contains(cr.AblationMethods, m) {
			cr.AblationMethods = append(cr.AblationMethods, m)
		}
	}
	for i := range out {
		cr := &out[i]
		cr.Accuracy = Describe(accs[i])
		cr.Seconds = Describe(secs[i])
		cr.Histogram = Histogram(accs[i])
		cr.Modes = SplitModes(accs[i])
		k := 0
		for _, a := range cr.Ablations {
			if a.Circuit {
				k++
			}
		}
		cr.Circuit = NewProportion(k, cr.Seeds)
	}
	for i := range out {
		var mine []Record
		for _, r := range recs {
			if r.Key == out[i].Key && r.Status == StatusOK {
				mine = append(mine, r)
			}
		}
		out[i].Measures = summarizeMeasures(mine)
	}
	return out
}

func seedAblation(r *Record) SeedAblation {
	a := SeedAblation{Seed: r.Config.Seed, Accuracy: r.Accuracy, Labels: []string{},
		InductionHeads: r.Ablation.Induction.Heads, InductionJoint: r.Ablation.Induction.Accuracy,
		PrevHeads: r.Ablation.PreviousToken.Heads, PrevJoint: r.Ablation.PreviousToken.Accuracy,
		Circuit: r.FormsCircuit(), Method: string(r.method())}
	lowest := func(p **float64, acc float64) {
		if *p == nil || acc < **p {
			v := acc
			*p = &v
		}
	}
	for i, h := range r.Heads {
		a.Labels = append(a.Labels, h.Name+" "+h.Label)
		switch h.Label {
		case analysis.LabelInduction:
			lowest(&a.InductionSingle, r.OffAlone(&r.Heads[i]))
		case analysis.LabelPreviousToken:
			lowest(&a.PrevSingle, r.OffAlone(&r.Heads[i]))
		}
	}
	return a
}

// pct prints a fraction as a percentage with one decimal.
func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// optPct prints an optional fraction, "-" when absent.
func optPct(p *float64) string {
	if p == nil {
		return "-"
	}
	return pct(*p)
}

// ModesText describes m in words, e.g. "two modes: 3 seeds around 43.3%
// (42.0-45.0%), 5 seeds around 91.2% (87.0-94.0%)".
func ModesText(m Modes) string {
	if !m.Split {
		return "one mode (no gap of " + pct(ModeGap) + " or more that is over twice the spread on either side)"
	}
	side := func(s *Stats) string {
		return fmt.Sprintf("%d seed%s around %s (%s-%s)", s.N, plural(s.N), pct(s.Mean), pct(s.Min), pct(s.Max))
	}
	return fmt.Sprintf("two modes: %s; %s (gap %s)", side(m.Low), side(m.High), pct(m.Gap))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// WriteHistogram draws the non-empty stretch of a histogram as text bars.
func WriteHistogram(w io.Writer, bins []Bin, indent string) {
	first, last, most := -1, -1, 0
	for i, b := range bins {
		if b.Count > 0 {
			if first < 0 {
				first = i
			}
			last = i
			most = max(most, b.Count)
		}
	}
	if first < 0 {
		fmt.Fprintf(w, "%s(no values)\n", indent)
		return
	}
	const width = 40
	for _, b := range bins[first : last+1] {
		n := b.Count
		if most > width {
			n = int(math.Ceil(float64(b.Count) * width / float64(most)))
		}
		fmt.Fprintf(w, "%s%3.0f-%3.0f%% |%-*s %d\n", indent, 100*b.Lo, 100*b.Hi, width, strings.Repeat("#", n), b.Count)
	}
}

// WriteText prints the reports for a terminal.
func WriteText(w io.Writer, reports []ConfigReport) {
	for i, cr := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "== %s\n", cr.Key)
		fmt.Fprintf(w, "training    %s\n", train.Objective(cr.Config))
		if cr.Leakage != nil {
			fmt.Fprintf(w, "data        %s: %d held-out sequences also occur in training\n", cr.Config.Task, *cr.Leakage)
		}
		fmt.Fprintf(w, "runs        %d ok, %d failed; %.1f s per run (mean)\n", cr.Seeds, len(cr.Failed), cr.Seconds.Mean)
		for _, f := range cr.Failed {
			fmt.Fprintf(w, "  failed    seed %d: %s\n", f.Seed, f.Error)
		}
		if cr.Seeds == 0 {
			continue
		}
		a := cr.Accuracy
		fmt.Fprintf(w, "accuracy    mean %s  median %s  min %s  max %s  (chance %s)\n",
			pct(a.Mean), pct(a.Median), pct(a.Min), pct(a.Max), pct(cr.Chance))
		fmt.Fprint(w, "per seed   ")
		for j, v := range cr.Values {
			if j > 0 && j%8 == 0 {
				fmt.Fprint(w, "\n           ")
			}
			fmt.Fprintf(w, " %d:%s", v.Seed, pct(v.Value))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "histogram")
		WriteHistogram(w, cr.Histogram, "  ")
		fmt.Fprintf(w, "modes       %s\n", ModesText(cr.Modes))
		c := cr.Circuit
		fmt.Fprintf(w, "circuit     %d of %d seeds = %s (95%% Wilson interval %s-%s)\n", c.Count, c.Of, pct(c.Fraction), pct(c.Low), pct(c.High))
		fmt.Fprintf(w, "ablations   held-out accuracy by %s ablation; single = the most harmful single head of the label off, joint = all of them off together\n", strings.Join(cr.AblationMethods, " and "))
		fmt.Fprintf(w, "  %6s %7s  %-16s %7s %7s  %-16s %7s %7s  %s\n", "seed", "intact", "induction heads", "single", "joint", "prev-token heads", "single", "joint", "circuit")
		for _, s := range cr.Ablations {
			fmt.Fprintf(w, "  %6d %7s  %-16s %7s %7s  %-16s %7s %7s  %s\n", s.Seed, pct(s.Accuracy),
				headList(s.InductionHeads), optPct(s.InductionSingle), optPct(s.InductionJoint),
				headList(s.PrevHeads), optPct(s.PrevSingle), optPct(s.PrevJoint), YesNo(s.Circuit))
		}
		writeMeasures(w, cr.Measures)
	}
}

func headList(h []string) string {
	if len(h) == 0 {
		return "-"
	}
	return strings.Join(h, ",")
}

// Slug turns a configuration key into a file name stem:
// "task=induction layers=2 ..." becomes "induction_layers2_...".
func Slug(key string) string {
	var parts []string
	for _, f := range strings.Fields(key) {
		k, v, _ := strings.Cut(f, "=")
		if k == "task" {
			parts = append(parts, v)
			continue
		}
		parts = append(parts, strings.ReplaceAll(k, "_", "")+v)
	}
	s := strings.Join(parts, "_")
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

package sweep

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"headlab/circuit"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/train"
)

// EdgeCircuit is a run's circuit as edges (circuit.Find at
// circuit.DefaultThreshold, noising with the task's first corruption, on
// the first train.EvalChunk held-out examples, without the curve): the
// edges it keeps with their effects, its faithfulness, and its
// signature's String (MeasureSignature).
type EdgeCircuit struct {
	Signature    string               `json:"signature"`
	Corruption   string               `json:"corruption"`
	Examples     int                  `json:"examples"`
	Threshold    float64              `json:"threshold"`
	Faithfulness float64              `json:"faithfulness"`
	Edges        []circuit.EdgeResult `json:"edges"`
}

// Sign is the run's signature with each edge's effect, from its stored
// circuit edges and its heads' labels.
func (r *Record) Sign() (circuit.Signature, error) {
	if r.EdgeCircuit == nil {
		return circuit.Signature{}, fmt.Errorf("seed %d of %s has no signature", r.Config.Seed, r.Key)
	}
	return circuit.NewSignature(r.EdgeCircuit.Edges, labelsOf(r.Heads))
}

// labelsOf maps each head's name to its label.
func labelsOf(heads []inspect.Head) map[string]string {
	m := map[string]string{}
	for _, h := range heads {
		m[h.Name] = h.Label
	}
	return m
}

// measureEdgeCircuit finds m's circuit on dev and signs it with heads'
// labels.
func measureEdgeCircuit(m *train.Model, dev kernels.Device, heads []inspect.Head) (*EdgeCircuit, error) {
	rep, err := circuit.FindIn(m, dev, circuit.Options{Examples: train.EvalChunk}, circuit.DefaultThreshold, false, nil)
	if err != nil {
		return nil, err
	}
	ec := &EdgeCircuit{Corruption: rep.Corruption, Examples: rep.Examples, Threshold: rep.Threshold, Faithfulness: rep.Faithfulness,
		Edges: []circuit.EdgeResult{}}
	for _, e := range rep.Edges {
		if e.InCircuit {
			ec.Edges = append(ec.Edges, e)
		}
	}
	sig, err := circuit.NewSignature(ec.Edges, labelsOf(heads))
	if err != nil {
		return nil, err
	}
	ec.Signature = sig.String()
	return ec, nil
}

// columns are ec's values of signature and circuit_json, NULL when nil.
func (ec *EdgeCircuit) columns() ([]any, error) {
	if ec == nil {
		return []any{nil, nil}, nil
	}
	js, err := json.Marshal(ec)
	if err != nil {
		return nil, err
	}
	return []any{ec.Signature, string(js)}, nil
}

// scanEdgeCircuit reads signature and circuit_json back.
func scanEdgeCircuit(sig, js sql.NullString) (*EdgeCircuit, error) {
	if !js.Valid {
		return nil, nil
	}
	var ec EdgeCircuit
	if err := json.Unmarshal([]byte(js.String), &ec); err != nil {
		return nil, fmt.Errorf("circuit_json: %v", err)
	}
	if ec.Signature != sig.String {
		return nil, fmt.Errorf("signature %q differs from circuit_json's %q", sig.String, ec.Signature)
	}
	if _, err := circuit.ParseSignature(ec.Signature); err != nil {
		return nil, err
	}
	return &ec, nil
}

// Mechanism is one mechanism of a configuration's atlas: its signature
// (the most common of its group, each edge's effect the mean over that
// signature's runs) and those merged into it, its runs' count and share
// of the configuration's signed runs with the 95% Wilson interval, their
// mean held-out accuracy, and its representative seed: the lowest seed
// among the runs of its own signature.
type Mechanism struct {
	Signature      string                  `json:"signature"`
	Edges          []circuit.SignatureEdge `json:"edges"`
	Merged         []string                `json:"merged"`
	Runs           int                     `json:"runs"`
	Share          float64                 `json:"share"`
	ShareLow       float64                 `json:"share_low"`
	ShareHigh      float64                 `json:"share_high"`
	Accuracy       float64                 `json:"mean_accuracy"`
	Representative uint64                  `json:"representative_seed"`
	Seeds          []uint64                `json:"seeds"`
}

// ConfigAtlas is one configuration's atlas: its signed runs grouped into
// mechanisms (circuit.GroupMechanisms), most runs first (ties in order of
// founding).
type ConfigAtlas struct {
	Key    string       `json:"config_key"`
	Config train.Config `json:"config"`
	// Signed counts the finished runs with a signature; Unsigned those
	// without (stored before schema version 7, or swept without it).
	Signed     int         `json:"signed"`
	Unsigned   int         `json:"unsigned"`
	Mechanisms []Mechanism `json:"mechanisms"`
}

// Atlas groups each configuration's signed runs into mechanisms, in
// order of configuration key; a configuration with no signed run is
// left out.
func Atlas(recs []Record) ([]ConfigAtlas, error) {
	var out []ConfigAtlas
	byKey := map[string][]*Record{}
	var keys []string
	for i := range recs {
		r := &recs[i]
		if r.Status != StatusOK {
			continue
		}
		if _, ok := byKey[r.Key]; !ok {
			keys = append(keys, r.Key)
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var signed []circuit.Signed
		var runs []*Record
		ca := ConfigAtlas{Key: k}
		for _, r := range byKey[k] {
			if r.EdgeCircuit == nil {
				ca.Unsigned++
				continue
			}
			s, err := r.Sign()
			if err != nil {
				return nil, err
			}
			signed = append(signed, circuit.Signed{Run: len(runs), Signature: s})
			runs = append(runs, r)
		}
		if len(runs) == 0 {
			continue
		}
		ca.Signed = len(runs)
		ca.Config = runs[0].Config
		ca.Config.Seed = 0
		for _, g := range circuit.GroupMechanisms(signed) {
			m := Mechanism{Signature: g.Signature.String(), Edges: g.Signature.Edges, Merged: g.Merged, Runs: len(g.Runs)}
			if m.Merged == nil {
				m.Merged = []string{}
			}
			m.Share = float64(m.Runs) / float64(ca.Signed)
			m.ShareLow, m.ShareHigh = Wilson(m.Runs, ca.Signed)
			found := false
			for _, i := range g.Runs {
				r := runs[i]
				m.Accuracy += r.Accuracy / float64(m.Runs)
				m.Seeds = append(m.Seeds, r.Config.Seed)
				if signed[i].Signature.String() == m.Signature && (!found || r.Config.Seed < m.Representative) {
					m.Representative, found = r.Config.Seed, true
				}
			}
			slices.Sort(m.Seeds)
			ca.Mechanisms = append(ca.Mechanisms, m)
		}
		// Most runs first; a merge can lift a mechanism above those
		// founded before it.
		slices.SortStableFunc(ca.Mechanisms, func(a, b Mechanism) int { return b.Runs - a.Runs })
		out = append(out, ca)
	}
	return out, nil
}

// AtlasCSVHeader is the header of the atlas's CSV: one row per mechanism.
var AtlasCSVHeader = []string{"config_key", "mechanism", "signature", "runs", "signed", "share", "share_low", "share_high",
	"mean_accuracy", "representative_seed", "seeds", "merged"}

// WriteAtlasCSV writes one row per mechanism of every configuration
// (seeds space-separated, merged signatures " | "-separated).
func WriteAtlasCSV(w io.Writer, atlas []ConfigAtlas) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(AtlasCSVHeader); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, ca := range atlas {
		for i, m := range ca.Mechanisms {
			seeds := make([]string, len(m.Seeds))
			for k, s := range m.Seeds {
				seeds[k] = strconv.FormatUint(s, 10)
			}
			if err := cw.Write([]string{ca.Key, strconv.Itoa(i + 1), m.Signature, strconv.Itoa(m.Runs), strconv.Itoa(ca.Signed),
				g(m.Share), g(m.ShareLow), g(m.ShareHigh), g(m.Accuracy), strconv.FormatUint(m.Representative, 10),
				strings.Join(seeds, " "), strings.Join(m.Merged, " | ")}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteAtlas prints each configuration's mechanisms: share with its
// interval, mean accuracy, representative seed, and the signature's
// edges with their mean effects.
func WriteAtlas(w io.Writer, atlas []ConfigAtlas) {
	for i, ca := range atlas {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", ca.Key)
		fmt.Fprintf(w, "  %d signed run%s, %d mechanism%s", ca.Signed, plural(ca.Signed), len(ca.Mechanisms), plural(len(ca.Mechanisms)))
		if ca.Unsigned > 0 {
			fmt.Fprintf(w, " (%d finished run%s without a signature left out)", ca.Unsigned, plural(ca.Unsigned))
		}
		fmt.Fprintln(w)
		for k, m := range ca.Mechanisms {
			fmt.Fprintf(w, "  mechanism %d: %d of %d runs, %s (95%% %s to %s), mean accuracy %s, representative seed %d\n",
				k+1, m.Runs, ca.Signed, pct(m.Share), pct(m.ShareLow), pct(m.ShareHigh), pct(m.Accuracy), m.Representative)
			for _, e := range m.Edges {
				fmt.Fprintf(w, "    %-44s %6.2f\n", e.String(), e.Effect)
			}
			if len(m.Merged) > 0 {
				fmt.Fprintf(w, "    merged (one weak edge apart): %d signature%s\n", len(m.Merged), plural(len(m.Merged)))
			}
		}
	}
}

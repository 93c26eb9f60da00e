package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// withRelation attaches one relation, keys[n][i], to a.
func withRelation(t testing.TB, a *Attention, name string, keys [][]int) *Attention {
	t.Helper()
	r := Relation{Name: name}
	for _, row := range keys {
		r.Keys = append(r.Keys, row...)
	}
	a.Relations = append(a.Relations, r)
	if err := a.Validate(); err != nil {
		t.Fatalf("test relation invalid: %v", err)
	}
	return a
}

// noKeys is a T-long row of -1.
func noKeys(T int) []int {
	k := make([]int, T)
	for i := range k {
		k[i] = -1
	}
	return k
}

func TestRelationFollowedHead(t *testing.T) {
	// Two examples, the query at 7 points at a subject at 1 and at 4: no
	// offset or position finds both, and a head that reads the subject
	// gets mass and argmax 1.
	T := 8
	keys := [][]int{noKeys(T), noKeys(T)}
	keys[0][7], keys[1][7] = 1, 4
	toks := [][]int{seq(T), seq(T)}
	a := build(t, true, toks, 1, 2, func(n, _, h int) [][]float64 {
		if h == 1 {
			return oneHot(T, func(i int) int { return max(i-1, 0) })
		}
		return oneHot(T, func(i int) int {
			if i == 7 {
				return keys[n][7]
			}
			return 0
		})
	})
	withRelation(t, a, "verb->subject", keys)
	hs := ScoreHead(a, 0, 0)
	r := hs.Relations[0]
	if r.Relation != "verb->subject" || r.Mass != 1 || r.Argmax != 1 {
		t.Fatalf("followed head: %+v", r)
	}
	// Offset -6 finds example 0's subject, offset -3 example 1's: the
	// smaller d wins the tie at 0.5.
	if r.Baseline != 0.5 || r.BaselineBy != "offset -3" {
		t.Errorf("baseline %v by %q, want 0.5 by offset -3", r.Baseline, r.BaselineBy)
	}
	if !r.Beats() || hs.Syntax != "syntax verb->subject 1.00" {
		t.Errorf("syntax %q, beats %v", hs.Syntax, r.Beats())
	}
	// The previous-token head never reads a subject.
	hs = ScoreHead(a, 0, 1)
	if r := hs.Relations[0]; r.Mass != 0 || r.Argmax != 0 || hs.Syntax != "" {
		t.Errorf("previous-token head: %+v, syntax %q", r, hs.Syntax)
	}
	// Without relations there are no relation scores.
	a.Relations = nil
	if hs := ScoreHead(a, 0, 0); hs.Relations != nil || hs.Syntax != "" {
		t.Errorf("no relations declared, yet %+v %q", hs.Relations, hs.Syntax)
	}
}

func TestRelationBaselineKinds(t *testing.T) {
	T := 6
	m := oneHot(T, func(i int) int { return max(i-2, 0) })
	cases := []struct {
		keys func(i int) int
		want string
		base float64
	}{
		{func(i int) int { return i - 2 }, "offset -2", 1},
		{func(int) int { return 2 }, "position-2", 1},
		{func(int) int { return 0 }, "attention-sink", 1},
		// Only queries 3 -> 1 and 5 -> 0 (nil below): offset -2 finds one
		// of two and comes first.
		{nil, "offset -2", 0.5},
	}
	for k, c := range cases {
		keys := noKeys(T)
		for i := 2; i < T && c.keys != nil; i++ {
			keys[i] = c.keys(i)
		}
		if c.keys == nil {
			keys[3], keys[5] = 1, 0
		}
		a := withRelation(t, one(t, true, seq(T), m), "r", [][]int{keys})
		r := ScoreHead(a, 0, 0).Relations[0]
		if r.BaselineBy != c.want || !near(r.Baseline, c.base, eps) {
			t.Errorf("case %d: baseline %v by %q, want %v by %q", k, r.Baseline, r.BaselineBy, c.base, c.want)
		}
		// A head that does what the baseline does never beats it.
		if k == 0 && (r.Argmax != 1 || r.Beats()) {
			t.Errorf("offset head on an offset relation: %+v beats %v", r, r.Beats())
		}
	}
}

func TestRelationEligibilityAndTies(t *testing.T) {
	T := 4
	// Causal: query 0 sees only itself and is never eligible; a key after
	// its query cannot be visible and is skipped too.
	keys := []int{0, 0, 3, 1}
	m := [][]float64{
		{1, 0, 0, 0},
		{0.5, 0.5, 0, 0}, // a tie: the first key, 0, is the argmax
		{0, 0, 1, 0},
		{0.2, 0.3, 0.5, 0},
	}
	a := withRelation(t, one(t, true, seq(T), m), "r", [][]int{keys})
	r := ScoreHead(a, 0, 0).Relations[0]
	// Eligible: query 1 (key 0: mass 0.5, argmax hit) and query 3 (key 1:
	// mass 0.3, argmax miss).
	if !near(r.Mass, 0.4, 1e-7) || r.Argmax != 0.5 {
		t.Errorf("mass %v argmax %v, want 0.4 and 0.5", r.Mass, r.Argmax)
	}
	// A relation with no eligible query scores 0 everywhere.
	a.Relations = nil
	withRelation(t, a, "none", [][]int{{0, -1, -1, -1}})
	if r := ScoreHead(a, 0, 0).Relations[0]; r.Mass != 0 || r.Argmax != 0 || r.Baseline != 0 {
		t.Errorf("no eligible query: %+v", r)
	}
}

func TestSyntaxNamePicksBestBeatingRelation(t *testing.T) {
	rs := []RelationScore{
		{Relation: "a", Argmax: 0.9, Baseline: 0.75}, // beats by 0.15 only
		{Relation: "b", Argmax: 0.6, Baseline: 0.3},
		{Relation: "c", Argmax: 0.7, Baseline: 0.4},
		{Relation: "d", Argmax: 0.7, Baseline: 0.1}, // ties c: c is earlier
	}
	if got := SyntaxName(rs); got != "syntax c 0.70" {
		t.Errorf("SyntaxName = %q", got)
	}
	if got := SyntaxName(rs[:1]); got != "" {
		t.Errorf("a margin of 0.15 named the head: %q", got)
	}
}

func TestRelationsRoundTripAndErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	a := randomAttention(rng, true, 3, 1, 2, 5, 4)
	keys := randomKeys(rng, a, 0.5)
	a.Relations = []Relation{{Name: "verb->subject", Keys: keys}, {Name: `odd "name"`, Keys: randomKeys(rng, a, 0.3)}}
	var buf bytes.Buffer
	if err := WriteAttention(&buf, a); err != nil {
		t.Fatal(err)
	}
	b, err := ReadAttention(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Relations) != 2 || b.Relations[1].Name != a.Relations[1].Name || fmt.Sprint(b.Relations[0].Keys) != fmt.Sprint(keys) {
		t.Fatalf("relations came back as %+v", b.Relations)
	}
	base := `{"causal": true, "tokens": [[1,2]], "attention": [[[[[1,0],[0.5,0.5]]]]]`
	for _, c := range []struct{ rel, want string }{
		{`"relations": 3`, "must be an array"},
		{`"relations": [{"keys": [[-1,0]]}]`, "no name"},
		{`"relations": [{"name": "r", "keys": [[-1,0],[0,0]]}]`, "2 examples"},
		{`"relations": [{"name": "r", "keys": [[-1]]}]`, "1 entries"},
		{`"relations": [{"name": "r", "keys": [[-1,2]]}]`, "neither -1 nor a position"},
		{`"relations": [{"name": "r", "keys": [[-1,0.5]]}]`, "not an integer"},
		{`"relations": [{"name": "r", "keys": [[-1,0]]}, {"name": "r", "keys": [[-1,0]]}]`, "twice"},
	} {
		_, err := ReadAttention(strings.NewReader(base + ", " + c.rel + "}"))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", c.rel, err, c.want)
		}
	}
}

// randomKeys points a random fraction of the visible queries of every
// example at a random visible key.
func randomKeys(rng *rand.Rand, a *Attention, frac float64) []int {
	keys := make([]int, a.N*a.T)
	for k := range keys {
		i := k % a.T
		keys[k] = -1
		if rng.Float64() < frac {
			nv := a.numVisible(i)
			keys[k] = rng.Intn(nv)
			if !a.Causal {
				keys[k] = rng.Intn(a.T)
			}
		}
	}
	return keys
}

type refRelHead struct {
	Name      string          `json:"name"`
	Relations []RelationScore `json:"relations"`
	Syntax    string          `json:"syntax"`
}

func TestCrossCheckRelationsReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("python3 not found")
		}
		t.Fatal("python3 not found and CI is set")
	}
	script := filepath.Join("..", "tools", "relations_ref.py")
	rng := rand.New(rand.NewSource(11))
	files := map[string]*Attention{}
	for k := 0; k < 4; k++ {
		a := mixedAttention(rng, k%2 == 0, 4, 2, 3, 8+2*k, 5)
		a.Relations = []Relation{{Name: "verb->subject", Keys: randomKeys(rng, a, 0.3)}, {Name: "adjective->noun", Keys: randomKeys(rng, a, 0.1)}}
		files[fmt.Sprintf("mixed%d", k)] = a
	}
	// Heads planted on a relation, so that names are compared too: each
	// query of the relation reads its key with weight w (some beat the
	// baseline, some do not).
	for k := 0; k < 3; k++ {
		a := randomAttention(rng, true, 6, 1, 4, 12, 6)
		keys := randomKeys(rng, a, 0.4)
		for h := 0; h < a.H; h++ {
			w := 0.25 * float64(h+1)
			for n := 0; n < a.N; n++ {
				for i := 0; i < a.T; i++ {
					if key := keys[n*a.T+i]; key >= 0 {
						row := a.row(n, 0, h, i)
						for j := range row {
							row[j] = float32((1 - w) * float64(row[j]))
						}
						row[key] += float32(w)
					}
				}
			}
		}
		a.Relations = []Relation{{Name: "planted", Keys: keys}}
		files[fmt.Sprintf("planted%d", k)] = a
	}
	dir := t.TempDir()
	named := 0
	for name, a := range files {
		path := filepath.Join(dir, name+".json")
		var buf bytes.Buffer
		if err := WriteAttention(&buf, a); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, script, path).Output()
		if err != nil {
			t.Fatalf("%s: %s failed: %v", name, script, err)
		}
		var ref []refRelHead
		if err := json.Unmarshal(out, &ref); err != nil {
			t.Fatalf("%s: reference output: %v", name, err)
		}
		got := ScoreAll(a)
		if len(ref) != len(got) {
			t.Fatalf("%s: reference has %d heads, Go %d", name, len(ref), len(got))
		}
		for k, g := range got {
			r := ref[k]
			if r.Name != g.Name || r.Syntax != g.Syntax || len(r.Relations) != len(g.Relations) {
				t.Fatalf("%s %s: Go %q %d relations, reference %s %q %d", name, g.Name, g.Syntax, len(g.Relations), r.Name, r.Syntax, len(r.Relations))
			}
			if g.Syntax != "" {
				named++
			}
			for q, gr := range g.Relations {
				rr := r.Relations[q]
				if rr.Relation != gr.Relation || rr.BaselineBy != gr.BaselineBy || !near(rr.Mass, gr.Mass, 1e-6) ||
					!near(rr.Argmax, gr.Argmax, 1e-9) || !near(rr.Baseline, gr.Baseline, 1e-9) {
					t.Errorf("%s %s %s: Go %+v, reference %+v", name, g.Name, gr.Relation, gr, rr)
				}
			}
		}
	}
	if named == 0 {
		t.Error("no head was named after a relation: the names were not compared")
	}
}

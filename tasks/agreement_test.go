package tasks

import (
	"testing"
)

func TestAgreement(t *testing.T) {
	task, b := batchOf(t, "agreement", 2000)
	rt := task.(RelationTask)
	kt := task.(KindTask)
	if rels := Relations(task); len(rels) != 2 || rels[0] != "verb->subject" || rels[1] != "adjective->noun" {
		t.Fatalf("relations %v", rels)
	}
	offsets, positions := map[int]int{}, map[int]int{}
	kinds := make([]int, len(kt.Kinds()))
	verbKeys, adjKeys := make([]int, b.T), make([]int, b.T)
	adjectives := 0
	for e := 0; e < b.N; e++ {
		tok, tgt := b.Tokens[e*b.T:(e+1)*b.T], b.Targets[e*b.T:(e+1)*b.T]
		// The subject is the first noun; the one answer sits on the verb
		// slot and agrees with it.
		subject, verb := -1, -1
		for i, x := range tok {
			if isNoun(x) && subject < 0 {
				subject = i
			}
			if x == agrVerb {
				if verb >= 0 {
					t.Fatalf("example %d: two verb slots in %v", e, tok)
				}
				verb = i
			}
		}
		if subject < 0 || verb < subject {
			t.Fatalf("example %d: subject %d, verb %d in %v", e, subject, verb, tok)
		}
		for i, y := range tgt {
			if (i == verb) != (y != NoTarget) {
				t.Fatalf("example %d: target %d at %d, verb slot at %d", e, y, i, verb)
			}
		}
		want := agrVerbSing
		if isPlural(tok[subject]) {
			want = agrVerbPlur
		}
		if tgt[verb] != want {
			t.Fatalf("example %d: answer %d does not agree with subject %d", e, tgt[verb], tok[subject])
		}
		offsets[verb-subject]++
		positions[subject]++

		// Relations as declared: the verb slot points at the subject, and
		// each adjective at the noun before it, nothing else points.
		rt.Relate(0, tok, verbKeys)
		rt.Relate(1, tok, adjKeys)
		for i := range tok {
			wantVerb, wantAdj := NoTarget, NoTarget
			if i == verb {
				wantVerb = subject
			}
			if tok[i] >= agrAdj && tok[i] < agrVerb {
				adjectives++
				for j := i - 1; j >= 0; j-- {
					if isNoun(tok[j]) {
						wantAdj = j
						break
					}
				}
				if wantAdj < 0 || i-wantAdj > 3 {
					t.Fatalf("example %d: adjective at %d has noun %d", e, i, wantAdj)
				}
			}
			if verbKeys[i] != wantVerb || adjKeys[i] != wantAdj {
				t.Fatalf("example %d position %d: keys %d %d, want %d %d (%v)", e, i, verbKeys[i], adjKeys[i], wantVerb, wantAdj, tok)
			}
		}

		// An attractor is a noun of the other number before the verb; when
		// there is one, the noun nearest the verb is one.
		attract, nearest := false, -1
		for i := subject + 1; i < verb; i++ {
			if isNoun(tok[i]) {
				nearest = i
				if isPlural(tok[i]) != isPlural(tok[subject]) {
					attract = true
				}
			}
		}
		if nearest < 0 {
			t.Fatalf("example %d: no intervening noun", e)
		}
		k := kt.Kind(tok)
		if (k == 0) != attract {
			t.Fatalf("example %d: kind %s, attractor %v", e, kt.Kinds()[k], attract)
		}
		if attract && isPlural(tok[nearest]) == isPlural(tok[subject]) {
			t.Fatalf("example %d: attractor, but the nearest noun agrees: %v", e, tok)
		}
		kinds[k]++
	}
	// Half the examples have an attractor.
	if kinds[0] < b.N*4/10 || kinds[1] < b.N*4/10 {
		t.Fatalf("kinds %v of %d", kinds, b.N)
	}
	// No fixed offset, position or sink finds the subject in most examples.
	best := 0
	for _, m := range []map[int]int{offsets, positions} {
		for _, c := range m {
			best = max(best, c)
		}
	}
	if len(offsets) < 6 || len(positions) != agrMaxPrefix+1 || best > b.N*3/10 {
		t.Fatalf("subject offsets %v, positions %v: a fixed offset or position finds %d of %d", offsets, positions, best, b.N)
	}
	if adjectives < b.N {
		t.Fatalf("only %d adjectives in %d examples", adjectives, b.N)
	}
}

func TestRelationIndex(t *testing.T) {
	agr, _ := New("agreement")
	if i, err := RelationIndex(agr, "adjective->noun"); err != nil || i != 1 {
		t.Fatalf("adjective->noun: %d %v", i, err)
	}
	if _, err := RelationIndex(agr, "verb->object"); err == nil {
		t.Fatal("an undeclared relation was accepted")
	}
	ind, _ := New("induction")
	if Relations(ind) != nil {
		t.Fatal("induction declares relations")
	}
	if _, err := RelationIndex(ind, "verb->subject"); err == nil {
		t.Fatal("a task without relations accepted one")
	}
}

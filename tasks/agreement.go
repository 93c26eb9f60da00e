package tasks

import (
	"fmt"
	"math/rand/v2"
)

// Agreement is a small synthetic grammar of subject-verb agreement:
//
//	filler{0..5} SUBJECT adj{0,1} (PREP NOUN adj{0..2}){1,2} VERB filler...
//
// A filler prefix of random length puts the subject at no fixed position;
// the subject (a singular or a plural noun) is the first noun, and each
// prepositional phrase holds another noun. The one answer position is the
// verb slot (the VERB token): the answer is the verb form that agrees with
// the subject, singular or plural. In half of the examples the noun
// nearest the verb has the other number (an attractor) and the other
// phrase nouns are of either number; in the other half every noun has the
// subject's number. Lengths are drawn at random, so that the subject sits
// at between 3 and 10 tokens before the verb and at any of 6 positions.
// Chance is 1/2: guessing between the two verb forms.
//
// Relations (RelationTask): verb->subject, from the verb slot to the
// subject; adjective->noun, from every adjective to the noun it follows.
// Kinds (KindTask): "attractor" and "no attractor".
//
// T is the sequence length, 16 when 0; past 16 the sequence ends in more
// fillers.
type Agreement struct{ T int }

// The agreement vocabulary, in id order.
const (
	agrFillers   = 4 // ids 0..3
	agrNouns     = 4 // lemmas: singular ids 4..7, plural 8..11
	agrPreps     = 2 // ids 12, 13
	agrAdjs      = 3 // ids 14..16
	agrSingular  = agrFillers
	agrPlural    = agrSingular + agrNouns
	agrPrep      = agrPlural + agrNouns
	agrAdj       = agrPrep + agrPreps
	agrVerb      = agrAdj + agrAdjs // the verb slot
	agrVerbSing  = agrVerb + 1      // the singular verb form ("is")
	agrVerbPlur  = agrVerb + 2      // the plural verb form ("are")
	agrVocab     = agrVerb + 3
	agrSeqLen    = 16
	agrMaxPrefix = 5
)

// Name implements Task.
func (Agreement) Name() string { return "agreement" }

// Vocab implements Task.
func (Agreement) Vocab() int { return agrVocab }

// SeqLen implements Task.
func (t Agreement) SeqLen() int {
	if t.T == 0 {
		return agrSeqLen
	}
	return t.T
}

// sizes implements resizer.
func (Agreement) sizes() string {
	return fmt.Sprintf("--seq-len in %d..%d (the longest sentence fills 16) and only --vocab %d", agrSeqLen, MaxSeqLen, agrVocab)
}

// resize implements resizer.
func (t Agreement) resize(T, V int) (Task, error) {
	if T < agrSeqLen || V != agrVocab {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	return Agreement{T: T}, nil
}

// Chance implements Task.
func (Agreement) Chance() float64 { return 0.5 }

// DefaultSteps implements Task.
func (Agreement) DefaultSteps() int { return 2000 }

// Describe implements Task.
func (Agreement) Describe() string {
	return fmt.Sprintf("filler prefix of 0-%d, a singular or plural subject, 1-2 prepositional phrases (attractor nouns of the other number in half the examples), a verb slot; answer at the slot: the verb form agreeing with the subject", agrMaxPrefix)
}

func isNoun(t int) bool   { return t >= agrSingular && t < agrPrep }
func isPlural(t int) bool { return t >= agrPlural && t < agrPrep }

// noun is lemma k's id in the given number.
func noun(k int, plural bool) int {
	if plural {
		return agrPlural + k
	}
	return agrSingular + k
}

// AnswerPositions implements Task: the verb slot follows at least a
// subject and one phrase (3 tokens), and at most the longest prefix, the
// subject with its adjective and two phrases of four.
func (Agreement) AnswerPositions() []int {
	return span(3, agrMaxPrefix+2+2*(2+2))
}

// Sample implements Task.
func (Agreement) Sample(rng *rand.Rand, tokens, targets []int) {
	noTargets(targets)
	i := 0
	put := func(t int) { tokens[i] = t; i++ }
	for range rng.IntN(agrMaxPrefix + 1) {
		put(rng.IntN(agrFillers))
	}
	plural := rng.IntN(2) == 1
	put(noun(rng.IntN(agrNouns), plural))
	for range rng.IntN(2) {
		put(agrAdj + rng.IntN(agrAdjs))
	}
	attractor := rng.IntN(2) == 1
	phrases := 1 + rng.IntN(2)
	for k := range phrases {
		num := plural
		switch {
		case attractor && k == phrases-1:
			num = !plural
		case attractor:
			num = rng.IntN(2) == 1
		}
		put(agrPrep + rng.IntN(agrPreps))
		put(noun(rng.IntN(agrNouns), num))
		for range rng.IntN(3) {
			put(agrAdj + rng.IntN(agrAdjs))
		}
	}
	targets[i] = agrVerbSing
	if plural {
		targets[i] = agrVerbPlur
	}
	put(agrVerb)
	for i < len(tokens) {
		put(rng.IntN(agrFillers))
	}
}

// Relations implements RelationTask.
func (Agreement) Relations() []string { return []string{"verb->subject", "adjective->noun"} }

// Relate implements RelationTask: both relations are read off the tokens
// (the subject is the first noun; an adjective belongs to the last noun
// before it).
func (Agreement) Relate(r int, tokens, keys []int) {
	noTargets(keys)
	subject, last := NoTarget, NoTarget
	for i, t := range tokens {
		switch {
		case isNoun(t):
			if subject == NoTarget {
				subject = i
			}
			last = i
		case r == 0 && t == agrVerb && subject != NoTarget:
			keys[i] = subject
			return
		case r == 1 && t >= agrAdj && t < agrVerb && last != NoTarget:
			keys[i] = last
		case t == agrVerb:
			return
		}
	}
}

// Kinds implements KindTask.
func (Agreement) Kinds() []string { return []string{"attractor", "no attractor"} }

// Kind implements KindTask: an example has an attractor when a noun
// between the subject and the verb has the other number.
func (Agreement) Kind(tokens []int) int {
	subject := NoTarget
	for _, t := range tokens {
		switch {
		case t == agrVerb:
			return 1
		case isNoun(t) && subject == NoTarget:
			subject = t
		case isNoun(t) && isPlural(t) != isPlural(subject):
			return 0
		}
	}
	return 1
}

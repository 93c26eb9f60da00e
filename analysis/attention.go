package analysis

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Tolerances from the file contract: a row's visible cells must sum to 1
// within rowSumTol, and with the causal mask the masked cells must be 0
// within maskTol.
const (
	rowSumTol = 1e-3
	maskTol   = 1e-6
)

// Attention holds the attention probabilities of every head of a model on a
// batch of N examples of T tokens each: L layers of H heads.
type Attention struct {
	// Causal reports whether the causal mask was on: A[i, j] = 0 for j > i.
	Causal bool
	// N examples, L layers, H heads per layer, T tokens per example.
	N, L, H, T int
	// Tokens holds N*T token ids, example-major: Tokens[n*T+i].
	Tokens []int
	// Probs holds N*L*H*T*T probabilities, indexed
	// ((((n*L+l)*H+h)*T+i)*T+j): example n, layer l, head h, query i, key j.
	Probs []float32
	// Relations are the relations the examples' task declares (none for
	// most tasks); every head is scored on each (relations.go).
	Relations []Relation
}

// At returns the probability that query i puts on key j for head h of layer
// l on example n.
func (a *Attention) At(n, l, h, i, j int) float32 {
	return a.Probs[((((n*a.L+l)*a.H+h)*a.T+i)*a.T + j)]
}

// row returns the T probabilities of query i for head (l, h) on example n.
func (a *Attention) row(n, l, h, i int) []float32 {
	off := (((n*a.L+l)*a.H+h)*a.T + i) * a.T
	return a.Probs[off : off+a.T]
}

// numVisible is n_i, the number of keys visible to query i (0 <= i < T):
// under the causal mask keys 0..i, else all T. This is the causal rule
// that the kernels take from internal/simd's Visible, written again here
// because analysis imports no headlab package: it reads attention from
// any source (an attention file, PyTorch) and stays free of the model's
// code (docs/architecture.md).
func (a *Attention) numVisible(i int) int {
	if a.Causal {
		return i + 1
	}
	return a.T
}

// visible reports whether key j is visible to query i (0 <= i < T).
func (a *Attention) visible(i, j int) bool {
	return j >= 0 && j < a.numVisible(i)
}

// mulChecked multiplies positive ints, reporting overflow so that Validate
// cannot be fooled by a wrapped-around product.
func mulChecked(xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x != 0 && p > math.MaxInt/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// Validate checks the shape and the contents of a: positive dimensions,
// slice lengths that match them, non-negative tokens, finite non-negative
// probabilities, visible cells of every row summing to 1 within 1e-3 and,
// with the causal mask, masked cells equal to 0 within 1e-6. The error is a
// single line naming the first problem found.
func (a *Attention) Validate() error {
	if a == nil {
		return errors.New("nil attention")
	}
	if a.N <= 0 || a.L <= 0 || a.H <= 0 || a.T <= 0 {
		return fmt.Errorf("dimensions must be positive, got N=%d L=%d H=%d T=%d", a.N, a.L, a.H, a.T)
	}
	nt, ok1 := mulChecked(a.N, a.T)
	np, ok2 := mulChecked(a.N, a.L, a.H, a.T, a.T)
	if !ok1 || !ok2 {
		return fmt.Errorf("dimensions N=%d L=%d H=%d T=%d overflow", a.N, a.L, a.H, a.T)
	}
	if len(a.Tokens) != nt {
		return fmt.Errorf("tokens: have %d, want N*T = %d", len(a.Tokens), nt)
	}
	if len(a.Probs) != np {
		return fmt.Errorf("attention: have %d probabilities, want N*L*H*T*T = %d", len(a.Probs), np)
	}
	for k, t := range a.Tokens {
		if t < 0 {
			return fmt.Errorf("tokens[%d][%d] = %d is negative", k/a.T, k%a.T, t)
		}
	}
	for n := 0; n < a.N; n++ {
		for l := 0; l < a.L; l++ {
			for h := 0; h < a.H; h++ {
				for i := 0; i < a.T; i++ {
					if err := a.checkRow(n, l, h, i); err != nil {
						return err
					}
				}
			}
		}
	}
	return a.checkRelations()
}

// checkRow validates one row of probabilities; see Validate.
func (a *Attention) checkRow(n, l, h, i int) error {
	sum := 0.0
	for j, p := range a.row(n, l, h, i) {
		v := float64(p)
		problem := ""
		switch {
		case math.IsNaN(v):
			problem = "is NaN"
		case math.IsInf(v, 0):
			problem = "is infinite"
		case v < 0:
			problem = "is negative"
		case !a.visible(i, j) && v > maskTol:
			problem = "is masked by the causal mask but not 0"
		}
		if problem != "" {
			return fmt.Errorf("attention[%d][%d][%d][%d][%d] = %s %s",
				n, l, h, i, j, strconv.FormatFloat(v, 'g', -1, 32), problem)
		}
		if a.visible(i, j) {
			sum += v
		}
	}
	if math.Abs(sum-1) > rowSumTol {
		return fmt.Errorf("attention[%d][%d][%d] row %d: visible weights sum to %.6g, want 1 within %g", n, l, h, i, sum, rowSumTol)
	}
	return nil
}

// number is the text of one JSON number. Decoding into it, rather than into
// int or float64, rejects null (which encoding/json would leave as 0) and
// quoted strings, and keeps the digits for an exact float32 parse.
type number string

// UnmarshalJSON accepts a JSON number literal and nothing else.
func (x *number) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		what := "a non-number"
		switch {
		case len(b) == 0:
		case b[0] == 'n':
			what = "null"
		case b[0] == '"':
			what = "a string"
		case b[0] == 't' || b[0] == 'f':
			what = "a boolean"
		case b[0] == '[':
			what = "an array"
		case b[0] == '{':
			what = "an object"
		}
		return fmt.Errorf("found %s where a number belongs", what)
	}
	*x = number(b)
	return nil
}

// ReadAttention reads an attention file, the JSON object
//
//	{"causal": bool, "tokens": [N][T] ints, "attention": [N][L][H][T][T] floats,
//	 "relations": [{"name": string, "keys": [N][T] ints}]}
//
// ("relations" is optional: the key each query of a declared relation
// points to, -1 for no query) and validates it (see Attention.Validate). Unknown keys are ignored. Errors
// are single lines naming the problem; no input makes it panic.
func ReadAttention(r io.Reader) (*Attention, error) {
	a, err := readAttention(r)
	if err != nil {
		// JSON error messages can quote input, which may contain newlines.
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		return nil, errors.New("attention file: " + strings.ReplaceAll(msg, "\r", " "))
	}
	return a, nil
}

func readAttention(r io.Reader) (*Attention, error) {
	top, err := decodeTop(r)
	if err != nil {
		return nil, err
	}
	// A pointer tells null (or a missing value) apart from false.
	var causal *bool
	if err := json.Unmarshal(top["causal"], &causal); err != nil || causal == nil {
		return nil, errors.New(`"causal" must be true or false`)
	}
	var toks [][]number
	if err := json.Unmarshal(top["tokens"], &toks); err != nil {
		return nil, fmt.Errorf(`"tokens" must be an [N][T] array of integers: %v`, err)
	}
	var att [][][][][]number
	if err := json.Unmarshal(top["attention"], &att); err != nil {
		return nil, fmt.Errorf(`"attention" must be an [N][L][H][T][T] array of numbers: %v`, err)
	}
	// Shapes first, so the allocations below are bounded by the input size.
	a, err := attentionShape(toks, att)
	if err != nil {
		return nil, err
	}
	a.Causal = *causal
	var rels []rawRelation
	if raw, ok := top["relations"]; ok {
		if err := json.Unmarshal(raw, &rels); err != nil {
			return nil, fmt.Errorf(`"relations" must be an array of {"name": string, "keys": [N][T] integers}: %v`, err)
		}
	}
	if a.Tokens, err = parseTokens(toks); err != nil {
		return nil, err
	}
	if a.Probs, err = parseProbs(att, a.N*a.L*a.H*a.T*a.T); err != nil {
		return nil, err
	}
	for k, r := range rels {
		rel, err := parseRelation(r, k, a.N, a.T)
		if err != nil {
			return nil, err
		}
		a.Relations = append(a.Relations, rel)
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// decodeTop decodes the one JSON object of an attention file and checks
// that its required keys are there.
func decodeTop(r io.Reader) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(r)
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty input")
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("truncated JSON")
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("invalid JSON at byte %d: %v", syn.Offset, err)
		}
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return nil, fmt.Errorf("the top level must be a JSON object, not %s", typ.Value)
		}
		return nil, err
	}
	// Anything but white space after the object is garbage.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON object")
	}
	for _, k := range []string{"causal", "tokens", "attention"} {
		if _, ok := top[k]; !ok {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	return top, nil
}

// attentionShape checks that tokens is [N][T] and attention [N][L][H][T][T],
// and returns an Attention holding those sizes and nothing else.
func attentionShape(toks [][]number, att [][][][][]number) (*Attention, error) {
	if len(toks) == 0 || len(toks[0]) == 0 {
		return nil, errors.New(`"tokens" is empty`)
	}
	N, T := len(toks), len(toks[0])
	for n, row := range toks {
		if len(row) != T {
			return nil, fmt.Errorf("tokens is ragged: tokens[%d] has %d entries, tokens[0] has %d", n, len(row), T)
		}
	}
	if len(att) == 0 || len(att[0]) == 0 || len(att[0][0]) == 0 {
		return nil, errors.New(`"attention" is empty`)
	}
	if len(att) != N {
		return nil, fmt.Errorf("attention has %d examples, tokens has %d", len(att), N)
	}
	L, H := len(att[0]), len(att[0][0])
	for n := range att {
		if len(att[n]) != L {
			return nil, fmt.Errorf("attention is ragged: attention[%d] has %d layers, attention[0] has %d", n, len(att[n]), L)
		}
		for l := range att[n] {
			if len(att[n][l]) != H {
				return nil, fmt.Errorf("attention is ragged: attention[%d][%d] has %d heads, attention[0][0] has %d", n, l, len(att[n][l]), H)
			}
			for h := range att[n][l] {
				if err := checkSquare(att[n][l][h], T, n, l, h); err != nil {
					return nil, err
				}
			}
		}
	}
	return &Attention{N: N, L: L, H: H, T: T}, nil
}

// checkSquare checks that head h of layer l on example n is a T×T matrix.
func checkSquare(rows [][]number, T, n, l, h int) error {
	if len(rows) != T {
		return fmt.Errorf("attention[%d][%d][%d] has %d query rows, tokens has T = %d", n, l, h, len(rows), T)
	}
	for i := range rows {
		if len(rows[i]) != T {
			return fmt.Errorf("attention[%d][%d][%d][%d] has %d keys, tokens has T = %d", n, l, h, i, len(rows[i]), T)
		}
	}
	return nil
}

// parseTokens flattens the [N][T] token ids, example-major.
func parseTokens(toks [][]number) ([]int, error) {
	out := make([]int, 0, len(toks)*len(toks[0]))
	for n, row := range toks {
		for i, s := range row {
			t, err := strconv.Atoi(string(s))
			if err != nil {
				return nil, fmt.Errorf("tokens[%d][%d] = %q is not an integer in range", n, i, string(s))
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// parseProbs flattens the [N][L][H][T][T] probabilities in Probs' order;
// size is their count.
func parseProbs(att [][][][][]number, size int) ([]float32, error) {
	out := make([]float32, 0, size)
	for n := range att {
		for l := range att[n] {
			for h := range att[n][l] {
				for i := range att[n][l][h] {
					for j, s := range att[n][l][h][i] {
						// Parsing straight to 32 bits rounds once, so the
						// shortest float32 text written by WriteAttention
						// comes back bit for bit.
						v, err := strconv.ParseFloat(string(s), 32)
						if err != nil {
							return nil, fmt.Errorf("attention[%d][%d][%d][%d][%d] = %s is not a finite float32", n, l, h, i, j, string(s))
						}
						out = append(out, float32(v))
					}
				}
			}
		}
	}
	return out, nil
}

// rawRelation is one entry of "relations" as the JSON holds it (an alias:
// JSON errors name the type, unnamed as it always was).
type rawRelation = struct {
	Name *string    `json:"name"`
	Keys [][]number `json:"keys"`
}

// parseRelation checks relation k, r, against N examples of T tokens and
// flattens its keys, example-major.
func parseRelation(r rawRelation, k, N, T int) (Relation, error) {
	if r.Name == nil {
		return Relation{}, fmt.Errorf("relations[%d] has no name", k)
	}
	if len(r.Keys) != N {
		return Relation{}, fmt.Errorf("relation %q has keys for %d examples, tokens has %d", *r.Name, len(r.Keys), N)
	}
	rel := Relation{Name: *r.Name, Keys: make([]int, 0, N*T)}
	for n, row := range r.Keys {
		if len(row) != T {
			return Relation{}, fmt.Errorf("relation %q: keys[%d] has %d entries, tokens has T = %d", *r.Name, n, len(row), T)
		}
		for i, s := range row {
			j, err := strconv.Atoi(string(s))
			if err != nil {
				return Relation{}, fmt.Errorf("relation %q: keys[%d][%d] = %q is not an integer in range", *r.Name, n, i, string(s))
			}
			rel.Keys = append(rel.Keys, j)
		}
	}
	return rel, nil
}

// WriteAttention writes a in the format ReadAttention reads, after
// validating it. Each probability is written as the shortest decimal that
// parses back to the same float32, so a write followed by a read is exact.
func WriteAttention(w io.Writer, a *Attention) error {
	if err := a.Validate(); err != nil {
		return fmt.Errorf("write attention: %w", err)
	}
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 64)
	buf = append(buf, `{"causal":`...)
	buf = strconv.AppendBool(buf, a.Causal)
	buf = append(buf, `,"tokens":[`...)
	bw.Write(buf)
	buf = writeRows(bw, buf, a.Tokens, a.N, a.T)
	bw.WriteString("],\n\"attention\":[")
	for n := 0; n < a.N; n++ {
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('[')
		for l := 0; l < a.L; l++ {
			if l > 0 {
				bw.WriteByte(',')
			}
			bw.WriteByte('[')
			for h := 0; h < a.H; h++ {
				if h > 0 {
					bw.WriteByte(',')
				}
				bw.WriteString("\n[")
				for i := 0; i < a.T; i++ {
					buf = buf[:0]
					if i > 0 {
						buf = append(buf, ',')
					}
					buf = append(buf, '[')
					for j, p := range a.row(n, l, h, i) {
						if j > 0 {
							buf = append(buf, ',')
						}
						buf = strconv.AppendFloat(buf, float64(p), 'g', -1, 32)
					}
					buf = append(buf, ']')
					bw.Write(buf)
				}
				bw.WriteByte(']')
			}
			bw.WriteByte(']')
		}
		bw.WriteByte(']')
	}
	bw.WriteByte(']')
	if len(a.Relations) > 0 {
		bw.WriteString(",\n\"relations\":[")
		for k, r := range a.Relations {
			if k > 0 {
				bw.WriteByte(',')
			}
			name, _ := json.Marshal(r.Name)
			bw.WriteString("\n{\"name\":")
			bw.Write(name)
			bw.WriteString(",\"keys\":[")
			buf = writeRows(bw, buf, r.Keys, a.N, a.T)
			bw.WriteString("]}")
		}
		bw.WriteByte(']')
	}
	bw.WriteString("}\n")
	// bufio keeps the first write error and reports it here.
	return bw.Flush()
}

// writeRows writes n rows of t integers of v as JSON arrays separated by
// commas (the rows of tokens and of relation keys), through buf, which it
// returns for reuse.
func writeRows(bw *bufio.Writer, buf []byte, v []int, n, t int) []byte {
	for r := 0; r < n; r++ {
		buf = buf[:0]
		if r > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '[')
		for i := 0; i < t; i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(v[r*t+i]), 10)
		}
		buf = append(buf, ']')
		bw.Write(buf)
	}
	return buf
}

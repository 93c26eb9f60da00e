package tasks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FilePrefix names a task read from a folder: `--task file:PATH`.
const FilePrefix = "file:"

// The files of a data folder (docs/tasks.md, "Tasks from your data"):
// train and heldout as JSONL, or as the safetensors or .npz arrays that
// `headlab dump` writes, and optionally the token names.
const (
	TrainFile   = "train"
	HeldOutFile = "heldout"
	VocabFile   = "vocab.txt"
)

// dataExts are the formats a data file may take, by extension.
var dataExts = []string{".jsonl", ".safetensors", ".npz"}

// Data is a task read from a folder: every example of its training and
// held-out files, validated when it is read. Training draws lines of
// train at random with the run's seed; the held-out stream runs through
// heldout's lines in order, from the first, and starts again after the
// last.
type Data struct {
	path    string
	t, v    int
	train   examples
	heldout examples
	names   []string // vocab.txt; nil without one
	hash    string
	answers []int
	chance  float64
	leaked  int
}

// examples are n sequences of one length, row-major.
type examples struct {
	n               int
	tokens, targets []int
}

// dataCache holds the folders read in this process, by path, with the
// size and time of each file, so that a folder is read once however
// often its task is asked for, and read again when a file changes.
var dataCache sync.Map // string -> cachedData

type cachedData struct {
	stamp string
	data  *Data
}

// ReadData reads and validates the folder path (`file:` left off). Any
// defect is one line naming the file, line and field.
func ReadData(path string) (*Data, error) {
	if path == "" {
		return nil, fmt.Errorf("--task file:PATH needs a folder after the prefix file")
	}
	trainPath, err := dataFile(path, TrainFile)
	if err != nil {
		return nil, err
	}
	heldPath, err := dataFile(path, HeldOutFile)
	if err != nil {
		return nil, err
	}
	vocabPath := filepath.Join(path, VocabFile)
	stamp := ""
	for _, p := range []string{trainPath, heldPath, vocabPath} {
		if fi, err := os.Stat(p); err == nil {
			stamp += fmt.Sprintf("%s %d %d;", p, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if c, ok := dataCache.Load(path); ok && c.(cachedData).stamp == stamp {
		return c.(cachedData).data, nil
	}
	d := &Data{path: path}
	if d.names, err = readNames(vocabPath); err != nil {
		return nil, err
	}
	if d.train, err = readExamples(trainPath); err != nil {
		return nil, err
	}
	if d.heldout, err = readExamples(heldPath); err != nil {
		return nil, err
	}
	if err := d.check(trainPath, heldPath); err != nil {
		return nil, err
	}
	dataCache.Store(path, cachedData{stamp, d})
	return d, nil
}

// dataFile is the one file of folder path named base with a data
// extension.
func dataFile(path, base string) (string, error) {
	var found []string
	for _, ext := range dataExts {
		p := filepath.Join(path, base+ext)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("--task file:%s: not a folder", path)
		}
		return "", fmt.Errorf("--task file:%s: no %s.jsonl (or %s.safetensors, %s.npz)", path, base, base, base)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("--task file:%s: both %s and %s: keep one", path, filepath.Base(found[0]), filepath.Base(found[1]))
}

// readNames reads vocab.txt, one token name a line; nil when absent.
func readNames(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	seen := map[string]int{}
	for i, n := range names {
		n = strings.TrimSuffix(n, "\r")
		names[i] = n
		if n == "" {
			return nil, fmt.Errorf("%s line %d: an empty token name", path, i+1)
		}
		if j, ok := seen[n]; ok {
			return nil, fmt.Errorf("%s line %d: token name %q is line %d's too", path, i+1, n, j+1)
		}
		seen[n] = i
	}
	if len(names) > MaxVocab {
		return nil, fmt.Errorf("%s: %d token names, at most %d", path, len(names), MaxVocab)
	}
	return names, nil
}

// readExamples reads one data file by its extension.
func readExamples(path string) (examples, error) {
	switch filepath.Ext(path) {
	case ".jsonl":
		return readJSONL(path)
	case ".safetensors":
		return readSafetensors(path)
	}
	return readNPZ(path)
}

// jsonLine is one line of a JSONL data file.
type jsonLine struct {
	Tokens  []int  `json:"tokens"`
	Targets []*int `json:"targets"`
}

// readJSONL reads one example a line: {"tokens": [...], "targets":
// [...]}, a target null where the position has no answer.
func readJSONL(path string) (examples, error) {
	var ex examples
	f, err := os.Open(path)
	if err != nil {
		return ex, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	line, T := 0, 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			return ex, fmt.Errorf("%s line %d: an empty line", path, line)
		}
		var l jsonLine
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return ex, fmt.Errorf("%s line %d: %v", path, line, jsonProblem(err))
		}
		if dec.More() {
			return ex, fmt.Errorf("%s line %d: more than one JSON value", path, line)
		}
		switch {
		case l.Tokens == nil:
			return ex, fmt.Errorf("%s line %d: field tokens is missing", path, line)
		case l.Targets == nil:
			return ex, fmt.Errorf("%s line %d: field targets is missing", path, line)
		case len(l.Tokens) == 0:
			return ex, fmt.Errorf("%s line %d: field tokens is empty", path, line)
		case len(l.Targets) != len(l.Tokens):
			return ex, fmt.Errorf("%s line %d: field targets has %d entries, tokens %d", path, line, len(l.Targets), len(l.Tokens))
		case T != 0 && len(l.Tokens) != T:
			return ex, fmt.Errorf("%s line %d: field tokens has %d tokens, line 1 has %d (every sequence has one length)", path, line, len(l.Tokens), T)
		}
		T = len(l.Tokens)
		ex.n++
		ex.tokens = append(ex.tokens, l.Tokens...)
		for i, y := range l.Targets {
			if y == nil {
				ex.targets = append(ex.targets, NoTarget)
				continue
			}
			if *y < 0 {
				return ex, fmt.Errorf("%s line %d: field targets[%d] is %d, want a token id or null", path, line, i, *y)
			}
			ex.targets = append(ex.targets, *y)
		}
	}
	if err := sc.Err(); err != nil {
		return ex, fmt.Errorf("%s line %d: %v", path, line+1, err)
	}
	return ex, nil
}

// jsonProblem says what is wrong with a line, without Go's type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %s holds a %s, want whole numbers", te.Field, te.Value)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + f + " (an example has tokens and targets)"
	}
	return "not JSON: " + err.Error()
}

// check validates d's examples together (one length, the vocabulary,
// answers) and derives what the task reports: its sizes, answer
// positions, chance floor, leakage and hash.
func (d *Data) check(trainPath, heldPath string) error {
	for _, f := range []struct {
		path string
		ex   examples
	}{{trainPath, d.train}, {heldPath, d.heldout}} {
		if f.ex.n == 0 {
			return fmt.Errorf("%s: no examples", f.path)
		}
		if !slices.ContainsFunc(f.ex.targets, func(y int) bool { return y != NoTarget }) {
			return fmt.Errorf("%s: no answer positions (every target is null)", f.path)
		}
	}
	d.t = len(d.train.tokens) / d.train.n
	if T := len(d.heldout.tokens) / d.heldout.n; T != d.t {
		return fmt.Errorf("%s %s 1: field tokens has %d tokens, %s's have %d (every sequence has one length)", heldPath, lineWord(heldPath), T, filepath.Base(trainPath), d.t)
	}
	if d.t > MaxSeqLen {
		return fmt.Errorf("%s %s 1: field tokens has %d tokens, at most %d", trainPath, lineWord(trainPath), d.t, MaxSeqLen)
	}
	// The vocabulary: vocab.txt's names, else every id the data holds.
	d.v = len(d.names)
	if d.names == nil {
		for _, ex := range []examples{d.train, d.heldout} {
			d.v = max(d.v, slices.Max(ex.tokens)+1, slices.Max(ex.targets)+1)
		}
		if d.v > MaxVocab {
			return fmt.Errorf("--task file:%s: token ids up to %d, at most %d without a %s", d.path, d.v-1, MaxVocab-1, VocabFile)
		}
	}
	for _, f := range []struct {
		path string
		ex   examples
	}{{trainPath, d.train}, {heldPath, d.heldout}} {
		for k, tok := range f.ex.tokens {
			for field, v := range map[string]int{"tokens": tok, "targets": f.ex.targets[k]} {
				if v < NoTarget || v >= d.v || (field == "tokens" && v < 0) {
					return fmt.Errorf("%s %s %d: field %s[%d] is %d, outside the vocabulary 0..%d%s", f.path, lineWord(f.path), k/d.t+1, field, k%d.t, v, d.v-1, d.vocabNote())
				}
			}
		}
	}
	seen := map[int]bool{}
	for _, ex := range []examples{d.train, d.heldout} {
		for k, y := range ex.targets {
			if y != NoTarget {
				seen[k%d.t] = true
			}
		}
	}
	for p := range d.t {
		if seen[p] {
			d.answers = append(d.answers, p)
		}
	}
	d.chance = d.guessAccuracy()
	d.leaked = d.leakage()
	d.hash = d.contentHash()
	return nil
}

// lineWord is what an example of the file at path is: a line of JSONL,
// a row of arrays.
func lineWord(path string) string {
	if filepath.Ext(path) == ".jsonl" {
		return "line"
	}
	return "row"
}

// vocabNote says where the vocabulary's size came from.
func (d *Data) vocabNote() string {
	if d.names != nil {
		return fmt.Sprintf(" (%s names %d tokens)", VocabFile, len(d.names))
	}
	return ""
}

// guessAccuracy is the chance floor: the held-out accuracy of the best
// context-free guess, the most frequent answer at each answer position
// of train (ties to the smaller id).
func (d *Data) guessAccuracy() float64 {
	counts := make([]map[int]int, d.t)
	for k, y := range d.train.targets {
		if y != NoTarget {
			if counts[k%d.t] == nil {
				counts[k%d.t] = map[int]int{}
			}
			counts[k%d.t][y]++
		}
	}
	guess := make([]int, d.t)
	for p, c := range counts {
		guess[p] = NoTarget
		for y, n := range c {
			if guess[p] == NoTarget || n > c[guess[p]] || n == c[guess[p]] && y < guess[p] {
				guess[p] = y
			}
		}
	}
	right, total := 0, 0
	for k, y := range d.heldout.targets {
		if y != NoTarget {
			total++
			if guess[k%d.t] == y {
				right++
			}
		}
	}
	return float64(right) / float64(total)
}

// leakage counts the held-out sequences whose tokens also occur in train.
func (d *Data) leakage() int {
	inTrain := map[string]bool{}
	for e := range d.train.n {
		inTrain[fmt.Sprint(d.train.tokens[e*d.t:(e+1)*d.t])] = true
	}
	n := 0
	for e := range d.heldout.n {
		if inTrain[fmt.Sprint(d.heldout.tokens[e*d.t:(e+1)*d.t])] {
			n++
		}
	}
	return n
}

// contentHash is the SHA-256 of what the data holds, whatever its
// format or place: the sizes, every example of both files and the token
// names.
func (d *Data) contentHash() string {
	h := sha256.New()
	put := func(v int) { _ = binary.Write(h, binary.LittleEndian, int64(v)) }
	put(d.t)
	put(d.v)
	for _, ex := range []examples{d.train, d.heldout} {
		put(ex.n)
		for k := range ex.tokens {
			put(ex.tokens[k])
			put(ex.targets[k])
		}
	}
	put(len(d.names))
	for _, n := range d.names {
		put(len(n))
		h.Write([]byte(n))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Name implements Task: file:PATH.
func (d *Data) Name() string { return FilePrefix + d.path }

// Vocab implements Task.
func (d *Data) Vocab() int { return d.v }

// SeqLen implements Task.
func (d *Data) SeqLen() int { return d.t }

// Chance implements Task: the best context-free guess (guessAccuracy).
func (d *Data) Chance() float64 { return d.chance }

// DefaultSteps implements Task.
func (d *Data) DefaultSteps() int { return 2000 }

// Describe implements Task.
func (d *Data) Describe() string {
	return fmt.Sprintf("%d training and %d held-out sequences of %d tokens over %d from %s (%s); %d held-out sequences also occur in training",
		d.train.n, d.heldout.n, d.t, d.v, d.path, d.hash[:len("sha256:")+12], d.leaked)
}

// AnswerPositions implements Task: every position with an answer in
// either file.
func (d *Data) AnswerPositions() []int { return d.answers }

// Sample implements Task: a training line drawn at random.
func (d *Data) Sample(rng *rand.Rand, tokens, targets []int) {
	k := rng.IntN(d.train.n)
	copy(tokens, d.train.tokens[k*d.t:(k+1)*d.t])
	copy(targets, d.train.targets[k*d.t:(k+1)*d.t])
}

// sampler implements splitter: the held-out and unseen streams run
// through heldout's lines in order.
func (d *Data) sampler(s Split) func(rng *rand.Rand, tokens, targets []int) {
	if s == Train {
		return d.Sample
	}
	next := 0
	return func(_ *rand.Rand, tokens, targets []int) {
		k := next % d.heldout.n
		next++
		copy(tokens, d.heldout.tokens[k*d.t:(k+1)*d.t])
		copy(targets, d.heldout.targets[k*d.t:(k+1)*d.t])
	}
}

// Hash is the SHA-256 of the data's content ("sha256:..."), the same for
// the same examples and names in any folder or format.
func (d *Data) Hash() string { return d.hash }

// Leakage is how many held-out sequences also occur in train.
func (d *Data) Leakage() int { return d.leaked }

// Names are vocab.txt's token names, nil without one.
func (d *Data) Names() []string { return d.names }

// sizes implements resizer: the data's own.
func (d *Data) sizes() string {
	s := fmt.Sprintf("only the data's --seq-len %d and --vocab %d", d.t, d.v)
	if d.names == nil {
		s = fmt.Sprintf("only the data's --seq-len %d and --vocab %d or more (no %s)", d.t, d.v, VocabFile)
	}
	return s
}

// resize implements resizer: a vocabulary larger than the ids the data
// holds, when no vocab.txt names it.
func (d *Data) resize(T, V int) (Task, error) {
	if T != d.t || d.names != nil || V < d.v {
		return nil, sizeError(d.Name(), d.sizes(), T, V)
	}
	n := *d
	n.v = V
	n.hash = n.contentHash()
	return &n, nil
}

// IsFile reports whether name is a task read from a folder.
func IsFile(name string) bool { return strings.HasPrefix(name, FilePrefix) }

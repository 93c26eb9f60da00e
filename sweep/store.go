package sweep

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/train"
)

// Statuses of a run.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Record is one finished run, a row of runs.
type Record struct {
	Key string `json:"config_key"`
	// Config is the run's training configuration, seed included.
	Config train.Config `json:"config"`
	// Status is StatusOK or StatusFailed; Error says why a run failed
	// (for a diverged run, the step and the loss). A failed run has no
	// results.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`

	Params    int     `json:"params"`
	Accuracy  float64 `json:"accuracy"` // held-out, all heads on
	Chance    float64 `json:"chance"`
	Loss      float64 `json:"loss"` // held-out, on the answers
	TrainLoss float64 `json:"train_loss"`
	// TrainAnswerLoss is the last training batch's loss on its answers
	// alone (TrainLoss itself under --loss answers).
	TrainAnswerLoss float64 `json:"train_answer_loss"`
	// Heads are every head's scores, label and accuracy with it alone
	// switched off, layer-major.
	Heads    []inspect.Head `json:"heads"`
	Ablation Ablation       `json:"ablation"`
	// AblationMethod is how Ablation switched heads off: zero (the
	// default, and every run stored before schema version 5), mean or
	// resample (sweep --ablation).
	AblationMethod inspect.Ablation `json:"ablation_method"`
	// Circuit reports whether the run formed the induction circuit
	// (see Record.FormsCircuit, analysis.FormsCircuit), by the joint
	// ablations of AblationMethod.
	Circuit bool `json:"circuit"`
	// LensLayer is the fewest blocks after which the logit lens reaches
	// 90% of the model's own held-out accuracy
	// (inspect.AttributionReport.LensLayer); ICL the in-context learning
	// score. Nil when not measured (Analysis).
	LensLayer *int     `json:"lens_layer,omitempty"`
	ICL       *float64 `json:"icl_score,omitempty"`
	// EdgeCircuit is the run's circuit as edges and its signature; nil
	// when not measured (MeasureSignature; every run stored before schema
	// version 7).
	EdgeCircuit *EdgeCircuit `json:"edge_circuit,omitempty"`

	// Timing: wall seconds of the whole run (training, evaluation,
	// analysis) and of training alone, and when it finished (RFC 3339,
	// UTC). They are the only fields that differ between two runs of the
	// same pair.
	Seconds      float64 `json:"seconds"`
	TrainSeconds float64 `json:"train_seconds"`
	FinishedAt   string  `json:"finished_at"`

	// Where it ran: the backend (cpu, gl), the GL renderer string, the
	// host's SIMD path, and how many models trained in its group. A
	// model's results do not depend on its group.
	Backend  string `json:"backend"`
	Renderer string `json:"renderer,omitempty"`
	SIMD     string `json:"simd"`
	Group    int    `json:"group_size"`

	// What ran it: headlab's module version and VCS revision
	// (internal/version); empty for runs stored before schema version 3.
	Version  string `json:"headlab_version"`
	Revision string `json:"revision"`

	// Remeasure is set on reading a run labelled by the first label rule
	// whose induction or previous-token heads changed under the revised
	// one: their joint ablation is unmeasured (relabelOnRead). Never
	// stored.
	Remeasure bool `json:"-"`
	// stored is such a record as its database holds it, which is what
	// is written when it is stored again (a merge), so that it stays
	// marked for measuring again.
	stored *Record
}

// Ablation is a run's ablation table: each head alone, then the heads of
// one label all at once (heads that duplicate each other can each look
// dispensable alone while the group is not).
type Ablation struct {
	Intact        float64  `json:"intact"`
	Single        []Single `json:"single"`
	Induction     Joint    `json:"induction"`
	PreviousToken Joint    `json:"previous_token"`
	// LabelRule is the rule the labels and the joint ablations above
	// follow (absent in a run stored before the revised rule: the first).
	LabelRule analysis.LabelRule `json:"label_rule,omitempty"`
	// FirstRule is the circuit under analysis.FirstRule's labels, kept so
	// that findings can show a verdict under both rules.
	FirstRule *RuleAblation `json:"first_rule,omitempty"`
}

// Single is held-out accuracy with one head switched off.
type Single struct {
	Head     string  `json:"head"`
	Label    string  `json:"label"`
	Accuracy float64 `json:"accuracy"`
}

// Joint is held-out accuracy with every head of one label switched off
// together; Accuracy is nil when no head carries the label.
type Joint struct {
	Heads    []string `json:"heads"`
	Accuracy *float64 `json:"accuracy"`
}

// RunID names a pair in a database.
type RunID struct {
	Key  string
	Seed uint64
}

// ID is the record's pair.
func (r *Record) ID() RunID { return RunID{r.Key, r.Config.Seed} }

// Store is a sweep database. Its methods may be called from several
// goroutines: they share one connection, one statement at a time.
type Store struct {
	db      *sql.DB
	path    string
	version int  // the file's schema version: schemaVersion once opened to write
	write   bool // opened by Create, in WAL mode
	note    string
	// relabel counts the runs read under an older label rule; replace
	// holds the ones a sweep trains again (see relabelOnRead).
	relabel relabelNote
	replace replacing
}

// Create opens the database at path to write: a new one when the file is
// absent or empty, else it must be a headlab sweep database (see
// describe), which it migrates to this schema version. Anything else is
// refused (ErrRefused) before SQLite writes a byte. The file is in WAL
// mode while it is open, so that readers and other sweeps work beside it;
// a busy database is waited for (10 s at a time).
func Create(path string) (*Store, error) { return openWrite(path, true) }

// openWrite is Create; without wal the file stays in rollback-journal
// mode (merge's output, written by one process).
func openWrite(path string, wal bool) (*Store, error) {
	fresh, walHdr, err := sniff(path)
	if err != nil {
		return nil, err
	}
	if !fresh {
		// Read-only first: a foreign file is refused untouched.
		db, _, err := openRead(path, walHdr)
		if err != nil {
			return nil, err
		}
		_, err = describe(db)
		db.Close()
		if err != nil {
			return nil, fmt.Errorf("database %s: %w", path, asRefusal(err))
		}
	}
	// synchronous=FULL: a committed run survives power loss, not only a
	// crash; the fsync per run costs nothing beside seconds of training.
	// _txlock=immediate: a write transaction takes the write lock at BEGIN,
	// where the busy timeout applies, rather than failing at its first
	// write when another process wrote in between.
	u, err := uri(path, "_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", u)
	if err != nil {
		return nil, fmt.Errorf("database %s: %v", path, err)
	}
	// One connection: the pragmas apply to all of it.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, version: schemaVersion, write: true}
	if err := s.init(wal); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return s, nil
}

// init checks the file again inside a write transaction (another process
// may have created it since), brings it to this schema version, and
// switches it to WAL.
func (s *Store) init(wal bool) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v, err := describe(tx)
	if err != nil {
		return err
	}
	if err := migrate(tx, v); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if !wal {
		return nil
	}
	if _, err := s.db.Exec("PRAGMA journal_mode = WAL"); err != nil {
		return err
	}
	// A read opens the log and its shared memory, which this connection
	// then holds while it is open: from here on, no other process can
	// take the file out of WAL mode (see Close) until this one closes.
	var n int
	return s.db.QueryRow("SELECT count(*) FROM claims").Scan(&n)
}

// asRefusal marks an error met while reading a file to check it as a
// refusal: a file SQLite cannot read is not a database headlab may open.
func asRefusal(err error) error {
	if errors.Is(err, ErrRefused) {
		return err
	}
	return refusef("not a readable SQLite database (%v)", err)
}

// OpenExisting opens a sweep database read-only: nothing on disk changes,
// not even beside the file (see openRead). A file that is absent, empty
// or not a headlab sweep database of this version or older is refused.
func OpenExisting(path string) (*Store, error) {
	fresh, wal, err := sniff(path)
	if err != nil {
		return nil, err
	}
	if fresh {
		if _, err := os.Stat(path); err != nil {
			return nil, refusef("database %s does not exist", path)
		}
		return nil, refusef("database %s is empty, not a sweep database", path)
	}
	db, note, err := openRead(path, wal)
	if err != nil {
		return nil, err
	}
	v, err := describe(db)
	if err == nil && v == 0 {
		err = refusef("not a headlab sweep database (it has no tables)")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, asRefusal(err))
	}
	return &Store{db: db, path: path, version: v, note: note}, nil
}

// Version is the file's schema version (this headlab's once opened to
// write).
func (s *Store) Version() int { return s.version }

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Note is a line worth telling the user about how the file was read
// (its log left unread; runs relabelled on read, once Records has read
// them), or "".
func (s *Store) Note() string {
	notes := []string{}
	for _, n := range []string{s.note, s.relabel.String()} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}

// Close closes the database. A store opened to write first tries to leave
// the file whole in rollback-journal mode (the log checkpointed into it,
// no -wal or -shm beside it), so that it can be read from a read-only
// place; that takes exclusive access, so while another process has the
// file open it stays in WAL mode, and the last one out does it.
func (s *Store) Close() error {
	if s.write {
		// Fail at once rather than wait for the other process.
		if _, err := s.db.Exec("PRAGMA busy_timeout = 0"); err == nil {
			var mode string
			_ = s.db.QueryRow("PRAGMA journal_mode = DELETE").Scan(&mode)
		}
	}
	return s.db.Close()
}

// Finished returns the status of every pair the database holds.
func (s *Store) Finished() (map[RunID]string, error) {
	rows, err := s.db.Query("SELECT config_key, seed, status FROM runs")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[RunID]string{}
	for rows.Next() {
		var id RunID
		var seed int64
		var st string
		if err := rows.Scan(&id.Key, &seed, &st); err != nil {
			return nil, err
		}
		id.Seed = uint64(seed)
		out[id] = st
	}
	return out, rows.Err()
}

// Check runs SQLite's integrity check and returns its complaint, if any.
func (s *Store) Check() error {
	var msg string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&msg); err != nil {
		return err
	}
	if msg != "ok" {
		return fmt.Errorf("database %s: integrity check: %s", s.path, msg)
	}
	return nil
}

// Backends lists the backends the database's runs used, sorted.
func (s *Store) Backends() ([]string, error) {
	if s.version < 2 {
		return []string{"cpu"}, nil
	}
	return strings1(s.db, "SELECT DISTINCT backend FROM runs ORDER BY backend")
}

// AblationMethods lists the methods the database's runs' ablation
// tables used (Record.AblationMethod), sorted.
func (s *Store) AblationMethods() ([]string, error) {
	if s.version < 5 {
		return []string{string(inspect.AblateZero)}, nil
	}
	return strings1(s.db, "SELECT DISTINCT ablation_method FROM runs ORDER BY ablation_method")
}

// Count is the number of rows in runs.
func (s *Store) Count() (int, error) {
	var n int
	err := s.db.QueryRow("SELECT count(*) FROM runs").Scan(&n)
	return n, err
}

// Put writes one record in its own transaction: once Put returns, the row
// is on disk. A pair already in the database is an error.
func (s *Store) Put(r *Record) error { return s.PutAll([]*Record{r}) }

// PutAll writes records in one transaction: all of them land, or none.
func (s *Store) PutAll(rs []*Record) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, r := range rs {
		if err := put(tx, r); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Delete removes the rows of ids (to rerun failed pairs).
func (s *Store) Delete(ids []RunID) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, id := range ids {
		if err := deleteRun(tx, id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// deleteRun removes the rows of one run, inside the caller's transaction.
func deleteRun(tx execer, id RunID) error {
	for _, q := range []string{"DELETE FROM runs WHERE config_key = ? AND seed = ?", "DELETE FROM heads WHERE config_key = ? AND seed = ?"} {
		if _, err := tx.Exec(q, id.Key, int64(id.Seed)); err != nil {
			return err
		}
	}
	return nil
}

func put(db execer, r *Record) error {
	if r.Remeasure && r.stored != nil {
		r = r.stored
	}
	c := r.Config
	cfg, err := json.Marshal(c)
	if err != nil {
		return err
	}
	args := []any{r.Key, int64(c.Seed), c.Task, c.Layers, c.Heads, c.DModel, c.DFF, c.Positions, c.Causal, c.Steps, c.Batch, c.LR,
		r.Status, r.Error}
	if r.Status == StatusOK {
		heads, err := json.Marshal(r.Heads)
		if err != nil {
			return err
		}
		abl, err := json.Marshal(r.Ablation)
		if err != nil {
			return err
		}
		args = append(args, r.Params, r.Accuracy, r.Chance, r.Loss, r.TrainLoss,
			strings.Join(r.Ablation.Induction.Heads, ","), nullable(r.Ablation.Induction.Accuracy),
			strings.Join(r.Ablation.PreviousToken.Heads, ","), nullable(r.Ablation.PreviousToken.Accuracy),
			r.Circuit, string(cfg), string(heads), string(abl))
	} else {
		args = append(args, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, string(cfg), nil, nil)
	}
	args = append(args, r.Seconds, nullIfFailed(r, r.TrainSeconds), r.FinishedAt,
		cmp.Or(r.Backend, "cpu"), r.Renderer, r.SIMD, max(r.Group, 1), r.Version, r.Revision,
		c.Loss, c.TrainExamples, c.WeightDecay, nullIfFailed(r, r.TrainAnswerLoss),
		string(r.method()), nullableInt(r.LensLayer), nullable(r.ICL),
		c.Sized().SeqLen, c.Sized().Vocab)
	sigArgs, err := r.EdgeCircuit.columns()
	if err != nil {
		return err
	}
	args = append(args, sigArgs...)
	_, err = db.Exec("INSERT INTO runs ("+runsColumns(schemaVersion)+") VALUES ("+strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")+")", args...)
	if err != nil {
		return fmt.Errorf("store seed %d of %s: %v", c.Seed, r.Key, err)
	}
	return putHeads(db, r.Key, c.Seed, r.Heads)
}

func nullable(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullableInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullIfFailed(r *Record, v float64) any {
	if r.Status != StatusOK {
		return nil
	}
	return v
}

// Records returns every row, ordered by configuration key and seed.
func (s *Store) Records() ([]Record, error) {
	rows, err := s.db.Query("SELECT " + runsColumns(s.version) + " FROM runs ORDER BY config_key, seed")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	s.relabel.reset()
	var out []Record
	for rows.Next() {
		r, err := scan(rows, s.version)
		if err != nil {
			return nil, fmt.Errorf("database %s: %v", s.path, err)
		}
		if relabelOnRead(&r) {
			s.relabel.add(&r)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scan(rows *sql.Rows, version int) (Record, error) {
	col := runColumns{method: string(inspect.AblateZero)}
	r := Record{Backend: "cpu", Group: 1}
	if err := rows.Scan(col.dest(&r, version)...); err != nil {
		return r, err
	}
	if err := col.fill(&r, version); err != nil {
		return r, fmt.Errorf("seed %d of %s: %v", col.seed, r.Key, err)
	}
	return r, nil
}

// runColumns are the columns of a runs row that do not scan straight
// into a Record: nullable, JSON, or of a later schema version.
type runColumns struct {
	seed                                   int64
	params                                 sql.NullInt64
	acc, chance, loss, tloss, indOff, pOff sql.NullFloat64
	indHeads, pHeads, heads, abl           sql.NullString
	circuit                                sql.NullBool
	tsecs, aloss, icl                      sql.NullFloat64
	lens                                   sql.NullInt64
	sig, circ                              sql.NullString
	method                                 string
	cfg                                    string
}

// dest lists where a row of schema version's columns (runsColumns) goes.
func (col *runColumns) dest(r *Record, version int) []any {
	c := &r.Config
	dst := []any{&r.Key, &col.seed, &c.Task, &c.Layers, &c.Heads, &c.DModel, &c.DFF, &c.Positions, &c.Causal, &c.Steps, &c.Batch, &c.LR,
		&r.Status, &r.Error, &col.params, &col.acc, &col.chance, &col.loss, &col.tloss,
		&col.indHeads, &col.indOff, &col.pHeads, &col.pOff, &col.circuit,
		&col.cfg, &col.heads, &col.abl, &r.Seconds, &col.tsecs, &r.FinishedAt}
	if version >= 2 {
		dst = append(dst, &r.Backend, &r.Renderer, &r.SIMD, &r.Group)
	}
	if version >= 3 {
		dst = append(dst, &r.Version, &r.Revision)
	}
	if version >= 4 {
		dst = append(dst, &c.Loss, &c.TrainExamples, &c.WeightDecay, &col.aloss)
	}
	if version >= 5 {
		dst = append(dst, &col.method, &col.lens, &col.icl)
	}
	if version >= 6 {
		dst = append(dst, &c.SeqLen, &c.Vocab)
	}
	if version >= 7 {
		dst = append(dst, &col.sig, &col.circ)
	}
	return dst
}

// fill completes r from the scanned columns; an error names the column.
func (col *runColumns) fill(r *Record, version int) error {
	var err error
	if r.EdgeCircuit, err = scanEdgeCircuit(col.sig, col.circ); err != nil {
		return err
	}
	c := &r.Config
	c.Seed = uint64(col.seed)
	// Fields with no column of their own (tied embeddings, no MLP), and before
	// version 4 the objective, come from the whole config kept beside the
	// columns (one of before version 4 reads as --loss answers).
	var whole train.Config
	if err := json.Unmarshal([]byte(col.cfg), &whole); err != nil {
		return fmt.Errorf("config_json: %v", err)
	}
	c.TiedEmbeddings, c.NoMLP = whole.TiedEmbeddings, whole.NoMLP
	if version < 4 {
		c.Loss, c.TrainExamples, c.WeightDecay = whole.Loss, whole.TrainExamples, whole.WeightDecay
		col.aloss = col.tloss
	}
	if version < 6 {
		c.SeqLen, c.Vocab = whole.SeqLen, whole.Vocab // the task's defaults
	}
	r.Params, r.Accuracy, r.Chance, r.Loss, r.TrainLoss = int(col.params.Int64), col.acc.Float64, col.chance.Float64, col.loss.Float64, col.tloss.Float64
	r.TrainAnswerLoss = col.aloss.Float64
	r.Circuit, r.TrainSeconds = col.circuit.Bool, col.tsecs.Float64
	r.AblationMethod = inspect.Ablation(col.method)
	if col.lens.Valid {
		l := int(col.lens.Int64)
		r.LensLayer = &l
	}
	if col.icl.Valid {
		r.ICL = &col.icl.Float64
	}
	return col.fillJSON(r)
}

// fillJSON decodes the heads and the ablation table kept as JSON.
func (col *runColumns) fillJSON(r *Record) error {
	if col.heads.Valid {
		if err := json.Unmarshal([]byte(col.heads.String), &r.Heads); err != nil {
			return fmt.Errorf("heads_json: %v", err)
		}
		// Heads stored before the sink had a field of its own.
		for i := range r.Heads {
			r.Heads[i].Sink = r.Heads[i].Scores[analysis.LabelAttentionSink]
		}
	}
	if col.abl.Valid {
		if err := json.Unmarshal([]byte(col.abl.String), &r.Ablation); err != nil {
			return fmt.Errorf("ablation_json: %v", err)
		}
	}
	return nil
}

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

	"headlab/inspect"
	"headlab/train"
)

// Statuses of a run.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// schemaVersion is stored in PRAGMA user_version; a database from a newer
// headlab is refused rather than misread.
// Version 2 added backend, renderer, simd and group_size; a version 1
// database gains them (as cpu, "", "", 1) when a sweep opens it to write,
// and reads as such.
const schemaVersion = 2

// schema is the table runs, documented column by column in docs/sweeps.md.
const schema = `
CREATE TABLE IF NOT EXISTS runs (
	config_key              TEXT    NOT NULL,
	seed                    INTEGER NOT NULL,
	task                    TEXT    NOT NULL,
	layers                  INTEGER NOT NULL,
	heads                   INTEGER NOT NULL,
	d_model                 INTEGER NOT NULL,
	d_ff                    INTEGER NOT NULL,
	positions               INTEGER NOT NULL,
	causal                  INTEGER NOT NULL,
	steps                   INTEGER NOT NULL,
	batch                   INTEGER NOT NULL,
	lr                      REAL    NOT NULL,
	status                  TEXT    NOT NULL CHECK (status IN ('ok', 'failed')),
	error                   TEXT    NOT NULL DEFAULT '',
	params                  INTEGER,
	accuracy                REAL,
	chance                  REAL,
	loss                    REAL,
	train_loss              REAL,
	induction_heads         TEXT,
	induction_off_accuracy  REAL,
	prev_token_heads        TEXT,
	prev_token_off_accuracy REAL,
	circuit                 INTEGER,
	config_json             TEXT    NOT NULL,
	heads_json              TEXT,
	ablation_json           TEXT,
	seconds                 REAL    NOT NULL,
	train_seconds           REAL,
	finished_at             TEXT    NOT NULL,
	backend                 TEXT    NOT NULL DEFAULT 'cpu',
	renderer                TEXT    NOT NULL DEFAULT '',
	simd                    TEXT    NOT NULL DEFAULT '',
	group_size              INTEGER NOT NULL DEFAULT 1,
	PRIMARY KEY (config_key, seed)
);
CREATE INDEX IF NOT EXISTS runs_task ON runs (task, positions, causal, layers, heads);
`

// columns is the order Put writes and scan reads.
const columns = `config_key, seed, task, layers, heads, d_model, d_ff, positions, causal, steps, batch, lr,
	status, error, params, accuracy, chance, loss, train_loss,
	induction_heads, induction_off_accuracy, prev_token_heads, prev_token_off_accuracy, circuit,
	config_json, heads_json, ablation_json, seconds, train_seconds, finished_at`

// platformColumns are version 2's, after columns.
const platformColumns = `, backend, renderer, simd, group_size`

// migrateV1 adds version 2's columns to a version 1 table.
const migrateV1 = `
ALTER TABLE runs ADD COLUMN backend TEXT NOT NULL DEFAULT 'cpu';
ALTER TABLE runs ADD COLUMN renderer TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN simd TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN group_size INTEGER NOT NULL DEFAULT 1;
`

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
	Loss      float64 `json:"loss"` // held-out
	TrainLoss float64 `json:"train_loss"`
	// Heads are every head's scores, label and accuracy with it alone
	// switched off, layer-major.
	Heads    []inspect.Head `json:"heads"`
	Ablation Ablation       `json:"ablation"`
	// Circuit reports whether the run formed the induction circuit
	// (see FormsCircuit).
	Circuit bool `json:"circuit"`

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
}

// Ablation is a run's ablation table: each head alone, then the heads of
// one label all at once (heads that duplicate each other can each look
// dispensable alone while the group is not).
type Ablation struct {
	Intact        float64  `json:"intact"`
	Single        []Single `json:"single"`
	Induction     Joint    `json:"induction"`
	PreviousToken Joint    `json:"previous_token"`
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

// Store is a sweep database. Its methods are not safe for concurrent use:
// a sweep writes through one goroutine.
type Store struct {
	db   *sql.DB
	path string
	v1   bool // a version 1 database opened to read: no platform columns
}

// Create opens the database at path, creating the file and the schema if
// needed.
func Create(path string) (*Store, error) { return open(path, true) }

// OpenExisting opens a database that must already exist and hold runs.
func OpenExisting(path string) (*Store, error) { return open(path, false) }

func open(path string, create bool) (*Store, error) {
	if strings.ContainsAny(path, "?#") || path == "" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("database path %q: want a plain file name", path)
	}
	if !create {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("database %s: %w", path, errors.Unwrap(err))
		}
	}
	// WAL: a reader (report, a progress check) never blocks the writer;
	// synchronous=FULL: a committed run survives power loss, not only a
	// crash. The fsync per run costs nothing beside seconds of training.
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: %v", path, err)
	}
	// One connection: one writer, and the pragmas apply to all of it.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path}
	if err := s.init(create); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %v", path, err)
	}
	return s, nil
}

func (s *Store) init(create bool) error {
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > schemaVersion {
		return fmt.Errorf("schema version %d is newer than this headlab's (%d)", v, schemaVersion)
	}
	if !create {
		var n int
		if err := s.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return errors.New("not a headlab sweep database (no table runs)")
		}
		s.v1 = v == 1
		return nil
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if v == 1 {
		if _, err := tx.Exec(migrateV1); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close checkpoints the write-ahead log and closes the database.
func (s *Store) Close() error { return s.db.Close() }

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
	if s.v1 {
		return []string{"cpu"}, nil
	}
	rows, err := s.db.Query("SELECT DISTINCT backend FROM runs ORDER BY backend")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
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
		if _, err := tx.Exec("DELETE FROM runs WHERE config_key = ? AND seed = ?", id.Key, int64(id.Seed)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

func put(db execer, r *Record) error {
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
		cmp.Or(r.Backend, "cpu"), r.Renderer, r.SIMD, max(r.Group, 1))
	_, err = db.Exec("INSERT INTO runs ("+columns+platformColumns+") VALUES ("+strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")+")", args...)
	if err != nil {
		return fmt.Errorf("store seed %d of %s: %v", c.Seed, r.Key, err)
	}
	return nil
}

func nullable(p *float64) any {
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
	cols := columns + platformColumns
	if s.v1 {
		cols = columns
	}
	rows, err := s.db.Query("SELECT " + cols + " FROM runs ORDER BY config_key, seed")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scan(rows, !s.v1)
		if err != nil {
			return nil, fmt.Errorf("database %s: %v", s.path, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scan(rows *sql.Rows, platform bool) (Record, error) {
	var (
		r                                      Record
		seed                                   int64
		params                                 sql.NullInt64
		acc, chance, loss, tloss, indOff, pOff sql.NullFloat64
		indHeads, pHeads, heads, abl           sql.NullString
		circuit                                sql.NullBool
		tsecs                                  sql.NullFloat64
		cfg                                    string
		c                                      = &r.Config
	)
	dst := []any{&r.Key, &seed, &c.Task, &c.Layers, &c.Heads, &c.DModel, &c.DFF, &c.Positions, &c.Causal, &c.Steps, &c.Batch, &c.LR,
		&r.Status, &r.Error, &params, &acc, &chance, &loss, &tloss,
		&indHeads, &indOff, &pHeads, &pOff, &circuit,
		&cfg, &heads, &abl, &r.Seconds, &tsecs, &r.FinishedAt}
	r.Backend, r.Group = "cpu", 1
	if platform {
		dst = append(dst, &r.Backend, &r.Renderer, &r.SIMD, &r.Group)
	}
	if err := rows.Scan(dst...); err != nil {
		return r, err
	}
	c.Seed = uint64(seed)
	r.Params, r.Accuracy, r.Chance, r.Loss, r.TrainLoss = int(params.Int64), acc.Float64, chance.Float64, loss.Float64, tloss.Float64
	r.Circuit, r.TrainSeconds = circuit.Bool, tsecs.Float64
	if heads.Valid {
		if err := json.Unmarshal([]byte(heads.String), &r.Heads); err != nil {
			return r, fmt.Errorf("seed %d of %s: heads_json: %v", seed, r.Key, err)
		}
	}
	if abl.Valid {
		if err := json.Unmarshal([]byte(abl.String), &r.Ablation); err != nil {
			return r, fmt.Errorf("seed %d of %s: ablation_json: %v", seed, r.Key, err)
		}
	}
	return r, nil
}

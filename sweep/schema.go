package sweep

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/tasks"
)

// schemaVersion is stored in PRAGMA user_version; a database from a newer
// headlab is refused rather than misread.
//
//	1: table runs.
//	2: runs gains backend, renderer, simd and group_size.
//	3: runs gains headlab_version and revision; tables heads (one row per
//	   head per run) and claims (work in progress, for concurrent sweeps).
//	4: runs gains objective (the training loss, --loss), train_examples,
//	   weight_decay and train_answer_loss; heads gains sink and rest_mass.
//	5: runs gains ablation_method, lens_layer and icl_score; heads gains
//	   mean_ablated_accuracy, resample_ablated_accuracy, direct_logit,
//	   ov_copying, ov_copy_accuracy and prefix_matching (Analysis).
//	6: runs gains seq_len and vocab (--seq-len, --vocab).
//	7: runs gains signature and circuit_json (MeasureSignature: the run's
//	   circuit by path patching and its signature, docs/circuits.md).
//
// A sweep that opens an older database to write migrates it (a version 1
// run reads as cpu, "", "", 1; versions and revisions are empty; heads are
// filled from heads_json; a run of before version 4 trained on the
// answers alone, on a fresh stream, without weight decay, and its answer
// loss is its training loss; a run of before version 5 ablated by zero
// and measured nothing of version 5's, which reads as NULL; a run of
// before version 6 has its task's default sizes; a run of before version 7
// has no signature, NULL); reading one changes nothing.
const schemaVersion = 7

// columns is the version 1 part of runs, in the order put writes and scan
// reads.
const columns = `config_key, seed, task, layers, heads, d_model, d_ff, positions, causal, steps, batch, lr,
	status, error, params, accuracy, chance, loss, train_loss,
	induction_heads, induction_off_accuracy, prev_token_heads, prev_token_off_accuracy, circuit,
	config_json, heads_json, ablation_json, seconds, train_seconds, finished_at`

// platformColumns are version 2's, after columns.
const platformColumns = `, backend, renderer, simd, group_size`

// provenanceColumns are version 3's, after platformColumns.
const provenanceColumns = `, headlab_version, revision`

// objectiveColumns are version 4's, after provenanceColumns.
const objectiveColumns = `, objective, train_examples, weight_decay, train_answer_loss`

// measureColumns are version 5's, after objectiveColumns.
const measureColumns = `, ablation_method, lens_layer, icl_score`

// sizeColumns are version 6's, after measureColumns.
const sizeColumns = `, seq_len, vocab`

// signatureColumns are version 7's, after sizeColumns.
const signatureColumns = `, signature, circuit_json`

// runsColumns lists the columns of runs in a database of version v.
func runsColumns(v int) string {
	switch {
	case v >= 7:
		return columns + platformColumns + provenanceColumns + objectiveColumns + measureColumns + sizeColumns + signatureColumns
	case v == 6:
		return columns + platformColumns + provenanceColumns + objectiveColumns + measureColumns + sizeColumns
	case v == 5:
		return columns + platformColumns + provenanceColumns + objectiveColumns + measureColumns
	case v == 4:
		return columns + platformColumns + provenanceColumns + objectiveColumns
	case v == 3:
		return columns + platformColumns + provenanceColumns
	case v == 2:
		return columns + platformColumns
	}
	return columns
}

// runsTable is table runs, documented column by column in docs/sweeps.md.
const runsTable = `
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
	headlab_version         TEXT    NOT NULL DEFAULT '',
	revision                TEXT    NOT NULL DEFAULT '',
	objective               TEXT    NOT NULL DEFAULT 'answers',
	train_examples          INTEGER NOT NULL DEFAULT 0,
	weight_decay            REAL    NOT NULL DEFAULT 0,
	train_answer_loss       REAL,
	ablation_method         TEXT    NOT NULL DEFAULT 'zero',
	lens_layer              INTEGER,
	icl_score               REAL,
	seq_len                 INTEGER NOT NULL DEFAULT 0,
	vocab                   INTEGER NOT NULL DEFAULT 0,
	signature               TEXT,
	circuit_json            TEXT,
	PRIMARY KEY (config_key, seed)
);
CREATE INDEX IF NOT EXISTS runs_task ON runs (task, positions, causal, layers, heads);
`

// claimsTable holds the pairs a sweep process is training: its owner
// (host:pid:nonce) and when its lease ends (Unix milliseconds). The owner
// renews its leases while it works; another process takes over a pair
// whose lease has ended or whose owner is dead.
const claimsTable = `
CREATE TABLE IF NOT EXISTS claims (
	config_key TEXT    NOT NULL,
	seed       INTEGER NOT NULL,
	owner      TEXT    NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (config_key, seed)
);
`

const claimsColumns = "config_key, seed, owner, expires_at"

// headColumn is one column of table heads: its name, SQL type and value
// for a head. Columns added later must be nullable: a database that
// lacks one gains it (ALTER TABLE ADD COLUMN) when a sweep opens it to
// write, and its old rows hold NULL there.
type headColumn struct {
	name, typ string
	value     func(*inspect.Head) any
}

// headColumns are table heads' columns after config_key and seed, and
// heads.csv's: the one place a field of inspect.Head becomes a column.
var headColumns = append([]headColumn{
	{"name", "TEXT NOT NULL", func(h *inspect.Head) any { return h.Name }},
	{"layer", "INTEGER NOT NULL", func(h *inspect.Head) any { return h.Layer }},
	{"head", "INTEGER NOT NULL", func(h *inspect.Head) any { return h.Head }},
	{"label", "TEXT", func(h *inspect.Head) any { return h.Label }},
	{"score", "REAL", func(h *inspect.Head) any { return h.Score }},
	{"sink", "REAL", func(h *inspect.Head) any { return h.Sink }},
	{"rest_mass", "REAL", func(h *inspect.Head) any { return nullable(h.RestMass) }},
	{"offset_d", "INTEGER", func(h *inspect.Head) any { return h.OffsetD }},
	{"position_j", "INTEGER", func(h *inspect.Head) any { return h.PositionJ }},
	{"ablated_accuracy", "REAL", func(h *inspect.Head) any { return h.AblatedAccuracy }},
	{"mean_ablated_accuracy", "REAL", func(h *inspect.Head) any { return ablatedBy(h, inspect.AblateMean) }},
	{"resample_ablated_accuracy", "REAL", func(h *inspect.Head) any { return ablatedBy(h, inspect.AblateResample) }},
	{"direct_logit", "REAL", func(h *inspect.Head) any { return nullable(h.DirectLogit) }},
	circuitColumn("ov_copying", func(c *inspect.Circuit) float64 { return c.OVCopying }),
	circuitColumn("ov_copy_accuracy", func(c *inspect.Circuit) float64 { return c.OVCopyAccuracy }),
	circuitColumn("prefix_matching", func(c *inspect.Circuit) float64 { return c.PrefixMatching }),
}, scoreColumns()...)

// ablatedBy is h's accuracy switched off alone by m, NULL when not
// measured.
func ablatedBy(h *inspect.Head, m inspect.Ablation) any {
	if v, ok := h.AblatedBy[m]; ok {
		return v
	}
	return nil
}

// circuitColumn is the column of one of a head's circuit scores, NULL
// where they were not measured.
func circuitColumn(name string, score func(*inspect.Circuit) float64) headColumn {
	return headColumn{name, "REAL", func(h *inspect.Head) any {
		if h.Circuit == nil {
			return nil
		}
		return score(h.Circuit)
	}}
}

// scoreColumns are score_<pattern>, one per name in analysis.Patterns
// (score_previous_token, ...), NULL where a head has no such score.
func scoreColumns() []headColumn {
	var cs []headColumn
	for _, p := range analysis.Patterns {
		cs = append(cs, headColumn{"score_" + strings.ReplaceAll(p, "-", "_"), "REAL", func(h *inspect.Head) any {
			if v, ok := h.Scores[p]; ok {
				return v
			}
			return nil
		}})
	}
	return cs
}

// headKey are the columns table heads must have to be headlab's.
var headKey = []string{"config_key", "seed", "layer", "head"}

// headsTable is table heads.
func headsTable() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS heads (\n\tconfig_key TEXT NOT NULL,\n\tseed INTEGER NOT NULL,\n")
	for _, c := range headColumns {
		fmt.Fprintf(&b, "\t%s %s,\n", c.name, c.typ)
	}
	b.WriteString("\tPRIMARY KEY (config_key, seed, layer, head)\n);\n")
	return b.String()
}

// migrations[v] takes a database from version v to v+1.
var migrations = map[int]string{
	1: `
ALTER TABLE runs ADD COLUMN backend TEXT NOT NULL DEFAULT 'cpu';
ALTER TABLE runs ADD COLUMN renderer TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN simd TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN group_size INTEGER NOT NULL DEFAULT 1;
`,
	2: `
ALTER TABLE runs ADD COLUMN headlab_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN revision TEXT NOT NULL DEFAULT '';
` + headsTable() + claimsTable,
	3: `
ALTER TABLE runs ADD COLUMN objective TEXT NOT NULL DEFAULT 'answers';
ALTER TABLE runs ADD COLUMN train_examples INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN weight_decay REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN train_answer_loss REAL;
UPDATE runs SET train_answer_loss = train_loss;
`,
	4: `
ALTER TABLE runs ADD COLUMN ablation_method TEXT NOT NULL DEFAULT 'zero';
ALTER TABLE runs ADD COLUMN lens_layer INTEGER;
ALTER TABLE runs ADD COLUMN icl_score REAL;
`,
	5: `
ALTER TABLE runs ADD COLUMN seq_len INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN vocab INTEGER NOT NULL DEFAULT 0;
` + defaultSizes(),
	6: `
ALTER TABLE runs ADD COLUMN signature TEXT;
ALTER TABLE runs ADD COLUMN circuit_json TEXT;
`,
}

// defaultSizes sets the sizes of every run stored before they were a
// choice: its task's default.
func defaultSizes() string {
	var b strings.Builder
	for _, name := range tasks.Names() {
		t, _ := tasks.New(name)
		fmt.Fprintf(&b, "UPDATE runs SET seq_len = %d, vocab = %d WHERE task = '%s';\n", t.SeqLen(), t.Vocab(), name)
	}
	return b.String()
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	querier
	Exec(query string, args ...any) (sql.Result, error)
}

// describe returns the schema version of the database behind q, 0 for an
// empty one (no tables, user_version 0), or a refusal when it is not a
// headlab sweep database: other tables, a table of another shape, or a
// newer version.
func describe(q querier) (int, error) {
	var v int
	if err := q.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return 0, err
	}
	tables, err := strings1(q, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name`)
	if err != nil {
		return 0, err
	}
	if v == 0 && len(tables) == 0 {
		return 0, nil
	}
	if v > schemaVersion {
		return 0, refusef("schema version %d is newer than this headlab's (%d)", v, schemaVersion)
	}
	if v < 1 {
		return 0, refusef("not a headlab sweep database (no schema version; tables %s)", strings.Join(tables, ", "))
	}
	want := map[string][]string{"runs": names(runsColumns(v))}
	if v >= 3 {
		want["heads"], want["claims"] = headKey, names(claimsColumns)
	}
	for _, t := range tables {
		if _, ok := want[t]; !ok {
			return 0, refusef("not a headlab sweep database (schema version %d has no table %s)", v, t)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(want)) {
		have, err := strings1(q, "SELECT name FROM pragma_table_info(?)", t)
		if err != nil {
			return 0, err
		}
		if len(have) == 0 {
			return 0, refusef("not a headlab sweep database (no table %s)", t)
		}
		for _, c := range want[t] {
			if !slices.Contains(have, c) {
				return 0, refusef("not a headlab sweep database (table %s has no column %s)", t, c)
			}
		}
		// heads may hold columns of a later headlab's head record.
		if t == "heads" {
			continue
		}
		for _, c := range have {
			if !slices.Contains(want[t], c) {
				return 0, refusef("not a headlab sweep database (table %s has a column %s that schema version %d lacks)", t, c, v)
			}
		}
	}
	return v, nil
}

// migrate brings a database of version v (0: empty) to schemaVersion,
// inside the caller's transaction: the schema, the heads of runs stored
// before table heads existed, and any head column added since.
func migrate(tx execer, v int) error {
	if v == 0 {
		if _, err := tx.Exec(runsTable + headsTable() + claimsTable); err != nil {
			return err
		}
	}
	for from := max(v, 1); v > 0 && from < schemaVersion; from++ {
		if _, err := tx.Exec(migrations[from]); err != nil {
			return fmt.Errorf("migrate schema version %d: %v", from, err)
		}
	}
	have, err := strings1(tx, "SELECT name FROM pragma_table_info('heads')")
	if err != nil {
		return err
	}
	for _, c := range headColumns {
		if !slices.Contains(have, c.name) {
			if _, err := tx.Exec(fmt.Sprintf("ALTER TABLE heads ADD COLUMN %s %s", c.name, strings.TrimSuffix(c.typ, " NOT NULL"))); err != nil {
				return err
			}
		}
	}
	if v > 0 && v < 3 {
		if err := fillHeads(tx); err != nil {
			return err
		}
	}
	if v > 0 && v < 4 {
		// The sink score had no column of its own.
		if _, err := tx.Exec("UPDATE heads SET sink = score_attention_sink WHERE sink IS NULL"); err != nil {
			return err
		}
	}
	if v == schemaVersion {
		return nil
	}
	_, err = tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
	return err
}

// fillHeads writes table heads for every run from its heads_json.
func fillHeads(tx execer) error {
	rows, err := tx.Query("SELECT config_key, seed, heads_json FROM runs WHERE heads_json IS NOT NULL")
	if err != nil {
		return err
	}
	type run struct {
		key   string
		seed  uint64
		heads []inspect.Head
	}
	var runs []run
	for rows.Next() {
		var r run
		var seed int64
		var js string
		if err := rows.Scan(&r.key, &seed, &js); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(js), &r.heads); err != nil {
			rows.Close()
			return fmt.Errorf("seed %d of %s: heads_json: %v", seed, r.key, err)
		}
		for i := range r.heads {
			r.heads[i].Sink = r.heads[i].Scores[analysis.LabelAttentionSink]
		}
		r.seed = uint64(seed)
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range runs {
		if err := putHeads(tx, r.key, r.seed, r.heads); err != nil {
			return err
		}
	}
	return nil
}

// putHeads writes one run's heads into table heads.
func putHeads(tx execer, key string, seed uint64, heads []inspect.Head) error {
	cols := []string{"config_key", "seed"}
	for _, c := range headColumns {
		cols = append(cols, c.name)
	}
	q := "INSERT INTO heads (" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	for i := range heads {
		args := []any{key, int64(seed)}
		for _, c := range headColumns {
			args = append(args, c.value(&heads[i]))
		}
		if _, err := tx.Exec(q, args...); err != nil {
			return fmt.Errorf("store heads of seed %d of %s: %v", seed, key, err)
		}
	}
	return nil
}

// names splits a column list.
func names(cols string) []string {
	var out []string
	for _, c := range strings.Split(cols, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// strings1 returns the first column of every row of a query.
func strings1(q querier, query string, args ...any) ([]string, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

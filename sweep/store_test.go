package sweep

import (
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"headlab/inspect"
	"headlab/tasks"
)

// schemaV2 is table runs as headlab wrote it at schema version 2, kept
// here so that the tests open real files of that version.
const schemaV2 = `
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

// schemaV1 is version 2's table without the platform columns.
func schemaV1() string {
	var kept []string
	for _, line := range strings.Split(schemaV2, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !slices.Contains([]string{"backend", "renderer", "simd", "group_size"}, f[0]) {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// rawDB runs statements on a new SQLite file at path (rollback journal,
// as any SQLite tool makes one).
func rawDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// fileSum is the SHA-256 of the file at path, or "absent".
func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// oldRow is a version 1 row of a finished run with two heads.
const oldRow = `INSERT INTO runs (` + columns + `) VALUES ('k', 1, 'majority', 1, 2, 32, 64, 1, 1, 2000, 32, 0.003, 'ok', '',
	100, 0.9, 0.5, 0.2, 0.3, '', NULL, '', NULL, 0, '{}',
	'[{"name":"L0H0","layer":0,"head":0,"label":"uniform","score":0.7,"scores":{"uniform":0.7,"induction":0.1},"offset_d":0,"position_j":0,"ablated_accuracy":0.8},
	  {"name":"L0H1","layer":0,"head":1,"label":"mirror","score":0.6,"scores":{"mirror":0.6},"offset_d":-2,"position_j":3,"ablated_accuracy":0.85}]',
	'{"intact":0.9}', 1.5, 1.0, '2026-01-01T00:00:00Z')`

// schemaV3 is the database of schema version 3: version 2's runs with
// its additions, and tables heads (without the sink and rest_mass of
// version 4) and claims.
func schemaV3() string {
	var heads []string
	for _, line := range strings.Split(headsTable(), "\n") {
		if f := strings.Fields(line); len(f) == 0 || f[0] != "sink" && f[0] != "rest_mass" {
			heads = append(heads, line)
		}
	}
	return schemaV2 + `
ALTER TABLE runs ADD COLUMN headlab_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN revision TEXT NOT NULL DEFAULT '';
` + strings.Join(heads, "\n") + claimsTable
}

// TestOlderDatabases: files of schema versions 1, 2 and 3 read as such,
// byte for byte untouched; a sweep that opens one to write migrates it to
// this version, filling table heads from heads_json, and goes on storing.
// Their runs trained on the answers alone: that is their objective, and
// their answer loss is their training loss.
func TestOlderDatabases(t *testing.T) {
	v3heads := `INSERT INTO heads (config_key, seed, name, layer, head, label, score, offset_d, position_j, ablated_accuracy, score_mirror, score_attention_sink)
		VALUES ('k', 1, 'L0H1', 0, 1, 'mirror', 0.6, -2, 3, 0.85, 0.6, 0.25)`
	for v, ddl := range map[int]string{1: schemaV1(), 2: schemaV2, 3: schemaV3()} {
		dir := t.TempDir()
		path := filepath.Join(dir, "old.db")
		stmts := []string{ddl, "PRAGMA user_version = " + strconv.Itoa(v), oldRow}
		if v == 3 {
			stmts = append(stmts, v3heads)
		}
		rawDB(t, path, stmts...)
		sum := fileSum(t, path)
		st, err := OpenExisting(path)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		recs, err := st.Records()
		st.Close()
		if err != nil || len(recs) != 1 || recs[0].Backend != "cpu" || recs[0].Group != 1 || recs[0].Seconds != 1.5 || len(recs[0].Heads) != 2 {
			t.Fatalf("version %d read as %+v, %v", v, recs, err)
		}
		if c := recs[0].Config; c.Loss != tasks.Answers || c.TrainExamples != 0 || c.WeightDecay != 0 || recs[0].TrainAnswerLoss != 0.3 {
			t.Errorf("version %d: objective read as %s, %d, %g, answer loss %g", v, c.Loss, c.TrainExamples, c.WeightDecay, recs[0].TrainAnswerLoss)
		}
		if fileSum(t, path) != sum || !slices.Equal(dirNames(t, dir), []string{"old.db"}) {
			t.Errorf("version %d: reading changed the file or left %v", v, dirNames(t, dir))
		}

		st, err = Create(path)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		r := Record{Key: "k", Config: recs[0].Config, Status: StatusFailed, Error: "y", FinishedAt: "z", Backend: "gl", Renderer: "r", SIMD: "go", Group: 4,
			Version: "v9", Revision: "abc"}
		r.Config.Seed = 2
		if err := st.Put(&r); err != nil {
			t.Fatal(err)
		}
		recs, err = st.Records()
		if err != nil || len(recs) != 2 {
			t.Fatalf("after the upgrade: %d records, %v", len(recs), err)
		}
		if g := recs[1]; g.Backend != "gl" || g.Renderer != "r" || g.SIMD != "go" || g.Group != 4 || g.Version != "v9" || g.Revision != "abc" ||
			recs[0].Backend != "cpu" || recs[0].Revision != "" {
			t.Errorf("version %d: columns read back as %+v and %+v", v, recs[0], g)
		}
		var uv int
		if err := st.db.QueryRow("PRAGMA user_version").Scan(&uv); err != nil || uv != schemaVersion {
			t.Errorf("user_version %d, %v", uv, err)
		}
		var name, label string
		var offset, pos int
		var mirror sql.NullFloat64
		var induction sql.NullFloat64
		if err := st.db.QueryRow(`SELECT name, label, offset_d, position_j, score_mirror, score_induction FROM heads WHERE seed = 1 AND layer = 0 AND head = 1`).
			Scan(&name, &label, &offset, &pos, &mirror, &induction); err != nil {
			t.Fatalf("version %d: heads not filled: %v", v, err)
		}
		if name != "L0H1" || label != "mirror" || offset != -2 || pos != 3 || mirror.Float64 != 0.6 || induction.Valid {
			t.Errorf("version %d: head row %s %s %d %d %v %v", v, name, label, offset, pos, mirror, induction)
		}
		var sink sql.NullFloat64
		var objective string
		var aloss float64
		if err := st.db.QueryRow(`SELECT sink FROM heads WHERE seed = 1 AND layer = 0 AND head = 1`).Scan(&sink); err != nil ||
			v == 3 && sink.Float64 != 0.25 || v < 3 && (!sink.Valid || sink.Float64 != 0) {
			t.Errorf("version %d: the sink column holds %v, %v", v, sink, err)
		}
		if err := st.db.QueryRow(`SELECT objective, train_answer_loss FROM runs WHERE seed = 1`).Scan(&objective, &aloss); err != nil ||
			objective != tasks.Answers || aloss != 0.3 {
			t.Errorf("version %d: the migrated run's objective %q, answer loss %v, %v", v, objective, aloss, err)
		}
		st.Close()
	}
}

// TestForeignFilesRefusedUntouched: a file that is not a headlab sweep
// database is refused by every opener, in one line, and stays as it was
// byte for byte, with nothing left beside it.
func TestForeignFilesRefusedUntouched(t *testing.T) {
	cases := map[string]func(path string){
		"text":         func(p string) { os.WriteFile(p, []byte("config_key,seed\nk,1\n"), 0o644) },
		"short":        func(p string) { os.WriteFile(p, []byte(sqliteMagic+"xx"), 0o644) },
		"other tables": func(p string) { rawDB(t, p, "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('mine')") },
		"runs, no ver": func(p string) { rawDB(t, p, schemaV2) },
		"runs shape":   func(p string) { rawDB(t, p, "CREATE TABLE runs (id INTEGER, seed INTEGER)", "PRAGMA user_version = 2") },
		"extra column": func(p string) {
			rawDB(t, p, schemaV2, "ALTER TABLE runs ADD COLUMN mine TEXT", "PRAGMA user_version = 2")
		},
		"extra table":   func(p string) { rawDB(t, p, schemaV2, "CREATE TABLE mine (x)", "PRAGMA user_version = 2") },
		"newer version": func(p string) { rawDB(t, p, schemaV2, "PRAGMA user_version = 99") },
		"wal foreign": func(p string) {
			rawDB(t, p, "PRAGMA journal_mode = WAL", "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('mine')")
		},
	}
	good := filepath.Join(t.TempDir(), "good.db")
	st, err := Create(good)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for name, make := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "x.db")
		make(path)
		sum, files := fileSum(t, path), dirNames(t, dir)
		openers := map[string]func() error{
			"Create":       func() error { s, err := Create(path); closeIf(s); return err },
			"OpenExisting": func() error { s, err := OpenExisting(path); closeIf(s); return err },
			"Merge input":  func() error { _, err := Merge(filepath.Join(dir, "out.db"), []string{good, path}); return err },
			"Merge output": func() error { _, err := Merge(path, []string{good}); return err },
		}
		for how, open := range openers {
			err := open()
			if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s, %s: %v, want one line of refusal", name, how, err)
			}
			if fileSum(t, path) != sum || !slices.Equal(dirNames(t, dir), files) {
				t.Errorf("%s, %s: the file changed, or the directory holds %v", name, how, dirNames(t, dir))
			}
		}
	}
}

func closeIf(s *Store) {
	if s != nil {
		s.Close()
	}
}

// TestNewFiles: an absent or empty file becomes a database; read-only
// openers refuse both and create nothing.
func TestNewFiles(t *testing.T) {
	dir := t.TempDir()
	absent, empty := filepath.Join(dir, "absent.db"), filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	for _, p := range []string{absent, empty} {
		before := fileSum(t, p)
		if _, err := OpenExisting(p); !errors.Is(err, ErrRefused) {
			t.Errorf("OpenExisting(%s): %v", p, err)
		}
		if _, err := Merge(filepath.Join(dir, "out.db"), []string{p}); !errors.Is(err, ErrRefused) {
			t.Errorf("Merge of %s: %v", p, err)
		}
		if fileSum(t, p) != before {
			t.Errorf("%s changed", p)
		}
	}
	if !slices.Equal(dirNames(t, dir), []string{"empty.db"}) {
		t.Errorf("refusals left %v", dirNames(t, dir))
	}
	for _, p := range []string{absent, empty} {
		st, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := st.Count(); err != nil || n != 0 {
			t.Errorf("%s: %d rows, %v", p, n, err)
		}
		st.Close()
	}
}

// walFlag reads the header byte that is 2 in WAL mode, 1 in rollback.
func walFlag(t *testing.T, path string) byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 100 {
		t.Fatalf("%s: %v", path, err)
	}
	return b[18]
}

// TestLastCloseLeavesOneFile: while two stores have the file open it is
// in WAL mode; the first to close leaves it so, the last checkpoints it
// and leaves it in rollback-journal mode with nothing beside it.
func TestLastCloseLeavesOneFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	a, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	k := knownRecords()
	if err := a.Put(&k[0]); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(&k[1]); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if walFlag(t, path) != 2 || !slices.Contains(dirNames(t, dir), "s.db-wal") {
		t.Fatalf("with b still open: flag %d, files %v", walFlag(t, path), dirNames(t, dir))
	}
	if n, err := b.Count(); err != nil || n != 2 {
		t.Fatalf("b sees %d rows, %v", n, err)
	}
	b.Close()
	if walFlag(t, path) != 1 || !slices.Equal(dirNames(t, dir), []string{"s.db"}) {
		t.Fatalf("after the last close: flag %d, files %v", walFlag(t, path), dirNames(t, dir))
	}
	st, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, _ := st.Count(); n != 2 {
		t.Errorf("%d rows after the checkpoint", n)
	}
}

// TestReadsShippedWALFile: a file left in WAL mode with no log beside it
// (as a database is shipped) is read with immutable=1: no -wal or -shm
// appears, and the bytes stay the same.
func TestReadsShippedWALFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "s.db")
	st, err := Create(src)
	if err != nil {
		t.Fatal(err)
	}
	k := knownRecords()
	if err := st.PutAll([]*Record{&k[0], &k[1]}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shipped.db")
	os.WriteFile(path, b, 0o444)
	if walFlag(t, path) != 2 {
		t.Fatal("the copy is not in WAL mode")
	}
	sum := fileSum(t, path)
	ro, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ro.Records()
	ro.Close()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if fileSum(t, path) != sum || !slices.Equal(dirNames(t, dir), []string{"shipped.db"}) {
		t.Errorf("reading changed the file, or left %v", dirNames(t, dir))
	}
}

// TestHeadsTableAndCSV: table heads holds one row per head per run with
// the head record's fields, and WriteCSV's files hold the same rows.
func TestHeadsTableAndCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	k := knownRecords()
	for i := range k {
		k[i].Revision = "rev" + strconv.Itoa(i)
		if err := st.Put(&k[i]); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := st.db.QueryRow("SELECT count(*) FROM heads").Scan(&n); err != nil || n != 16 {
		t.Fatalf("%d head rows, %v; want 4 runs x 4 heads", n, err)
	}
	var label string
	var abl float64
	var ind sql.NullFloat64
	if err := st.db.QueryRow("SELECT label, ablated_accuracy, score_induction FROM heads WHERE seed = 3 AND layer = 1 AND head = 0").Scan(&label, &abl, &ind); err != nil ||
		label != "induction" || abl != 0.97 || ind.Float64 != 0.9 {
		t.Errorf("seed 3 L1H0: %s %v %v, %v", label, abl, ind, err)
	}
	st.Close()
	ro, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	out := filepath.Join(dir, "csv")
	if err := ro.WriteCSV(out); err != nil {
		t.Fatal(err)
	}
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	runs, heads := read("runs.csv"), read("heads.csv")
	if len(runs) != 6 || len(heads) != 17 {
		t.Fatalf("%d run rows, %d head rows (headers included)", len(runs), len(heads))
	}
	col := func(rows [][]string, name string) int { return slices.Index(rows[0], name) }
	if col(runs, "heads_json") >= 0 || runs[1][col(runs, "revision")] != "rev0" || runs[1][col(runs, "accuracy")] != "0.99" ||
		runs[5][col(runs, "status")] != "failed" || runs[5][col(runs, "accuracy")] != "" {
		t.Errorf("runs.csv: %v", runs)
	}
	if h := heads[11]; h[col(heads, "seed")] != "3" || h[col(heads, "name")] != "L1H0" || h[col(heads, "score_induction")] != "0.9" || h[col(heads, "score_uniform")] != "" {
		t.Errorf("heads.csv row 11: %v of %v", h, heads[0])
	}
}

// TestCreateWaitsForABusyDatabase: a sweep that opens a database another
// process is writing waits for it rather than failing.
func TestCreateWaitsForABusyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	lock, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	lock.SetMaxOpenConns(1)
	tx, err := lock.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("DELETE FROM claims"); err != nil { // takes the write lock
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		s, err := Create(path)
		closeIf(s)
		opened <- err
	}()
	time.Sleep(200 * time.Millisecond)
	tx.Rollback()
	if err := <-opened; err != nil {
		t.Fatalf("Create on a busy database: %v", err)
	}
}

// version5 are the columns schema version 5 added, to runs and to heads.
var version5 = []string{"ablation_method", "lens_layer", "icl_score",
	"mean_ablated_accuracy", "resample_ablated_accuracy", "direct_logit", "ov_copying", "ov_copy_accuracy", "prefix_matching"}

// version6 are the columns schema version 6 added to runs.
var version6 = []string{"seq_len", "vocab"}

// version7 are the columns schema version 7 added to runs.
var version7 = []string{"signature", "circuit_json"}

// schemaV4 is the database of schema version 4: this version's tables
// without version 5's and 6's columns.
func schemaV4() string { return schemaWithout(slices.Concat(version5, version6, version7)) }

// schemaWithout is this version's tables without the columns dropped.
func schemaWithout(dropped []string) string {
	var kept []string
	for _, line := range strings.Split(runsTable+headsTable()+claimsTable, "\n") {
		if f := strings.Fields(line); len(f) == 0 || !slices.Contains(dropped, f[0]) {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// TestVersion5Sizes: a run of schema version 5 reads at its task's
// default sizes; a sweep that opens the file to write fills the new
// columns with them, and a run at other sizes stores and reads its own.
func TestVersion5Sizes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v5.db")
	rawDB(t, path, schemaWithout(slices.Concat(version6, version7)), "PRAGMA user_version = 5")
	old := knownRecords()[3]
	st, err := Create(filepath.Join(dir, "scratch.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(&old); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cols := strings.Join(names(runsColumns(5)), ", ")
	rawDB(t, path, "ATTACH DATABASE '"+filepath.Join(dir, "scratch.db")+"' AS s",
		"INSERT INTO runs ("+cols+") SELECT "+cols+" FROM s.runs",
		// the config_json a version-5 sweep wrote, without the sizes
		`UPDATE runs SET config_json = json_remove(config_json, '$.seq_len', '$.vocab')`)
	ro, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ro.Records()
	ro.Close()
	if err != nil || len(recs) != 1 || recs[0].Config.SeqLen != 16 || recs[0].Config.Vocab != 16 {
		t.Fatalf("a version-5 induction run reads as %+v, %v; want sizes 16, 16", recs, err)
	}
	st, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var T, V int
	if err := st.db.QueryRow(`SELECT seq_len, vocab FROM runs WHERE seed = 4`).Scan(&T, &V); err != nil || T != 16 || V != 16 {
		t.Errorf("the version-5 run after the upgrade: seq_len %d, vocab %d, %v", T, V, err)
	}
	big := knownRecords()[0]
	big.Config.SeqLen, big.Config.Vocab = 32, 64
	big.Key = Key(big.Config)
	if err := st.Put(&big); err != nil {
		t.Fatal(err)
	}
	recs, err = st.Records()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for _, r := range recs {
		if r.Key == big.Key && (r.Config.SeqLen != 32 || r.Config.Vocab != 64) {
			t.Errorf("a run at --seq-len 32 --vocab 64 reads back at %d, %d", r.Config.SeqLen, r.Config.Vocab)
		}
	}
}

// TestVersion4Database: a file of schema version 4 reads as it is, its
// runs with none of version 5's measurements (ablated by zero, NULL in
// the CSV files); a sweep that opens it to write adds the columns,
// stores measured runs beside the old ones, and both read back.
func TestVersion4Database(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v4.db")
	rawDB(t, path, schemaV4(), "PRAGMA user_version = 4")
	// The row a version-4 sweep stored: known seed 4, which has no
	// measurements, written with version 4's columns.
	old := knownRecords()[3]
	st, err := Create(filepath.Join(dir, "scratch.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(&old); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cols := strings.Join(names(runsColumns(4)), ", ")
	var hcols []string
	for _, c := range headColumns {
		if !slices.Contains(version5, c.name) {
			hcols = append(hcols, c.name)
		}
	}
	rawDB(t, path, "ATTACH DATABASE '"+filepath.Join(dir, "scratch.db")+"' AS s",
		"INSERT INTO runs ("+cols+") SELECT "+cols+" FROM s.runs",
		"INSERT INTO heads (config_key, seed, "+strings.Join(hcols, ", ")+") SELECT config_key, seed, "+strings.Join(hcols, ", ")+" FROM s.heads")
	sum := fileSum(t, path)
	ro, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	if ro.Version() != 4 {
		t.Errorf("version %d", ro.Version())
	}
	recs, err := ro.Records()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if r := recs[0]; r.AblationMethod != inspect.AblateZero || r.LensLayer != nil || r.ICL != nil || r.Measured() {
		t.Errorf("a version-4 run reads with %q, lens %v, ICL %v", r.AblationMethod, r.LensLayer, r.ICL)
	}
	if f, a, b := Differ(&old, &recs[0]); f != "" {
		t.Errorf("the version-4 run reads back with a different %s: %s, %s", f, a, b)
	}
	out := filepath.Join(dir, "csv")
	if err := ro.WriteCSV(out); err != nil {
		t.Fatal(err)
	}
	ro.Close()
	heads := readCSV(t, filepath.Join(out, "heads.csv"))
	for _, c := range version5[3:] {
		i := slices.Index(heads[0], c)
		if i < 0 || heads[1][i] != "" {
			t.Errorf("heads.csv of a version-4 database: column %s at %d in %v", c, i, heads[:2])
		}
	}
	if fileSum(t, path) != sum {
		t.Error("reading changed the file")
	}

	st, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fresh := knownRecords()[0]
	fresh.AblationMethod = inspect.AblateMean
	if err := st.Put(&fresh); err != nil {
		t.Fatal(err)
	}
	recs, err = st.Records()
	if err != nil || len(recs) != 2 {
		t.Fatalf("after the upgrade: %d records, %v", len(recs), err)
	}
	for i, want := range []Record{fresh, old} {
		if f, a, b := Differ(&want, &recs[i]); f != "" {
			t.Errorf("seed %d after the upgrade: %s %s vs %s", want.Config.Seed, f, a, b)
		}
	}
	var method string
	var lens sql.NullInt64
	var prefix, dla sql.NullFloat64
	if err := st.db.QueryRow(`SELECT ablation_method, lens_layer FROM runs WHERE seed = 4`).Scan(&method, &lens); err != nil || method != "zero" || lens.Valid {
		t.Errorf("the old run after the upgrade: %q %v, %v", method, lens, err)
	}
	if err := st.db.QueryRow(`SELECT ablation_method, lens_layer FROM runs WHERE seed = 1`).Scan(&method, &lens); err != nil || method != "mean" || lens.Int64 != int64(*fresh.LensLayer) {
		t.Errorf("the new run: %q %v, %v", method, lens, err)
	}
	if err := st.db.QueryRow(`SELECT prefix_matching, direct_logit FROM heads WHERE seed = 1 AND layer = 1 AND head = 1`).Scan(&prefix, &dla); err != nil ||
		prefix.Float64 != fresh.Heads[3].Circuit.PrefixMatching || dla.Float64 != *fresh.Heads[3].DirectLogit {
		t.Errorf("the new run's L1H1: prefix %v, logit %v, %v", prefix, dla, err)
	}
}

// readCSV reads a CSV file whole.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

package sweep

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"headlab/train"
)

// TestVersion1Database: a database written before the platform columns
// reads as CPU runs of group 1, and a sweep that opens it to write adds
// the columns and goes on storing into it.
func TestVersion1Database(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	// The version 1 schema: today's without the platform columns.
	v1 := schema
	for _, col := range []string{"backend", "renderer", "simd", "group_size"} {
		var kept []string
		for _, line := range strings.Split(v1, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), col+" ") {
				kept = append(kept, line)
			}
		}
		v1 = strings.Join(kept, "\n")
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	c := train.Defaults("majority")
	for _, q := range []string{v1, "PRAGMA user_version = 1",
		`INSERT INTO runs (` + columns + `) VALUES ('k', 1, 'majority', 2, 2, 32, 64, 1, 1, 2000, 32, 0.003, 'failed', 'x',
			NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{}', NULL, NULL, 1.5, NULL, '2026-01-01T00:00:00Z')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	st.Close()
	if err != nil || len(recs) != 1 || recs[0].Backend != "cpu" || recs[0].Group != 1 || recs[0].Seconds != 1.5 {
		t.Fatalf("read as version 1: %+v, %v", recs, err)
	}

	st, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := Record{Key: "k", Config: c, Status: StatusFailed, Error: "y", FinishedAt: "z", Backend: "gl", Renderer: "r", SIMD: "go", Group: 4}
	r.Config.Seed = 2
	if err := st.Put(&r); err != nil {
		t.Fatal(err)
	}
	recs, err = st.Records()
	if err != nil || len(recs) != 2 {
		t.Fatalf("after the upgrade: %d records, %v", len(recs), err)
	}
	if g := recs[1]; g.Backend != "gl" || g.Renderer != "r" || g.SIMD != "go" || g.Group != 4 || recs[0].Backend != "cpu" {
		t.Errorf("platform columns read back as %+v and %+v", recs[0], g)
	}
	if bs, err := st.Backends(); err != nil || strings.Join(bs, ",") != "cpu,gl" {
		t.Errorf("backends %v, %v", bs, err)
	}
	var v int
	if err := st.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
		t.Errorf("user_version %d, %v", v, err)
	}
}

package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/sweep"
)

// TestAtlasOfATinySweep: atlas reads a sweep's signatures and prints
// every configuration's mechanisms with shares and representative seeds;
// its JSON, CSV and figure agree with it; every signed seed lands in
// exactly one mechanism.
func TestAtlasOfATinySweep(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if code, _, errs := headlab(t, args("--seeds", "1-4", "--workers", "1", "--db", db)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	code, out, errs := headlab(t, "atlas", "--db", db)
	if code != 0 {
		t.Fatalf("atlas: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "4 signed runs") || !strings.Contains(out, "mechanism 1: ") || !strings.Contains(out, "representative seed ") {
		t.Errorf("atlas printed:\n%s", out)
	}
	csvPath, fig := filepath.Join(dir, "atlas.csv"), filepath.Join(dir, "atlas.svg")
	code, out, errs = headlab(t, "atlas", "--db", db, "--json", "--csv", csvPath, "--figure", fig)
	if code != 0 {
		t.Fatalf("atlas --json: exit %d: %s", code, errs)
	}
	var rep atlasReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Configs) != 1 {
		t.Fatalf("atlas --json: %v: %s", err, out)
	}
	ca := rep.Configs[0]
	seen := map[uint64]bool{}
	total := 0
	for _, m := range ca.Mechanisms {
		total += m.Runs
		if m.ShareLow > m.Share || m.Share > m.ShareHigh || m.Share != float64(m.Runs)/4 {
			t.Errorf("mechanism %q: share %v in [%v, %v] of %d runs", m.Signature, m.Share, m.ShareLow, m.ShareHigh, m.Runs)
		}
		for _, s := range m.Seeds {
			if seen[s] {
				t.Errorf("seed %d in two mechanisms", s)
			}
			seen[s] = true
		}
		if len(m.Seeds) == 0 || m.Representative < m.Seeds[0] {
			t.Errorf("mechanism %q: representative %d of seeds %v", m.Signature, m.Representative, m.Seeds)
		}
	}
	if ca.Signed != 4 || total != 4 || len(seen) != 4 {
		t.Errorf("%d signed, %d runs in mechanisms, %d seeds", ca.Signed, total, len(seen))
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 1+len(ca.Mechanisms) || strings.Join(rows[0], ",") != strings.Join(sweep.AtlasCSVHeader, ",") || rows[1][2] != ca.Mechanisms[0].Signature {
		t.Errorf("atlas.csv: %v, %v", rows, err)
	}
	if b, err := os.ReadFile(fig); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("figure: %v", err)
	}
}

// TestAtlasRefusesBadInput: a database with no signatures, an unknown
// configuration, a missing --db or figure format: one line, exit 2,
// nothing written.
func TestAtlasRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.db")
	if code, _, errs := headlab(t, args("--seeds", "1", "--workers", "1", "--measure", "none", "--db", plain)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	out := filepath.Join(dir, "out.csv")
	for name, a := range map[string][]string{
		"no signatures":  {"atlas", "--db", plain, "--csv", out},
		"unknown config": {"atlas", "--db", plain, "--config", "task=none", "--csv", out},
		"no --db":        {"atlas", "--csv", out},
		"missing db":     {"atlas", "--db", filepath.Join(dir, "absent.db"), "--csv", out},
		"figure format":  {"atlas", "--db", plain, "--figure", filepath.Join(dir, "a.gif")},
	} {
		code, stdout, errs := headlab(t, a...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, stdout, errs)
		}
		if name == "no signatures" && !strings.Contains(errs, "no circuit signature") {
			t.Errorf("no signatures: %q", errs)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: wrote %s", name, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.db")); err == nil {
		t.Error("a missing database was created")
	}
}

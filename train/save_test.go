package train

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"headlab/backend/cpu"
)

// twoModels trains two small models that differ (seeds 1 and 2).
func twoModels(t *testing.T) [2]*Model {
	t.Helper()
	var ms [2]*Model
	for i := range ms {
		c := Defaults("majority")
		c.Steps, c.Seed = 2, uint64(i+1)
		m, _, err := Run(c, cpu.New(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	return ms
}

// TestSaveHelperProcess saves the two models over HEADLAB_SAVE_DIR, one
// after the other, until it is killed.
func TestSaveHelperProcess(t *testing.T) {
	dir := os.Getenv("HEADLAB_SAVE_DIR")
	if dir == "" {
		return
	}
	ms := twoModels(t)
	os.WriteFile(dir+".ready", nil, 0o644)
	for i := 0; ; i++ {
		if err := Save(dir, ms[i%2], nil); err != nil {
			t.Fatal(err)
		}
	}
}

// sameWeights reports whether m holds exactly w's weights.
func sameWeights(m, w *Model) bool {
	for i, p := range m.Weights.Params {
		if !slices.Equal(p.Data, w.Weights.Params[i].Data) {
			return false
		}
	}
	return true
}

// TestKillDuringSave kills (SIGKILL) a process that saves checkpoints in
// a loop, 12 times at random moments: after each kill the checkpoint
// loads whole, as one of the two models, and the next save leaves no
// temporary directory behind.
func TestKillDuringSave(t *testing.T) {
	ms := twoModels(t)
	dir := filepath.Join(t.TempDir(), "run")
	if err := Save(dir, ms[0], nil); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	leftovers := 0
	for kill := 0; kill < 12; kill++ {
		os.Remove(dir + ".ready")
		cmd := exec.Command(os.Args[0], "-test.run=^TestSaveHelperProcess$")
		cmd.Env = append(os.Environ(), "HEADLAB_SAVE_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Stat(dir + ".ready"); err == nil {
				break
			}
		}
		time.Sleep(time.Duration(r.IntN(30000)) * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()
		m, _, err := Load(dir)
		if err != nil {
			t.Fatalf("kill %d: the checkpoint does not load: %v", kill, err)
		}
		if !sameWeights(m, ms[0]) && !sameWeights(m, ms[1]) {
			t.Fatalf("kill %d: the checkpoint holds neither model", kill)
		}
		if len(temporaries(t, dir)) > 0 {
			leftovers++
		}
	}
	// Most kills land mid-save (the loop does nothing else), so some
	// temporary directories were left: the next save removes them all.
	if leftovers == 0 {
		t.Fatal("no kill left a temporary directory: the test did not kill a save mid-way")
	}
	if err := Save(dir, ms[1], nil); err != nil {
		t.Fatal(err)
	}
	if left := temporaries(t, dir); len(left) > 0 {
		t.Fatalf("after the next save: %v", left)
	}
}

// temporaries lists what a save of dir may leave beside it.
func temporaries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+filepath.Base(dir)+".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSaveKeepsALiveSavesTemporary: a temporary directory whose owner
// is alive (this test's parent process) is left alone, one of a dead
// process is removed, and one without a PID goes only once it is old.
func TestSaveKeepsALiveSavesTemporary(t *testing.T) {
	ms := twoModels(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(parent, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, WeightsFile), []byte("half"), 0o644)
		when := time.Now().Add(-age)
		os.Chtimes(p, when, when)
		return name
	}
	live := mk(".run.tmp-"+itoa(os.Getppid())+"-123", 48*time.Hour)
	gone := mk(".run.tmp-"+itoa(dead.Process.Pid)+"-456", 0)
	legacyOld := mk(".run.tmp-789", 2*time.Hour)
	legacyNew := mk(".run.tmp-790", 0)
	other := mk(".other.tmp-1-1", 48*time.Hour) // another checkpoint's
	if err := Save(dir, ms[0], nil); err != nil {
		t.Fatal(err)
	}
	left := temporaries(t, dir)
	want := []string{legacyNew, live}
	slices.Sort(left)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v (removed %s and %s)", left, want, gone, legacyOld)
	}
	if _, err := os.Stat(filepath.Join(parent, other)); err != nil {
		t.Fatalf("another checkpoint's temporary was removed: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzOpen gives the database openers arbitrary bytes as a file: nothing
// panics; a refusal is one line and leaves the file as it was, with
// nothing beside it; reading never changes the file; a file Create
// accepts is a headlab database afterwards. Its corpus (testdata/fuzz)
// holds small databases of each version, foreign ones and text.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("config_key,seed\n"))
	f.Add([]byte(sqliteMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		unchanged := func(what string) {
			t.Helper()
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(data) {
				t.Fatalf("%s changed the file", what)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"f.db"}) {
				t.Fatalf("%s left %v", what, names)
			}
		}
		oneLine := func(what string, err error) {
			t.Helper()
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: %q is not one line", what, err)
			}
		}
		if st, err := OpenExisting(path); err == nil {
			_, _ = st.Records() // a bad row is an error, never a panic
			st.Close()
		} else {
			oneLine("OpenExisting", err)
		}
		unchanged("OpenExisting")

		st, err := Create(path)
		if err != nil {
			oneLine("Create", err)
			if errors.Is(err, ErrRefused) {
				unchanged("a refused Create")
			}
			return
		}
		st.Close()
		ro, err := OpenExisting(path)
		if err != nil {
			t.Fatalf("Create accepted the file, but it is not a headlab database afterwards: %v", err)
		}
		ro.Close()
	})
}

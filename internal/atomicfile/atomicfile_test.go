package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	// A failing writer leaves the earlier file untouched and no temporary.
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("boom")
	})
	if err == nil {
		t.Fatal("failing write reported success")
	}
	got, _ := os.ReadFile(path)
	if string(got) != "first" {
		t.Fatalf("file holds %q after a failed write", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d entries in the directory, want 1", len(entries))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if err := Write(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil }); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func failing(w io.Writer) error {
	io.WriteString(w, "half")
	return errors.New("boom")
}

func TestDashIsStdout(t *testing.T) {
	var out bytes.Buffer
	if err := WriteStdout("-", &out, writeString("to stdout")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "to stdout" {
		t.Fatalf("stdout got %q", out.String())
	}
	out.Reset()
	if err := WriteStdout("-", &out, failing); err == nil || out.Len() != 0 {
		t.Fatalf("failed write: err %v, stdout got %q", err, out.String())
	}
	if _, err := os.Stat("-"); !os.IsNotExist(err) {
		t.Fatal(`a file named "-" was made`)
	}
}

// A pipe reached by name, and one reached through a descriptor link as
// /dev/stdout is, are written through, and stay what they were.
func TestWritesInPlaceToAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := Write(fifo, writeString("through the fifo")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the fifo" {
		t.Fatalf("reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the fifo was replaced: %v %v", fi.Mode(), err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, writeString("through the descriptor")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, _ := io.ReadAll(r)
	if string(b) != "through the descriptor" {
		t.Fatalf("pipe got %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
}

// A link to a regular file keeps being a link; the file it names is
// replaced whole.
func TestFollowsLinkToRegularFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	os.WriteFile(real, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Fatalf("target holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
}

// InPlace tells the paths written in place (which have no extension to
// choose a format by) from those replaced through a rename.
func TestInPlace(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "f.txt")
	os.WriteFile(regular, []byte("x"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	toRegular := filepath.Join(dir, "link")
	os.Symlink("f.txt", toRegular)
	// A descriptor link whose descriptor is a regular file: as
	// /dev/stdout is under `> file`.
	f, err := os.Open(regular)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byFD := filepath.Join(dir, "fd")
	os.Symlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), byFD)
	for path, want := range map[string]bool{
		"-": true, "/dev/null": true, fifo: true, byFD: true,
		regular: false, toRegular: false, filepath.Join(dir, "missing"): false, dir: false,
	} {
		if got := InPlace(path); got != want {
			t.Errorf("InPlace(%s) = %v, want %v", path, got, want)
		}
	}
}

// TestRemoveTemporaries: what a process exiting on a signal calls. The
// temporary file of a Write in progress and the temporary directory of a
// ReplaceDir in progress are removed; the destinations keep what they
// held.
func TestRemoveTemporaries(t *testing.T) {
	dir := t.TempDir()
	file, ckpt := filepath.Join(dir, "f.txt"), filepath.Join(dir, "run")
	if err := os.WriteFile(file, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceDir(ckpt, func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "a"), []byte("old"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	Write(file, func(w io.Writer) error {
		w.Write([]byte("half"))
		RemoveTemporaries()
		return nil
	})
	ReplaceDir(ckpt, func(tmp string) error {
		os.WriteFile(filepath.Join(tmp, "a"), []byte("half"), 0o644)
		RemoveTemporaries()
		return nil
	})
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "f.txt" || names[1] != "run" {
		t.Errorf("left %v, want only f.txt and run", names)
	}
	if b, _ := os.ReadFile(file); string(b) != "old" {
		t.Errorf("f.txt holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ckpt, "a")); string(b) != "old" {
		t.Errorf("run/a holds %q", b)
	}
}

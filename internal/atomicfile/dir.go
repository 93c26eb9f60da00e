package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// StaleAge is how old a temporary directory whose owner is unknown (made
// by an earlier headlab, without a PID in its name) must be before
// ReplaceDir removes it.
const StaleAge = time.Hour

// ReplaceDir makes dir hold exactly what fill writes into the directory
// it is given, in one step: fill writes into a temporary directory beside
// dir (.NAME.tmp-PID-N), every file there and the directory are fsynced,
// and it is swapped into dir's place with one renameat2(RENAME_EXCHANGE)
// (a plain rename when dir is new), then the parent is fsynced and the
// old contents removed. A crash at any moment leaves dir whole, old or
// new. Temporary directories that earlier crashes left beside dir are
// removed first, but only those whose owner process is dead (or, without
// a PID, that are older than StaleAge): never one a live save writes.
func ReplaceDir(dir string, fill func(tmp string) error) (err error) {
	dir = filepath.Clean(dir)
	parent, base := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	RemoveStale(parent, base)
	tmp, err := os.MkdirTemp(parent, tempPrefix(base)+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // on success it holds the old contents
	defer track(tmp)()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := syncTree(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		err = os.Rename(tmp, dir)
		if err != nil {
			return err
		}
	} else if err := exchange(tmp, dir); err != nil {
		return err
	}
	return syncDir(parent)
}

// exchange swaps the directories a and b, atomically where the kernel
// and filesystem can (renameat2 RENAME_EXCHANGE), else with two renames,
// between which b is briefly missing.
func exchange(a, b string) error {
	err := renameExchange(a, b)
	if err == nil || !(errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)) {
		return err
	}
	old := a + ".old"
	if err := os.Rename(b, old); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		os.Rename(old, b) // put the previous one back
		return err
	}
	return os.Rename(old, a) // a now holds the old contents, as after an exchange
}

func tempPrefix(base string) string { return "." + base + ".tmp-" }

// RemoveStale removes the temporary directories of ReplaceDir(parent/base)
// whose owner is gone, and returns their names.
func RemoveStale(parent, base string) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	prefix := tempPrefix(base)
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		name = strings.TrimSuffix(name, ".old")
		stale := false
		if pidText, _, withPID := strings.Cut(name, "-"); withPID {
			pid, err := strconv.Atoi(pidText)
			stale = err == nil && pid > 0 && pid != os.Getpid() && !alive(pid)
		} else if fi, err := e.Info(); err == nil {
			stale = time.Since(fi.ModTime()) > StaleAge
		}
		if stale && os.RemoveAll(filepath.Join(parent, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// alive reports whether process pid exists (EPERM: it does, not ours).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// syncTree fsyncs every file and directory under root, root last.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %v", p, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

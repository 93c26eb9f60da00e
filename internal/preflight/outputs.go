package preflight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"headlab/internal/atomicfile"
	"headlab/train"
)

// Output is one path a command will write: a file (replaced whole), a
// directory it fills (created if missing), a checkpoint directory or a
// database; Flag names it in messages.
type Output struct {
	Flag, Path string
	kind       outKind
}

type outKind int

const (
	outFile       outKind = iota // replaced through a temporary file beside it
	outDir                       // created if missing, files written inside
	outCheckpoint                // train --save: replaced whole beside it
	outDatabase                  // a SQLite file, opened and written in its directory
)

// File, Dir, Checkpoint and Database are outputs of each kind.
func File(flag, path string) Output       { return Output{flag, path, outFile} }
func Dir(flag, path string) Output        { return Output{flag, path, outDir} }
func Checkpoint(flag, path string) Output { return Output{flag, path, outCheckpoint} }
func Database(flag, path string) Output   { return Output{flag, path, outDatabase} }

// what names an output's kind in messages.
func (k outKind) what() string {
	switch k {
	case outDatabase:
		return "a database"
	case outFile:
		return "a file"
	}
	return "a directory"
}

// Outputs refuses any output that could not be written: a file path that
// is a directory or a device, a directory path that is a file, a missing
// or unwritable parent, two outputs on stdout. Empty paths are not asked
// for and pass.
func Outputs(outs ...Output) error {
	first := ""
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		if ToStdout(o.Path) {
			if o.kind != outFile {
				return Refusef("--%s %s: names %s, which cannot be written to stdout", o.Flag, o.Path, o.kind.what())
			}
			if first != "" {
				return Refusef("--%s and --%s both write to stdout; give one of them a file", first, o.Flag)
			}
			first = o.Flag
		}
		if err := o.check(); err != nil {
			return Refusef("--%s %s: %v", o.Flag, o.Path, err)
		}
	}
	return nil
}

// ToStdout reports whether path writes to standard output: "-", or a name
// of the same file, such as /dev/stdout.
func ToStdout(path string) bool {
	if path == atomicfile.Stdio {
		return true
	}
	if path == "" || !atomicfile.InPlace(path) {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	out, err := os.Stdout.Stat()
	return err == nil && os.SameFile(fi, out)
}

func (o Output) check() error {
	fi, err := os.Stat(o.Path)
	exists := err == nil
	if err != nil && !missing(err) {
		return err
	}
	switch o.kind {
	case outFile, outDatabase:
		return o.checkFile(fi, exists)
	case outCheckpoint:
		if err := train.CheckSaveDir(o.Path); err != nil {
			return err
		}
		return writableDir(filepath.Dir(filepath.Clean(o.Path)), true)
	default:
		if exists {
			if !fi.IsDir() {
				return errors.New("is not a directory")
			}
			return writableDir(o.Path, false)
		}
		return writableDir(filepath.Dir(filepath.Clean(o.Path)), true)
	}
}

// checkFile is check for a file or a database, fi its stat when exists.
func (o Output) checkFile(fi os.FileInfo, exists bool) error {
	if o.Path == atomicfile.Stdio {
		return nil
	}
	if exists && fi.IsDir() {
		return errors.New("is a directory, want a file")
	}
	if exists && !fi.Mode().IsRegular() {
		// A device or a pipe is written in place (atomicfile). It is not
		// opened to try it: closing a pipe's only writer ends its
		// reader's input.
		return unix.Access(o.Path, unix.W_OK)
	}
	if exists && o.kind == outDatabase {
		// SQLite writes the file itself, and its journal beside it.
		f, err := os.OpenFile(o.Path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot write it: %v", cause(err))
		}
		f.Close()
	}
	// The file is replaced by a rename in its directory, which must exist
	// and be writable.
	return writableDir(filepath.Dir(o.Path), false)
}

// writableDir checks that files can be made in dir or, with create, that
// directories can be made in the nearest ancestor that exists (the rest
// is created). It asks the file system, by making one and removing it:
// access() says yes to root wherever the mode bits would, even in /proc
// or on a read-only mount, where the write would fail after the work.
func writableDir(dir string, create bool) error {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			if err := tryWrite(dir, create); err != nil {
				return fmt.Errorf("cannot write in %s: %v", dir, err)
			}
			return nil
		}
		if !missing(err) {
			return err
		}
		up := filepath.Dir(dir)
		if errors.Is(err, unix.ENOTDIR) {
			dir = up // a file on the way: say which
			continue
		}
		if !create || up == dir {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		dir = up
	}
}

// tryWrite makes a file in dir, or a directory with mkdir, and removes it.
func tryWrite(dir string, mkdir bool) error {
	const pattern = ".headlab-check-*"
	if mkdir {
		d, err := os.MkdirTemp(dir, pattern)
		if err != nil {
			return cause(err)
		}
		return os.Remove(d)
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return cause(err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// cause is what the system said, without the path a message names already.
func cause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// missing reports an error of a path that does not exist, also where a
// file stands in for one of its directories.
func missing(err error) bool { return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) }

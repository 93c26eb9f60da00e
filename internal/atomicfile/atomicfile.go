// Package atomicfile writes files and directories so that a reader, or a
// crash, never sees half of one: the bytes go to a temporary file (or
// directory) in the same directory, which is synced and then renamed over
// the destination, and the directory holding it is synced so that the
// rename itself survives a crash. A path that names something other than
// a regular file (a device, a pipe, /dev/stdout) is written in place
// instead, and "-" is standard output.
package atomicfile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Stdio is the path that means standard output.
const Stdio = "-"

// Write calls write with a buffered writer on a temporary file beside path
// and, when it succeeds, renames the file to path (mode 0644). On any
// failure the temporary file is removed and path is left as it was.
//
// When path is "-", or names a device, a pipe, a socket or a descriptor
// link such as /dev/stdout, nothing can be renamed over it: the output is
// made in memory and written there in place once write has succeeded, so
// a failure writes nothing. A symbolic link to a regular file is followed,
// and the file it names is replaced.
func Write(path string, write func(io.Writer) error) error {
	return WriteStdout(path, os.Stdout, write)
}

// WriteStdout is Write with "-" meaning stdout rather than os.Stdout (a
// command run in-process by its tests has a stdout of its own).
func WriteStdout(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == Stdio {
		if err := writeBuffered(stdout, write); err != nil {
			return fmt.Errorf("write to stdout: %v", err)
		}
		return nil
	}
	target, inPlace, err := resolve(path)
	if err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	if inPlace {
		return writeInPlace(target, write)
	}
	return replace(target, path, write)
}

// InPlace reports whether Write writes path in place rather than through
// a rename: "-", a device, a pipe, a socket, or a link through a
// descriptor table such as /dev/stdout (even when that descriptor is a
// redirect to a regular file). Such a path has no extension to choose a
// format by, so callers fall back to a default for it.
func InPlace(path string) bool {
	if path == Stdio {
		return true
	}
	target, inPlace, err := resolve(path)
	if err != nil || !inPlace {
		return false
	}
	fi, err := os.Stat(target)
	return err == nil && !fi.IsDir()
}

// resolve follows symbolic links from path to what they name. It reports
// inPlace when that is not a regular file, or when a link leads through a
// process's descriptor table (/proc/self/fd/1, /dev/fd/1): such a file is
// the other end of an open descriptor and must be written through it.
func resolve(path string) (target string, inPlace bool, err error) {
	p := path
	for range 40 {
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			return p, false, nil
		}
		if err != nil {
			return "", false, err
		}
		if fi.Mode().IsRegular() {
			return p, false, nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, true, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		if strings.HasPrefix(link, "/proc/") || strings.HasPrefix(link, "/dev/fd/") {
			return link, true, nil
		}
		p = link
	}
	return "", false, fmt.Errorf("too many levels of symbolic links")
}

// writeInPlace opens path for writing (appending, as a shell's redirect to
// a descriptor would) and writes the whole output at once.
func writeInPlace(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("write %s: %v", path, err)
	}
	// The os errors below name the path already.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeBuffered runs write into memory and copies the result to w only
// when it succeeded.
func writeBuffered(w io.Writer, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// replace writes through a temporary file beside target and renames it
// over target; name is the path the caller gave, for messages.
func replace(target, name string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %v", name, err)
	}
	tmp := f.Name()
	defer track(tmp)()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %v", name, err)
		}
	}()
	bw := bufio.NewWriter(f)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	// Sync before the rename so a crash cannot leave an empty file under
	// the final name.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; results should be readable like any
	// file os.Create would make.
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err = os.Rename(tmp, target); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory, making the renames in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

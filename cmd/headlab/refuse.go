package main

// Checks made before any work starts, so that bad input is refused in one
// line with exit 2 and nothing is trained, written or left behind: every
// output path, and whether the run fits in memory.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"headlab/internal/atomicfile"
	"headlab/internal/memlimit"
	"headlab/kernels"
	"headlab/sweep"
	"headlab/train"
)

// output is one path a command will write: a file (replaced whole), a
// directory it fills (created if missing) or a checkpoint directory.
type output struct {
	flag, path string
	kind       outKind
}

type outKind int

const (
	outFile       outKind = iota // replaced through a temporary file beside it
	outDir                       // created if missing, files written inside
	outCheckpoint                // train --save: replaced whole beside it
	outDatabase                  // a SQLite file, opened and written in its directory
)

func fileOut(flag, path string) output       { return output{flag, path, outFile} }
func dirOut(flag, path string) output        { return output{flag, path, outDir} }
func checkpointOut(flag, path string) output { return output{flag, path, outCheckpoint} }
func dbOut(flag, path string) output         { return output{flag, path, outDatabase} }

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

// checkOutputs refuses, as bad input, any output that could not be
// written: a file path that is a directory or a device, a directory path
// that is a file, a missing or unwritable parent. Empty paths are not
// asked for and pass.
func checkOutputs(outs ...output) error {
	first := ""
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if toStdout(o.path) {
			if o.kind != outFile {
				return usagef("--%s %s: names %s, which cannot be written to stdout", o.flag, o.path, o.kind.what())
			}
			if first != "" {
				return usagef("--%s and --%s both write to stdout; give one of them a file", first, o.flag)
			}
			first = o.flag
		}
		if err := o.check(); err != nil {
			return usagef("--%s %s: %v", o.flag, o.path, err)
		}
	}
	return nil
}

// toStdout reports whether path writes to standard output: "-", or a name
// of the same file, such as /dev/stdout.
func toStdout(path string) bool {
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

func (o output) check() error {
	fi, err := os.Stat(o.path)
	exists := err == nil
	if err != nil && !missing(err) {
		return err
	}
	switch o.kind {
	case outFile, outDatabase:
		if o.path == atomicfile.Stdio {
			return nil
		}
		if exists && fi.IsDir() {
			return errors.New("is a directory, want a file")
		}
		if exists && !fi.Mode().IsRegular() {
			// A device or a pipe is written in place (atomicfile). It is
			// not opened to try it: closing a pipe's only writer ends
			// its reader's input.
			return unix.Access(o.path, unix.W_OK)
		}
		if exists && o.kind == outDatabase {
			// SQLite writes the file itself, and its journal beside it.
			f, err := os.OpenFile(o.path, os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("cannot write it: %v", cause(err))
			}
			f.Close()
		}
		// The file is replaced by a rename in its directory, which must
		// exist and be writable.
		return writableDir(filepath.Dir(o.path), false)
	case outCheckpoint:
		if err := train.CheckSaveDir(o.path); err != nil {
			return err
		}
		return writableDir(filepath.Dir(filepath.Clean(o.path)), true)
	default:
		if exists {
			if !fi.IsDir() {
				return errors.New("is not a directory")
			}
			return writableDir(o.path, false)
		}
		return writableDir(filepath.Dir(filepath.Clean(o.path)), true)
	}
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

// checkMemory refuses a run whose models cannot fit: models models of
// each configuration at once (a group, or the groups of every worker),
// each with the probed evaluation graph when probed, against what this
// process may use and, on a device that says, the device's memory. On
// the CPU the device's memory is the process's. A device that cannot
// tell its memory gets one line saying it was not checked.
func checkMemory(stderr io.Writer, dev kernels.Device, configs []train.Config, models int, probed bool) error {
	if err := checkHostMemory(dev, configs, models, probed); err != nil {
		return err
	}
	return checkDeviceMemory(stderr, dev, configs, models, probed)
}

// memoryNeed is the estimate for the largest of configs, and how it reads.
func memoryNeed(configs []train.Config, models int, probed bool) (int64, string) {
	var need int64
	for _, c := range configs {
		need = max(need, train.EstimateBytes(c, probed))
	}
	parts := "weights, gradients, Adam state and activations"
	if probed {
		parts = "weights, gradients, Adam state, activations and the measurements' probed graph"
	}
	what := fmt.Sprintf("%d models of about %s each (%s)", models, mib(need), parts)
	if models == 1 {
		what = fmt.Sprintf("about %s (%s)", mib(need), parts)
	}
	return need, what
}

// checkHostMemory is checkMemory's half for the process's own memory,
// made before anything is built (train.GroupLimit builds one model).
func checkHostMemory(dev kernels.Device, configs []train.Config, models int, probed bool) error {
	need, what := memoryNeed(configs, models, probed)
	// On a GPU the host still builds one model to size the groups.
	host := need
	if _, onDevice := dev.(kernels.Capacity); !onDevice {
		host = need * int64(models)
	}
	if lim := memlimit.Read(); lim.Known() && host > lim.Bytes {
		return usagef("the run needs %s, more than the %s this process may use (%s)", what, memlimit.GiB(lim.Bytes), lim.What)
	}
	return nil
}

// checkDeviceMemory is checkMemory's half for a device with memory of
// its own (GL).
func checkDeviceMemory(stderr io.Writer, dev kernels.Device, configs []train.Config, models int, probed bool) error {
	cp, onDevice := dev.(kernels.Capacity)
	if !onDevice {
		return nil
	}
	need, what := memoryNeed(configs, models, probed)
	mem, ok := cp.MemoryBytes()
	if !ok {
		fmt.Fprintf(stderr, "headlab: %s reports no memory size (its driver has neither GL_NVX_gpu_memory_info nor GL_ATI_meminfo), so whether the run's %d model(s) of about %s fit is not checked\n", dev.Name(), models, mib(need))
		return nil
	}
	if total := need * int64(models); total > mem {
		return usagef("the run needs %s on %s, more than its %s", what, dev.Name(), memlimit.GiB(mem))
	}
	return nil
}

// configsOf lists the configurations of pairs, one per shape.
func configsOf(pairs []sweep.Pair) []train.Config {
	var out []train.Config
	for _, g := range sweep.Groups(pairs, len(pairs)+1) {
		out = append(out, g[0].Config)
	}
	return out
}

func mib(b int64) string {
	if b >= 1<<30 {
		return memlimit.GiB(b)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

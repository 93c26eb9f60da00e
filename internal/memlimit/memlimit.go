// Package memlimit says how much memory this process may still use: the
// smaller of the kernel's MemAvailable and the limit of its cgroup (v2
// memory.max or v1 memory.limit_in_bytes, on it or any ancestor), so
// that a run too large for the machine is refused before it starts
// instead of dying in the Go runtime.
package memlimit

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// Limit is what the process may use, in bytes, and which bound it is.
type Limit struct {
	Bytes int64
	What  string // e.g. "MemAvailable" or "cgroup memory.max"
}

// Known reports whether any bound was found.
func (l Limit) Known() bool { return l.What != "" }

// Read returns the tightest bound found on this machine; Known is false
// where there is none to read (not Linux).
func Read() Limit { return read(os.ReadFile) }

func read(readFile func(string) ([]byte, error)) Limit {
	var best Limit
	take := func(b int64, what string) {
		if b >= 0 && (!best.Known() || b < best.Bytes) {
			best = Limit{Bytes: b, What: what}
		}
	}
	if data, err := readFile("/proc/meminfo"); err == nil {
		if b, ok := memAvailable(string(data)); ok {
			take(b, "MemAvailable")
		}
	}
	if data, err := readFile("/proc/self/cgroup"); err == nil {
		for _, c := range cgroupFiles(string(data)) {
			if data, err := readFile(c.file); err == nil {
				if b, ok := parseLimit(string(data)); ok {
					take(b, c.what)
				}
			}
		}
	}
	return best
}

// memAvailable reads MemAvailable (kB) from /proc/meminfo.
func memAvailable(meminfo string) (int64, bool) {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

type limitFile struct{ file, what string }

// cgroupFiles lists the limit files of the process's cgroup and its
// ancestors, v2 ("0::/path") and v1 ("N:memory:/path"), each also at the
// mount's root, where a container sees its own cgroup.
func cgroupFiles(selfCgroup string) []limitFile {
	var out []limitFile
	for _, line := range strings.Split(selfCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file, what string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file, what = "/sys/fs/cgroup", "memory.max", "cgroup memory.max"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			root, file, what = "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "cgroup memory.limit_in_bytes"
		default:
			continue
		}
		for p := path.Clean("/" + parts[2]); ; p = path.Dir(p) {
			out = append(out, limitFile{path.Join(root, p, file), what})
			if p == "/" {
				break
			}
		}
	}
	return out
}

// parseLimit reads a cgroup limit: bytes, or "max" (none).
func parseLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false
	}
	b, err := strconv.ParseInt(s, 10, 64)
	// cgroup v1 writes "no limit" as a page-rounded MaxInt64.
	if err != nil || b >= 1<<62 {
		return 0, false
	}
	return b, true
}

// GiB formats bytes for messages.
func GiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

package memlimit

import (
	"errors"
	"testing"
)

func fakeFS(files map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no such file")
	}
}

func TestReadTakesTheTightestBound(t *testing.T) {
	meminfo := "MemTotal:       32000000 kB\nMemAvailable:   8000000 kB\n"
	cases := []struct {
		name  string
		files map[string]string
		bytes int64
		what  string
	}{
		{"meminfo only", map[string]string{"/proc/meminfo": meminfo}, 8000000 * 1024, "MemAvailable"},
		{"v2 limit below", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/a/b\n",
			"/sys/fs/cgroup/a/memory.max": "1073741824\n", "/sys/fs/cgroup/a/b/memory.max": "max\n"}, 1 << 30, "cgroup memory.max"},
		{"v2 limit above", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/a\n",
			"/sys/fs/cgroup/a/memory.max": "99999999999999\n"}, 8000000 * 1024, "MemAvailable"},
		{"v1 at the mount root", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "4:memory:/x/y\n0::/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912"}, 1 << 29, "cgroup memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "4:cpu,memory:/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, 8000000 * 1024, "MemAvailable"},
	}
	for _, c := range cases {
		l := read(fakeFS(c.files))
		if l.Bytes != c.bytes || l.What != c.what {
			t.Errorf("%s: got %d (%s), want %d (%s)", c.name, l.Bytes, l.What, c.bytes, c.what)
		}
	}
	if l := read(fakeFS(nil)); l.Known() {
		t.Errorf("no files: got %+v, want unknown", l)
	}
}

func TestReadOnThisMachine(t *testing.T) {
	l := Read()
	if l.Known() && l.Bytes <= 0 {
		t.Fatalf("limit %+v", l)
	}
}

package atomicfile

import (
	"os"
	"sync"
)

// temporaries are the temporary files and directories of writes in
// progress, for RemoveTemporaries.
var temporaries = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

// track records a temporary path until the returned function is called.
func track(path string) func() {
	temporaries.Lock()
	temporaries.paths[path] = true
	temporaries.Unlock()
	return func() {
		temporaries.Lock()
		delete(temporaries.paths, path)
		temporaries.Unlock()
	}
}

// RemoveTemporaries removes the temporary files and directories of every
// write in progress, for a process about to exit on a signal: the
// destinations keep what they held (a ReplaceDir that has swapped its
// directory in has only the old contents left in its temporary).
func RemoveTemporaries() {
	temporaries.Lock()
	defer temporaries.Unlock()
	for p := range temporaries.paths {
		os.RemoveAll(p)
		delete(temporaries.paths, p)
	}
}

package simd

import (
	"fmt"
	"os"
	"strings"
)

// path is a family of kernels: the portable Go loops or one instruction set.
type path uint8

const (
	pathGo path = iota
	pathAVX2
	pathAVX512
	pathNEON
	numPaths
)

var pathNames = [numPaths]string{"go", "avx2", "avx512", "neon"}

func (p path) String() string { return pathNames[p] }

// preference is the order in which the default choice tries the paths.
var preference = []path{pathAVX512, pathNEON, pathAVX2, pathGo}

// cur is the path every call takes; errChoose is why HEADLAB_SIMD could not
// be honoured (then cur is the default path). Both are set once, at init.
var (
	cur       path
	errChoose error
)

func init() { cur, errChoose = choose(os.Getenv("HEADLAB_SIMD"), canRun) }

// choose picks the path named by env (empty: the fastest one can runs).
// An unknown name, or a path can rejects, is an error; the path returned
// with it is the default, so the package stays usable.
func choose(env string, can func(path) bool) (path, error) {
	best := pathGo
	for _, p := range preference {
		if can(p) {
			best = p
			break
		}
	}
	name := strings.ToLower(strings.TrimSpace(env))
	if name == "" {
		return best, nil
	}
	for p, n := range pathNames {
		if n != name {
			continue
		}
		if !can(path(p)) {
			return best, fmt.Errorf("HEADLAB_SIMD=%s: this CPU (or build) cannot run the %s kernels; it can run %s", env, n, runnable(can))
		}
		return path(p), nil
	}
	return best, fmt.Errorf("HEADLAB_SIMD=%q: unknown kernel path, want one of %s", env, strings.Join(pathNames[:], ", "))
}

// runnable lists the paths can accepts, fastest first.
func runnable(can func(path) bool) string {
	var s []string
	for _, p := range preference {
		if can(p) {
			s = append(s, p.String())
		}
	}
	return strings.Join(s, ", ")
}

// Choose reports whether the path forced by HEADLAB_SIMD (read once, when
// the package is initialised) can run here: nil when it can or none was
// asked for. A program should call it at start and, on an error, print it
// on one line and exit with status 2. Until then, or if the error is
// ignored, the kernels take the default path.
func Choose() error { return errChoose }

// Path names the kernel path in use: "avx512", "avx2", "neon" (arm64) or
// "go".
func Path() string { return cur.String() }

// KernelName says which path Sgemm takes, with its register block
// ("avx512 8x32", "avx2 6x16", "neon 8x8", "go"); it starts with Path().
func KernelName() string {
	switch cur {
	case pathAVX512:
		return "avx512 8x32"
	case pathAVX2:
		return "avx2 6x16"
	case pathNEON:
		return "neon 8x8"
	}
	return cur.String()
}

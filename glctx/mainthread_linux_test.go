package glctx

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-gl/glfw/v3.3/glfw"
)

// initTid is the thread that ran the package's initialisation: the main
// OS thread (on Linux its id is the process id).
var initTid = syscall.Gettid()

// tidOn reports the Linux thread id that runs th's work.
func tidOn(t *testing.T, th *Thread) int {
	t.Helper()
	tid := 0
	if err := th.Call(func() { tid = syscall.Gettid() }); err != nil {
		t.Fatal(err)
	}
	return tid
}

// TestMainThread: while Main serves (TestMain), OnMain's functions run on
// the main OS thread, which holds no context; a window Thread, a GLFW
// Thread and an EGL Thread each run their work on an OS thread of their
// own, and compute or draw meanwhile.
func TestMainThread(t *testing.T) {
	if initTid != os.Getpid() {
		t.Fatalf("package init ran on thread %d, not the main thread %d", initTid, os.Getpid())
	}
	if syscall.Gettid() == initTid {
		t.Fatal("a test runs on the main thread, which Main should be serving")
	}
	onPath(t, kindGLFW)
	win := newThread(t, Options{Window: true, Major: 4, Minor: 1})
	g := newThread(t, Options{Context: kindGLFW})
	e := newHeadless(t) // without a display
	tids := map[int]string{}
	for name, th := range map[string]*Thread{"window": win, "glfw": g, "egl": e} {
		tid := tidOn(t, th)
		if tid == initTid || tids[tid] != "" {
			t.Errorf("%s Thread's Call ran on thread %d, the main thread %d or another Thread's (%q)", name, tid, initTid, tids[tid])
		}
		tids[tid] = name
	}
	ranOn, current := 0, true
	OnMain(func() { ranOn, current = syscall.Gettid(), glfw.GetCurrentContext() != nil })
	if ranOn != initTid || current {
		t.Fatalf("OnMain ran on thread %d (want the main thread %d), a context current there: %v", ranOn, initTid, current)
	}
	loadGL43(t, g)
	loadGL43(t, e)
	var wg sync.WaitGroup
	for _, th := range []*Thread{g, e, g, e} {
		wg.Go(func() {
			for range 5 {
				checkDoubled(t, runDoubler(t, th, 150))
			}
		})
	}
	wg.Wait()
	var px [4]uint8
	var derr error
	if err := win.Call(func() { px, derr = draw41(win) }); err != nil || derr != nil {
		t.Fatalf("drawing on the window Thread: %v, %v", err, derr)
	}
	if px != [4]uint8{51, 102, 153, 255} {
		t.Fatalf("window Thread drew %v", px)
	}
}

// TestMainNested: work on one GLFW Thread may call another (which runs it
// on its own thread, in its own context) and call back into itself (at
// once); and it may make and close a third, whose window the main thread
// makes and destroys meanwhile.
func TestMainNested(t *testing.T) {
	onPath(t, kindGLFW)
	a := newThread(t, Options{Context: kindGLFW})
	b := newThread(t, Options{Context: kindGLFW})
	loadGL43(t, a)
	var order []string
	b.Go(func() { order = append(order, "b queued") })
	var errs []error
	var made *Thread
	var madeErr, madeClose error
	if err := a.Call(func() {
		errs = append(errs, b.Call(func() { order = append(order, "b call"); checkCurrent(t, b) }))
		errs = append(errs, a.Call(func() { order = append(order, "a inside a"); checkCurrent(t, a) }))
		checkCurrent(t, a)
		errs = append(errs, b.Sync())
		made, madeErr = New(Options{Context: kindGLFW})
		if madeErr == nil {
			order = append(order, "made")
			madeClose = made.Close()
		}
		checkCurrent(t, a)
	}); err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if madeErr != nil || madeClose != nil {
		t.Fatalf("New and Close of a Thread from inside GLFW work: %v, %v", madeErr, madeClose)
	}
	if got := strings.Join(order, ", "); got != "b queued, b call, a inside a, made" {
		t.Fatalf("order %q", got)
	}
	if err := made.Call(func() {}); err != ErrClosed {
		t.Fatalf("Call of the Thread closed inside other work = %v, want ErrClosed", err)
	}
	checkDoubled(t, runDoubler(t, a, 40))
}

// checkCurrent fails unless th's context is the one current on the
// calling thread.
func checkCurrent(t *testing.T, th *Thread) {
	t.Helper()
	if th.win == nil || glfw.GetCurrentContext() != th.win {
		t.Errorf("the current context is not the running Thread's")
	}
}

// TestMainGoexit: runtime.Goexit in a window Thread's work ends that
// Thread with an error for its caller and leaves the others working; in a
// function OnMain runs it ends the main goroutine, so Main serves on and
// exits the process with status 1 once run returns (in a child process).
func TestMainGoexit(t *testing.T) {
	onPath(t, kindGLFW)
	if th, err := New(Options{Window: true}); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	} else {
		th.Close()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GLCTX_TEST_HELPER=goexit")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("helper: %v, want exit status 1; output:\n%s", err, out)
	}
	for _, want := range []string{"call: glctx: a function called runtime.Goexit", "after: " + ErrClosed.Error(), "other: ok", "served: true", "exits the process"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("helper output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "main returned") {
		t.Errorf("Main returned after a Goexit on the main thread:\n%s", out)
	}
}

// runHelper is the child process of TestMainGoexit.
func runHelper(name string) {
	if name != "goexit" {
		os.Exit(3)
	}
	Main(func() {
		a, err := New(Options{Window: true})
		if err != nil {
			fmt.Println("New:", err)
			os.Exit(3)
		}
		b, err := New(Options{Context: kindGLFW})
		if err != nil {
			fmt.Println("New:", err)
			os.Exit(3)
		}
		fmt.Println("call:", a.Call(runtime.Goexit))
		fmt.Println("after:", a.Call(func() {}))
		if err := b.Call(func() {}); err != nil {
			fmt.Println("other:", err)
		} else {
			fmt.Println("other: ok")
		}
		OnMain(runtime.Goexit)
		// The main thread still serves, and b still closes (its window
		// destroyed there).
		served := false
		OnMain(func() { served = syscall.Gettid() == initTid })
		fmt.Println("served:", served, b.Close())
	})
	fmt.Println("main returned")
	os.Exit(0)
}

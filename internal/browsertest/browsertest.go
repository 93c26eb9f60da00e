// Package browsertest drives Debian's headless Chromium for tests of the
// pages headlab writes: it opens a file in a tab and records every request
// the page makes, every request its Content-Security-Policy refuses, and
// every uncaught exception.
package browsertest

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Start starts the browser (scripts/setup.sh installs Debian's chromium);
// it stops when the test ends. Without chromium the test fails: it does
// not skip.
func Start(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (scripts/setup.sh installs Debian's chromium)")
	}
	parent, stop := context.WithTimeout(context.Background(), 3*time.Minute)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1200, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc(); stop() })
	return ctx
}

// Visit is what a page did while it was open.
type Visit struct {
	File string

	mu                   sync.Mutex
	requests, exceptions []string
}

// Open loads file in a new tab of the browser ctx (from Start), with a
// 1200x1000 viewport, and records what the page does from its first byte.
func Open(t *testing.T, ctx context.Context, file string) (context.Context, *Visit) {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	v := &Visit{File: file}
	err := chromedp.Listen(tab, func(ev any) {
		v.mu.Lock()
		defer v.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			v.requests = append(v.requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			v.exceptions = append(v.exceptions, e.ExceptionDetails.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__refused = []; document.addEventListener("securitypolicyviolation", e => window.__refused.push(e.blockedURI));`,
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1200, 1000), chromedp.Navigate("file://"+file)); err != nil {
		t.Fatal(err)
	}
	return tab, v
}

// Outside lists the requests the page made other than for its own file,
// and those its policy refused, as far as tab has run.
func (v *Visit) Outside(t *testing.T, tab context.Context) []string {
	t.Helper()
	refused := Eval[[]string](t, tab, `window.__refused`)
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for _, u := range v.requests {
		if u != "file://"+v.File {
			out = append(out, u)
		}
	}
	return append(out, refused...)
}

// Requests is every request seen, the page's own included: a watch that
// sees none does not work.
func (v *Visit) Requests() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.requests...)
}

// Exceptions lists the page's uncaught exceptions.
func (v *Visit) Exceptions() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.exceptions...)
}

// Eval evaluates js in tab and returns its value as a T.
func Eval[T any](t *testing.T, tab context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

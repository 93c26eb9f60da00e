package window

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"headlab/backend/gl"
)

// TestWindowGL41 runs the CPU-kernel viewer tests again in a child process
// whose driver offers OpenGL 4.1 at most (Mesa's MESA_GL_VERSION_OVERRIDE
// and MESA_GLSL_VERSION_OVERRIDE), so that the drawing is checked in a real
// 4.1 core context, macOS's ceiling: a 4.2 function or a "#version 430"
// shader fails there.
func TestWindowGL41(t *testing.T) {
	needGL(t)
	if os.Getenv(gl41Env) == "1" {
		t.Skip("already the 4.1 child")
	}
	tests := []string{"TestScreenshotAndClick", "TestControls", "TestSavedModel", "TestOpenDisplay"}
	cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(tests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), gl41Env+"=1", "MESA_GL_VERSION_OVERRIDE=4.1", "MESA_GLSL_VERSION_OVERRIDE=410")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the 4.1 child failed: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`display: OpenGL (\d+)\.(\d+): (.*)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the child did not report its context:\n%s", out)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	renderer := string(m[3])
	t.Logf("child: OpenGL %d.%d, %s", major, minor, renderer)
	if major != 4 || minor != 1 {
		// Only Mesa honours the override; elsewhere 4.1 core or later is
		// what a 4.1 request can give.
		if strings.Contains(renderer, "Mesa") || strings.Contains(renderer, "llvmpipe") {
			t.Fatalf("Mesa gave OpenGL %d.%d under MESA_GL_VERSION_OVERRIDE=4.1", major, minor)
		}
		if major < 4 || major == 4 && minor < 1 {
			t.Fatalf("a 4.1 request gave OpenGL %d.%d", major, minor)
		}
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass in the 4.1 context:\n%s", name, out)
		}
	}
}

// TestWindowOtherDevice: a GL device on a thread of its own (a headless
// context, not the window's) is not asked to fill the textures; the viewer
// uploads its attention from the host, as for CPU kernels.
func TestWindowOtherDevice(t *testing.T) {
	needGL(t)
	d, err := gl.New(gl.Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and no GL device: %v", err)
		}
		t.Skip(err)
	}
	defer d.Close()
	v := open(t, Options{Config: tiny(20), Steps: 20, Kernels: d})
	if v.gpuFill || v.texSrc != nil {
		t.Fatal("a GL device on another thread was asked to fill the window's textures")
	}
	img, err := v.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	lay, ppu := v.Layout()
	checkPanels(t, img, lay, ppu, v.Status().Probs, true)
}

// TestWindowImports: the viewer reaches the GL device only through
// TextureSource, and draws with go-gl's 4.1 core package alone.
func TestWindowImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "headlab/backend/gl" || strings.HasPrefix(p, "github.com/go-gl/gl/") && p != "github.com/go-gl/gl/v4.1-core/gl" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

package egl

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Device lists for planDevices, as eglQueryDevicesEXT might give them.
var (
	mesaOnly = []Device{{Desc: "/dev/dri/renderD128"}, {Desc: "Mesa software"}}
	oneGPU   = []Device{{Desc: "NVIDIA CUDA", CUDA: true, Ordinal: 0}, {Desc: "Mesa software"}}
	// Four GPUs that EGL lists in another order than CUDA, then Mesa.
	fourGPUs = []Device{
		{CUDA: true, Ordinal: 2}, {CUDA: true, Ordinal: 3}, {CUDA: true, Ordinal: 0}, {CUDA: true, Ordinal: 1},
		{Desc: "Mesa software"},
	}
	// CUDA_VISIBLE_DEVICES=1 on two GPUs: the hidden one answers no number.
	secondOfTwo = []Device{{CUDA: true, Ordinal: -1}, {CUDA: true, Ordinal: 0}}
	// A driver that reports the machine's numbering: eight GPUs, listed last first.
	eightPhysical = []Device{
		{CUDA: true, Ordinal: 7}, {CUDA: true, Ordinal: 6}, {CUDA: true, Ordinal: 5}, {CUDA: true, Ordinal: 4},
		{CUDA: true, Ordinal: 3}, {CUDA: true, Ordinal: 2}, {CUDA: true, Ordinal: 1}, {CUDA: true, Ordinal: 0},
	}
	// A driver that answers no EGL_CUDA_DEVICE_NV at all.
	noNumbers = []Device{{Desc: "Mesa software"}, {CUDA: true, Ordinal: -1}, {CUDA: true, Ordinal: -1}}
	// Two devices claiming one number (seen with old drivers): the first wins.
	duplicate = []Device{{CUDA: true, Ordinal: 0}, {CUDA: true, Ordinal: 0}}
)

func unset() deviceEnv { return deviceEnv{} }

func visible(s string) deviceEnv { return deviceEnv{visible: s, visibleSet: true} }

func TestPlanDevices(t *testing.T) {
	with := func(e deviceEnv, want string, fallback bool) deviceEnv {
		e.want, e.fallback = want, fallback
		return e
	}
	for _, c := range []struct {
		name     string
		devs     []Device
		env      deviceEnv
		order    []int
		explicit bool
		strict   bool
		hidden   bool
	}{
		{"no NVIDIA: every device in EGL's order", mesaOnly, unset(), []int{0, 1}, false, false, false},
		{"no NVIDIA: HEADLAB_EGL_DEVICE indexes EGL's list", mesaOnly, with(unset(), "1", false), []int{1}, true, false, false},
		{"one GPU: only it", oneGPU, unset(), []int{0}, false, true, false},
		{"one GPU, auto: it, then the others", oneGPU, with(unset(), "", true), []int{0, 1}, false, false, false},
		{"one GPU, HEADLAB_EGL_DEVICE=0", oneGPU, with(unset(), "0", true), []int{0}, true, false, false},
		{"CUDA's device 0 wherever EGL lists it", fourGPUs, unset(), []int{2}, false, true, false},
		{"HEADLAB_EGL_DEVICE in CUDA's numbering", fourGPUs, with(unset(), "3", false), []int{1}, true, false, false},
		{"CUDA_VISIBLE_DEVICES=1: the visible one", secondOfTwo, visible("1"), []int{1}, false, true, false},
		{"CUDA_VISIBLE_DEVICES=GPU-uuid", secondOfTwo, visible("GPU-5d35c06"), []int{1}, false, true, false},
		{"machine numbering read through CUDA_VISIBLE_DEVICES", eightPhysical, visible("4,5,6,7"), []int{3}, false, true, false},
		{"machine numbering, HEADLAB_EGL_DEVICE=3", eightPhysical, with(visible("4,5,6,7"), "3", false), []int{0}, true, false, false},
		{"machine numbering, one visible", eightPhysical, visible("6"), []int{1}, false, true, false},
		{"no numbers: NVIDIA devices in EGL's order", noNumbers, with(unset(), "1", false), []int{2}, true, false, false},
		{"duplicate numbers: the first", duplicate, unset(), []int{0}, false, true, false},
		{"all hidden, auto: the others", oneGPU, with(visible(""), "", true), []int{1}, false, false, true},
		{"-1 hides all, auto", oneGPU, with(visible("-1"), "", true), []int{1}, false, false, true},
	} {
		p, err := planDevices(c.devs, c.env)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(p.order, c.order) || p.explicit != c.explicit || p.strict != c.strict || (p.hidden != "") != c.hidden {
			t.Errorf("%s: order %v explicit %v strict %v hidden %q; want %v %v %v hidden %v",
				c.name, p.order, p.explicit, p.strict, p.hidden, c.order, c.explicit, c.strict, c.hidden)
		}
	}
}

// A bad HEADLAB_EGL_DEVICE, or every NVIDIA device hidden without a
// fallback allowed, is one line naming the variable and the devices.
func TestPlanDevicesRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		devs   []Device
		env    deviceEnv
		choice bool // HEADLAB_EGL_DEVICE's fault: ErrDeviceChoice
		says   []string
	}{
		{"no NVIDIA, index too large", mesaOnly, deviceEnv{want: "2"}, true, []string{"HEADLAB_EGL_DEVICE=2", "below 2", "1 Mesa software"}},
		{"no NVIDIA, not a number", mesaOnly, deviceEnv{want: "x"}, true, []string{"HEADLAB_EGL_DEVICE=x"}},
		{"no NVIDIA, negative", mesaOnly, deviceEnv{want: "-1"}, true, []string{"HEADLAB_EGL_DEVICE=-1"}},
		{"CUDA number too large", fourGPUs, deviceEnv{want: "4"}, true, []string{"HEADLAB_EGL_DEVICE=4", "(0-3)", "2 NVIDIA CUDA 0"}},
		{"CUDA number hidden", secondOfTwo, deviceEnv{want: "1", visible: "1", visibleSet: true}, true, []string{"HEADLAB_EGL_DEVICE=1", "(0)", `CUDA_VISIBLE_DEVICES="1"`, "0 NVIDIA (not visible to CUDA here)"}},
		{"a Mesa index is no CUDA number", oneGPU, deviceEnv{want: "1", fallback: true}, true, []string{"HEADLAB_EGL_DEVICE=1", "(0)"}},
		{"all hidden", oneGPU, deviceEnv{visible: "", visibleSet: true}, false, []string{`CUDA_VISIBLE_DEVICES=""`, "hides every NVIDIA device", "not falling back", "HEADLAB_GL_CONTEXT=auto"}},
		{"all hidden, HEADLAB_EGL_DEVICE even with auto", oneGPU, deviceEnv{want: "0", visible: "", visibleSet: true, fallback: true}, true, []string{"HEADLAB_EGL_DEVICE=0", "hides every NVIDIA device"}},
	} {
		_, err := planDevices(c.devs, c.env)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if errors.Is(err, ErrDeviceChoice) != c.choice {
			t.Errorf("%s: errors.Is(%v, ErrDeviceChoice) = %v", c.name, err, !c.choice)
		}
		msg := err.Error()
		for _, s := range c.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: %q does not say %q", c.name, msg, s)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is not one line", c.name, msg)
		}
	}
}

func TestParseVisible(t *testing.T) {
	for in, want := range map[string][]string{
		"0,2":           {"0", "2"},
		" 1 , 3 ":       {"1", "3"},
		"01":            {"1"},
		"2,-1,3":        {"2"},
		"":              nil,
		"-1":            nil,
		"NoDevFiles":    nil,
		"GPU-ab12,1":    {"GPU-ab12", "1"},
		"MIG-x,foo,1":   {"MIG-x"},
		"0,1,2,3,4,5,6": {"0", "1", "2", "3", "4", "5", "6"},
	} {
		if got := parseVisible(in); !slices.Equal(got, want) {
			t.Errorf("parseVisible(%q) = %q, want %q", in, got, want)
		}
	}
}

// The hint for "no EGL driver" names the vendor files it finds, NVIDIA's
// container folder among the places it looks, and the folders when none.
func TestVendorHint(t *testing.T) {
	if !slices.Contains(vendorDirs, "/usr/local/nvidia/share/glvnd/egl_vendor.d") {
		t.Errorf("vendorDirs %q lacks NVIDIA's container folder", vendorDirs)
	}
	t.Setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "") // restored after the test
	os.Unsetenv("__EGL_VENDOR_LIBRARY_FILENAMES")
	empty, nvidia := t.TempDir(), t.TempDir()
	saved := vendorDirs
	t.Cleanup(func() { vendorDirs = saved })
	vendorDirs = []string{empty}
	if h := VendorHint(); !strings.Contains(h, "no glvnd EGL vendor file in "+empty) {
		t.Errorf("no vendor file: hint %q", h)
	}
	json := filepath.Join(nvidia, "10_nvidia.json")
	if err := os.WriteFile(json, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	vendorDirs = []string{empty, nvidia}
	if h := VendorHint(); !strings.Contains(h, "__EGL_VENDOR_LIBRARY_FILENAMES") || !strings.Contains(h, json) {
		t.Errorf("with %s: hint %q", json, h)
	}
	t.Setenv("__EGL_VENDOR_LIBRARY_FILENAMES", json)
	if h := VendorHint(); !strings.Contains(h, "is set") {
		t.Errorf("with the variable set: hint %q", h)
	}
}

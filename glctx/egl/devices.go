package egl

// Which EGL device to open. Kept apart from the cgo in egl.go so that the
// choice can be tested on made-up device lists: no machine here has an
// NVIDIA device.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Device is one entry of eglQueryDevicesEXT's list as the choice sees it.
type Device struct {
	Handle uintptr // the EGLDeviceEXT
	Desc   string  // for messages: "/dev/dri/renderD128", "Mesa software"
	CUDA   bool    // lists EGL_NV_device_cuda: an NVIDIA GPU
	// ordinal is its EGL_CUDA_DEVICE_NV, the CUDA device number NVIDIA's
	// driver gives it; -1 when the query failed (a device that
	// CUDA_VISIBLE_DEVICES hides gives none).
	Ordinal int
}

// deviceEnv is the environment the choice reads.
type deviceEnv struct {
	want       string // HEADLAB_EGL_DEVICE ("" when unset)
	visible    string // CUDA_VISIBLE_DEVICES
	visibleSet bool   // whether CUDA_VISIBLE_DEVICES is set (set and empty hides every GPU)
	fallback   bool   // Context "auto": a failing NVIDIA device may give way to another renderer
}

// devicePlan is the devices to try, in order (indices into the list).
type devicePlan struct {
	order []int
	// explicit: HEADLAB_EGL_DEVICE chose order[0]; its failure ends the
	// search, whatever the context kind.
	explicit bool
	// strict: order[0] is an NVIDIA device and nothing after it may be
	// tried, on this platform or another, when it fails (no silent
	// software renderer).
	strict bool
	// hidden is set when EGL lists NVIDIA devices but CUDA_VISIBLE_DEVICES
	// leaves none of them; order then holds the other devices (fallback
	// only).
	hidden string
}

// planDevices decides which devices to try. With NVIDIA devices present
// it picks one by its CUDA number (as CUDA numbers devices in this
// process: after CUDA_VISIBLE_DEVICES), HEADLAB_EGL_DEVICE's or the first;
// without, HEADLAB_EGL_DEVICE indexes EGL's list and every device is tried
// in its order. A bad HEADLAB_EGL_DEVICE, or NVIDIA devices all hidden
// where no fallback is allowed, is an error.
func planDevices(devs []Device, env deviceEnv) (devicePlan, error) {
	numbers := cudaNumbers(devs, env.visible, env.visibleSet)
	anyCUDA := slices.ContainsFunc(devs, func(d Device) bool { return d.CUDA })
	var others []int
	for i, d := range devs {
		if !d.CUDA {
			others = append(others, i)
		}
	}
	if !anyCUDA {
		if env.want == "" {
			return devicePlan{order: others}, nil
		}
		i, err := strconv.Atoi(env.want)
		if err != nil || i < 0 || i >= len(devs) {
			return devicePlan{}, badChoice(fmt.Errorf("HEADLAB_EGL_DEVICE=%s: want an index below %d (no NVIDIA device; EGL lists %s)", env.want, len(devs), listDevices(devs, numbers)))
		}
		return devicePlan{order: []int{i}, explicit: true}, nil
	}
	if len(numbers) == 0 {
		hidden := fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every NVIDIA device EGL lists (%s)", env.visible, listDevices(devs, numbers))
		if env.want != "" {
			return devicePlan{}, badChoice(fmt.Errorf("HEADLAB_EGL_DEVICE=%s: %s", env.want, hidden))
		}
		if !env.fallback {
			return devicePlan{}, fmt.Errorf("%s; not falling back to a software renderer (HEADLAB_GL_CONTEXT=auto or egl-surfaceless allows one)", hidden)
		}
		return devicePlan{order: others, hidden: hidden}, nil
	}
	n := slices.Min(keys(numbers))
	if env.want != "" {
		var err error
		n, err = strconv.Atoi(env.want)
		if _, ok := numbers[n]; err != nil || !ok {
			return devicePlan{}, badChoice(fmt.Errorf("HEADLAB_EGL_DEVICE=%s: want a CUDA device number (%s) %s; EGL lists %s", env.want, cudaRange(numbers), visibleNote(env), listDevices(devs, numbers)))
		}
		return devicePlan{order: []int{numbers[n]}, explicit: true}, nil
	}
	p := devicePlan{order: []int{numbers[n]}, strict: !env.fallback}
	if env.fallback {
		p.order = append(p.order, others...)
	}
	return p, nil
}

// cudaNumbers maps the CUDA number of each NVIDIA device this process may
// use to its index in devs. NVIDIA's EGL_CUDA_DEVICE_NV is taken as CUDA's
// own numbering in this process (CUDA_VISIBLE_DEVICES applied, hidden
// devices answering nothing). Should a driver report the machine's
// numbering instead (a number that the visible list cannot give), the
// numbers are read through CUDA_VISIBLE_DEVICES' entries. Without any
// EGL_CUDA_DEVICE_NV and without CUDA_VISIBLE_DEVICES, NVIDIA devices are
// numbered in EGL's order.
func cudaNumbers(devs []Device, visible string, visibleSet bool) map[int]int {
	numbers := map[int]int{}
	known := false
	for _, d := range devs {
		known = known || d.CUDA && d.Ordinal >= 0
	}
	if !known {
		if !visibleSet {
			n := 0
			for i, d := range devs {
				if d.CUDA {
					numbers[n] = i
					n++
				}
			}
		}
		return numbers
	}
	entries := parseVisible(visible)
	physical := false // the driver reports the machine's numbering
	if visibleSet && len(entries) > 0 && allNumbers(entries) {
		for _, d := range devs {
			physical = physical || d.CUDA && d.Ordinal >= len(entries)
		}
	}
	for i, d := range devs {
		if !d.CUDA || d.Ordinal < 0 {
			continue
		}
		n := d.Ordinal
		switch {
		case physical:
			n = slices.Index(entries, strconv.Itoa(d.Ordinal))
		case visibleSet && n >= len(entries):
			n = -1
		}
		if _, dup := numbers[n]; n >= 0 && !dup {
			numbers[n] = i
		}
	}
	return numbers
}

// parseVisible reads CUDA_VISIBLE_DEVICES as CUDA does: comma-separated
// device numbers or GPU-/MIG- UUIDs, up to the first entry that is neither
// (so "-1" or "" hides every device). Numbers come back in canonical form.
func parseVisible(s string) []string {
	var entries []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if n, err := strconv.Atoi(f); err == nil && n >= 0 {
			entries = append(entries, strconv.Itoa(n))
			continue
		}
		if !strings.HasPrefix(f, "GPU-") && !strings.HasPrefix(f, "MIG-") {
			break
		}
		entries = append(entries, f)
	}
	return entries
}

func allNumbers(entries []string) bool {
	for _, e := range entries {
		if _, err := strconv.Atoi(e); err != nil {
			return false
		}
	}
	return true
}

func keys(m map[int]int) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// cudaRange says which CUDA numbers exist: "0", "0-3" or "0, 2".
func cudaRange(numbers map[int]int) string {
	ks := keys(numbers)
	if ks[len(ks)-1]-ks[0] == len(ks)-1 && len(ks) > 1 {
		return fmt.Sprintf("%d-%d", ks[0], ks[len(ks)-1])
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return strings.Join(s, ", ")
}

func visibleNote(env deviceEnv) string {
	if !env.visibleSet {
		return "as CUDA numbers them"
	}
	return fmt.Sprintf("as CUDA numbers them under CUDA_VISIBLE_DEVICES=%q", env.visible)
}

// listDevices describes EGL's list for messages: "0 NVIDIA CUDA 1, 1
// NVIDIA CUDA 0, 2 Mesa software".
func listDevices(devs []Device, numbers map[int]int) string {
	s := make([]string, len(devs))
	for i, d := range devs {
		s[i] = fmt.Sprintf("%d %s", i, describe(d, i, numbers))
	}
	return strings.Join(s, ", ")
}

// describe names device i of the list for messages.
func describe(d Device, i int, numbers map[int]int) string {
	if !d.CUDA {
		return d.Desc
	}
	for n, j := range numbers {
		if j == i {
			return fmt.Sprintf("NVIDIA CUDA %d", n)
		}
	}
	return "NVIDIA (not visible to CUDA here)"
}

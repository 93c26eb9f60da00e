// Package egl is glctx's EGL platform: headless OpenGL core contexts
// through EGL_EXT_platform_device (an NVIDIA GPU chosen by its CUDA
// number) or EGL_MESA_platform_surfaceless, no X server involved. Handles
// cross into Go as uintptr so that Go never holds driver pointers as
// unsafe.Pointer.
package egl

/*
#cgo pkg-config: egl
#include <stdint.h>
#include <stdlib.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif
#ifndef EGL_CONTEXT_OPENGL_DEBUG
#define EGL_CONTEXT_OPENGL_DEBUG 0x31B0
#endif
#ifndef EGL_CUDA_DEVICE_NV
#define EGL_CUDA_DEVICE_NV 0x323A
#endif

static EGLint hl_error(void) { return eglGetError(); }

static const char *hl_query_string(uintptr_t dpy, EGLint name) {
	return eglQueryString((EGLDisplay)dpy, name);
}

// hl_query_devices stores up to max device handles; -1 when the driver has
// no eglQueryDevicesEXT, 0 on failure (see eglGetError), 1 on success.
static int hl_query_devices(uintptr_t *devs, EGLint max, EGLint *n) {
	PFNEGLQUERYDEVICESEXTPROC q = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
	if (!q) return -1;
	EGLDeviceEXT d[32];
	if (max > 32) max = 32;
	EGLint got = 0;
	if (!q(max, d, &got)) return 0;
	for (EGLint i = 0; i < got; i++) devs[i] = (uintptr_t)d[i];
	*n = got;
	return 1;
}

static const char *hl_device_string(uintptr_t dev, EGLint name) {
	PFNEGLQUERYDEVICESTRINGEXTPROC q = (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
	if (!q) return NULL;
	return q((EGLDeviceEXT)dev, name);
}

// hl_device_attrib reads an integer attribute of a device (EGL_CUDA_DEVICE_NV):
// 1 on success, 0 when the driver refuses it or lacks eglQueryDeviceAttribEXT.
static int hl_device_attrib(uintptr_t dev, EGLint name, intptr_t *value) {
	PFNEGLQUERYDEVICEATTRIBEXTPROC q = (PFNEGLQUERYDEVICEATTRIBEXTPROC)eglGetProcAddress("eglQueryDeviceAttribEXT");
	if (!q) return 0;
	EGLAttrib v = 0;
	if (!q((EGLDeviceEXT)dev, name, &v)) return 0;
	*value = (intptr_t)v;
	return 1;
}

// hl_platform_display returns 0 and sets *missing when the driver has no
// eglGetPlatformDisplayEXT.
static uintptr_t hl_platform_display(EGLenum platform, uintptr_t native, int *missing) {
	PFNEGLGETPLATFORMDISPLAYEXTPROC g = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	*missing = g == NULL;
	if (!g) return 0;
	return (uintptr_t)g(platform, (void *)native, NULL);
}

static int hl_initialize(uintptr_t dpy, EGLint *major, EGLint *minor) {
	return eglInitialize((EGLDisplay)dpy, major, minor);
}
static int hl_terminate(uintptr_t dpy) { return eglTerminate((EGLDisplay)dpy); }
static int hl_bind_api(void) { return eglBindAPI(EGL_OPENGL_API); }

// hl_choose_config picks a config that renders desktop OpenGL into a pbuffer.
static uintptr_t hl_choose_config(uintptr_t dpy, EGLint *n) {
	const EGLint attribs[] = {
		EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
		EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
		EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
		EGL_NONE,
	};
	EGLConfig cfg = NULL;
	*n = 0;
	if (!eglChooseConfig((EGLDisplay)dpy, attribs, &cfg, 1, n) || *n < 1) return 0;
	return (uintptr_t)cfg;
}

static uintptr_t hl_create_context(uintptr_t dpy, uintptr_t cfg, const EGLint *attribs) {
	return (uintptr_t)eglCreateContext((EGLDisplay)dpy, (EGLConfig)cfg, EGL_NO_CONTEXT, attribs);
}

static uintptr_t hl_create_pbuffer(uintptr_t dpy, uintptr_t cfg) {
	const EGLint attribs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
	return (uintptr_t)eglCreatePbufferSurface((EGLDisplay)dpy, (EGLConfig)cfg, attribs);
}

static int hl_make_current(uintptr_t dpy, uintptr_t surf, uintptr_t ctx) {
	return eglMakeCurrent((EGLDisplay)dpy, (EGLSurface)surf, (EGLSurface)surf, (EGLContext)ctx);
}
static int hl_destroy_context(uintptr_t dpy, uintptr_t ctx) {
	return eglDestroyContext((EGLDisplay)dpy, (EGLContext)ctx);
}
static int hl_destroy_surface(uintptr_t dpy, uintptr_t surf) {
	return eglDestroySurface((EGLDisplay)dpy, (EGLSurface)surf);
}
static int hl_release_thread(void) { return eglReleaseThread(); }
static void *hl_proc_addr(const char *name) { return (void *)eglGetProcAddress(name); }

*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// Context is one EGL context, current on its GL thread.
type Context struct {
	dpy, ctx, surf C.uintptr_t
}

// Options says what context Open makes.
type Options struct {
	Major, Minor int  // the core profile version
	Debug        bool // a debug context
	// Fallback (Context "auto") lets a failing NVIDIA device give way to
	// another device or platform.
	Fallback bool
	// Version reads the GL version of the context current on this thread,
	// for the error when the version asked for is refused.
	Version func() (major, minor int, ok bool)

	// For tests.
	Config  bool                    // a chosen config and a pbuffer, as on drivers without no-config contexts
	Devices func([]Device) []Device // edits EGL's device list before the choice
}

// eglRefs counts the contexts using each initialised EGLDisplay: a display
// is one per device, shared by every context on it, and eglTerminate would
// pull it from under the others.
var (
	eglMu   sync.Mutex
	eglRefs = map[C.uintptr_t]int{}
)

// eglErrNames names EGL error codes.
var eglErrNames = map[C.EGLint]string{
	0x3001: "EGL_NOT_INITIALIZED", 0x3002: "EGL_BAD_ACCESS", 0x3003: "EGL_BAD_ALLOC",
	0x3004: "EGL_BAD_ATTRIBUTE", 0x3005: "EGL_BAD_CONFIG", 0x3006: "EGL_BAD_CONTEXT",
	0x3007: "EGL_BAD_CURRENT_SURFACE", 0x3008: "EGL_BAD_DISPLAY", 0x3009: "EGL_BAD_MATCH",
	0x300A: "EGL_BAD_NATIVE_PIXMAP", 0x300B: "EGL_BAD_NATIVE_WINDOW", 0x300C: "EGL_BAD_PARAMETER",
	0x300D: "EGL_BAD_SURFACE", 0x300E: "EGL_CONTEXT_LOST", 0x322B: "EGL_BAD_DEVICE_EXT",
}

// eglErr describes the failure of an EGL call from the thread's error code.
func eglErr(call string) error {
	code := C.hl_error()
	name, ok := eglErrNames[code]
	if !ok {
		name = fmt.Sprintf("EGL error 0x%x", int(code))
	}
	return fmt.Errorf("%s failed: %s", call, name)
}

// goStr is C.GoString, which gives "" for NULL.
func goStr(s *C.char) string { return C.GoString(s) }

// hasWord reports whether the space-separated list holds w.
func hasWord(list, w string) bool {
	for f := range strings.FieldsSeq(list) {
		if f == w {
			return true
		}
	}
	return false
}

// ErrNoDriver marks failures where EGL found no usable display at all, the
// case where glvnd has no vendor library: the error then says how to point
// it at one.
var ErrNoDriver = errors.New("no EGL driver")

// ErrNoFallback marks failures after which no other device or platform
// may be tried: an explicit choice (HEADLAB_EGL_DEVICE), or an NVIDIA
// device that failed when no fallback was allowed. Quietly trying another
// could land on a software renderer.
var ErrNoFallback = errors.New("no fallback")

// ErrDeviceChoice marks New's failure when HEADLAB_EGL_DEVICE names no
// device, or one that does not work: bad input rather than a missing GPU,
// which a caller that falls back on failure (--backend auto) refuses.
var ErrDeviceChoice = errors.New("HEADLAB_EGL_DEVICE cannot be used")

// marked is an error that errors.Is also matches against marks, whose own
// text it leaves out.
type marked struct {
	error
	marks []error
}

// Mark returns err, which errors.Is also matches against marks.
func Mark(err error, marks ...error) error { return marked{err, marks} }

func (e marked) Unwrap() []error { return append([]error{e.error}, e.marks...) }

// noFallback marks err as ErrNoFallback.
func noFallback(err error) error { return marked{err, []error{ErrNoFallback}} }

// badChoice marks err as a failure of HEADLAB_EGL_DEVICE's choice.
func badChoice(err error) error { return marked{err, []error{ErrNoFallback, ErrDeviceChoice}} }

// Open makes an EGL context current on the calling thread: on a device
// (EGL_EXT_platform_device), else on the surfaceless platform. passed is
// the failure of an NVIDIA device that o.Fallback went past to reach st, or
// that it went past before failing.
func Open(device bool, o Options) (st *Context, passed, err error) {
	client := goStr(C.hl_query_string(0, C.EGL_EXTENSIONS))
	if device {
		return openDevice(client, o)
	}
	st, err = openSurfaceless(client, o)
	return st, nil, err
}

// noDriver wraps err as a failure to find any working EGL display.
func noDriver(err error) error { return fmt.Errorf("%w: %w", ErrNoDriver, err) }

// openDevice uses EGL_EXT_platform_device: the NVIDIA (CUDA) device
// planDevices picks when there is one, else the first device that works.
// An NVIDIA device that fails ends the search with an error unless
// o.Fallback; passed then reports it.
func openDevice(client string, o Options) (st *Context, passed, err error) {
	for _, ext := range []string{"EGL_EXT_platform_device", "EGL_EXT_platform_base"} {
		if !hasWord(client, ext) {
			return nil, nil, noDriver(fmt.Errorf("EGL lacks %s", ext))
		}
	}
	devs, err := queryDevices()
	if err != nil {
		return nil, nil, noDriver(err)
	}
	if o.Devices != nil {
		devs = o.Devices(devs)
	}
	if len(devs) == 0 {
		return nil, nil, noDriver(errors.New("EGL lists no devices"))
	}
	visible, visibleSet := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	plan, err := planDevices(devs, deviceEnv{
		want:    os.Getenv("HEADLAB_EGL_DEVICE"),
		visible: visible, visibleSet: visibleSet,
		fallback: o.Fallback,
	})
	if err != nil {
		return nil, nil, noFallback(err)
	}
	numbers := cudaNumbers(devs, visible, visibleSet)
	if plan.hidden != "" {
		passed = errors.New(plan.hidden)
	}
	var errs []string
	initialised := false
	for _, i := range plan.order {
		var missing C.int
		dpy := C.hl_platform_display(C.EGL_PLATFORM_DEVICE_EXT, C.uintptr_t(devs[i].Handle), &missing)
		if missing != 0 {
			return nil, passed, noDriver(errors.New("EGL lacks eglGetPlatformDisplayEXT"))
		}
		if dpy == 0 {
			err = eglErr("eglGetPlatformDisplayEXT")
		} else {
			var inited bool
			st, inited, err = openOn(dpy, o)
			initialised = initialised || inited
		}
		if err == nil {
			return st, passed, nil
		}
		err = fmt.Errorf("EGL device %d (%s): %w", i, describe(devs[i], i, numbers), err)
		switch {
		case plan.explicit:
			return nil, passed, badChoice(fmt.Errorf("HEADLAB_EGL_DEVICE=%s: %w", os.Getenv("HEADLAB_EGL_DEVICE"), err))
		case devs[i].CUDA && plan.strict:
			return nil, passed, noFallback(fmt.Errorf("%w; not falling back to a software renderer (HEADLAB_GL_CONTEXT=auto or egl-surfaceless allows one)", err))
		case devs[i].CUDA && passed == nil:
			passed = err
		}
		errs = append(errs, err.Error())
	}
	if len(errs) == 0 {
		return nil, passed, noDriver(errors.New("EGL lists no device to try"))
	}
	err = errors.New(strings.Join(errs, "; "))
	if !initialised {
		err = noDriver(err)
	}
	return nil, passed, err
}

// queryDevices lists EGL's devices (eglQueryDevicesEXT).
func queryDevices() ([]Device, error) {
	var handles [32]C.uintptr_t
	var n C.EGLint
	switch C.hl_query_devices(&handles[0], C.EGLint(len(handles)), &n) {
	case -1:
		return nil, errors.New("EGL lacks eglQueryDevicesEXT")
	case 0:
		return nil, eglErr("eglQueryDevicesEXT")
	}
	devs := make([]Device, n)
	for i, h := range handles[:n] {
		devs[i] = queryDevice(h)
	}
	return devs, nil
}

// DeviceList describes EGL's devices and their CUDA numbers, for logs.
func DeviceList() (string, error) {
	devs, err := queryDevices()
	if err != nil {
		return "", err
	}
	visible, set := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	return listDevices(devs, cudaNumbers(devs, visible, set)), nil
}

// queryDevice reads what the choice needs of one EGL device.
func queryDevice(h C.uintptr_t) Device {
	exts := goStr(C.hl_device_string(h, C.EGL_EXTENSIONS))
	d := Device{Handle: uintptr(h), Ordinal: -1}
	switch {
	case hasWord(exts, "EGL_NV_device_cuda"):
		d.CUDA, d.Desc = true, "NVIDIA CUDA"
		var v C.intptr_t
		if C.hl_device_attrib(h, C.EGL_CUDA_DEVICE_NV, &v) != 0 && v >= 0 {
			d.Ordinal = int(v)
		}
	case hasWord(exts, "EGL_EXT_device_drm"):
		d.Desc = "DRM"
		if f := goStr(C.hl_device_string(h, C.EGL_DRM_DEVICE_FILE_EXT)); f != "" {
			d.Desc = f
		}
	case hasWord(exts, "EGL_MESA_device_software"):
		d.Desc = "Mesa software"
	default:
		d.Desc = "unknown"
	}
	return d
}

// openSurfaceless uses Mesa's surfaceless platform (EGL_DEFAULT_DISPLAY).
func openSurfaceless(client string, o Options) (*Context, error) {
	if !hasWord(client, "EGL_MESA_platform_surfaceless") {
		return nil, noDriver(errors.New("EGL lacks EGL_MESA_platform_surfaceless"))
	}
	var missing C.int
	dpy := C.hl_platform_display(C.EGL_PLATFORM_SURFACELESS_MESA, 0, &missing)
	if missing != 0 {
		return nil, noDriver(errors.New("EGL lacks eglGetPlatformDisplayEXT"))
	}
	if dpy == 0 {
		return nil, noDriver(eglErr("eglGetPlatformDisplayEXT"))
	}
	st, inited, err := openOn(dpy, o)
	if err != nil && !inited {
		err = noDriver(err)
	}
	return st, err
}

// openOn initialises dpy and makes a core context current on it. inited
// reports whether eglInitialize got that far.
func openOn(dpy C.uintptr_t, o Options) (st *Context, inited bool, err error) {
	var eglMajor, eglMinor C.EGLint
	eglMu.Lock()
	if eglRefs[dpy] == 0 && C.hl_initialize(dpy, &eglMajor, &eglMinor) == 0 {
		eglMu.Unlock()
		return nil, false, eglErr("eglInitialize")
	}
	eglRefs[dpy]++
	eglMu.Unlock()
	defer func() {
		if err != nil {
			unrefDisplay(dpy)
		}
	}()
	// Parsed rather than taken from eglInitialize: another Thread may have
	// initialised the display.
	if _, err := fmt.Sscanf(goStr(C.hl_query_string(dpy, C.EGL_VERSION)), "%d.%d", &eglMajor, &eglMinor); err != nil {
		eglMajor, eglMinor = 1, 4
	}
	exts := goStr(C.hl_query_string(dpy, C.EGL_EXTENSIONS))
	if apis := goStr(C.hl_query_string(dpy, C.EGL_CLIENT_APIS)); !hasWord(apis, "OpenGL") {
		return nil, true, fmt.Errorf("EGL display offers no desktop OpenGL (client APIs %q)", apis)
	}
	if C.hl_bind_api() == 0 {
		return nil, true, eglErr("eglBindAPI(EGL_OPENGL_API)")
	}
	createCtx := hasWord(exts, "EGL_KHR_create_context")
	if !createCtx && (eglMajor < 1 || eglMajor == 1 && eglMinor < 5) {
		return nil, true, fmt.Errorf("EGL %d.%d without EGL_KHR_create_context cannot ask for a core context", eglMajor, eglMinor)
	}
	// Options.Config takes the path of drivers without no-config or
	// surfaceless contexts: a chosen config and a 1x1 pbuffer.
	surfaceless := hasWord(exts, "EGL_KHR_surfaceless_context") && !o.Config
	var cfg C.uintptr_t // EGL_NO_CONFIG_KHR
	if !surfaceless || !hasWord(exts, "EGL_KHR_no_config_context") {
		var n C.EGLint
		if cfg = C.hl_choose_config(dpy, &n); cfg == 0 {
			return nil, true, fmt.Errorf("no pbuffer config for desktop OpenGL (%v)", eglErr("eglChooseConfig"))
		}
	}
	attrs := []C.EGLint{
		C.EGL_CONTEXT_MAJOR_VERSION, C.EGLint(o.Major),
		C.EGL_CONTEXT_MINOR_VERSION, C.EGLint(o.Minor),
		C.EGL_CONTEXT_OPENGL_PROFILE_MASK, C.EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
	}
	if o.Debug {
		if createCtx {
			attrs = append(attrs, C.EGL_CONTEXT_FLAGS_KHR, C.EGL_CONTEXT_OPENGL_DEBUG_BIT_KHR)
		} else {
			attrs = append(attrs, C.EGL_CONTEXT_OPENGL_DEBUG, C.EGL_TRUE)
		}
	}
	attrs = append(attrs, C.EGL_NONE)
	st = &Context{dpy: dpy}
	if st.ctx = C.hl_create_context(dpy, cfg, &attrs[0]); st.ctx == 0 {
		err := eglErr("eglCreateContext")
		// A refused version is the common cause: say what the driver has.
		if major, minor, ok := probeEGL(dpy, cfg, surfaceless, o.Version); ok && !AtLeast(major, minor, o.Major, o.Minor) {
			return nil, true, VersionError(o.Major, o.Minor, fmt.Sprintf("%d.%d", major, minor))
		}
		return nil, true, err
	}
	if !surfaceless {
		if st.surf = C.hl_create_pbuffer(dpy, cfg); st.surf == 0 {
			err := eglErr("eglCreatePbufferSurface")
			_ = st.destroy()
			return nil, true, err
		}
	}
	if C.hl_make_current(dpy, st.surf, st.ctx) == 0 {
		err := eglErr("eglMakeCurrent")
		_ = st.destroy()
		return nil, true, err
	}
	return st, true, nil
}

// probeEGL reports the version of the best core (else any) context dpy
// gives, for the error when the version asked for was refused; ok is false
// when it gives none at all.
func probeEGL(dpy, cfg C.uintptr_t, surfaceless bool, version func() (int, int, bool)) (major, minor int, ok bool) {
	for _, attrs := range [][]C.EGLint{
		{C.EGL_CONTEXT_MAJOR_VERSION, 3, C.EGL_CONTEXT_MINOR_VERSION, 2,
			C.EGL_CONTEXT_OPENGL_PROFILE_MASK, C.EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, C.EGL_NONE},
		{C.EGL_NONE},
	} {
		st := &Context{dpy: dpy}
		if st.ctx = C.hl_create_context(dpy, cfg, &attrs[0]); st.ctx == 0 {
			continue
		}
		if !surfaceless {
			st.surf = C.hl_create_pbuffer(dpy, cfg)
		}
		if C.hl_make_current(dpy, st.surf, st.ctx) != 0 {
			major, minor, ok = version()
		}
		_ = st.destroy()
		if ok {
			return major, minor, true
		}
	}
	return 0, 0, false
}

// AtLeast reports whether GL major.minor is wantMajor.wantMinor or later.
func AtLeast(major, minor, wantMajor, wantMinor int) bool {
	return major > wantMajor || major == wantMajor && minor >= wantMinor
}

// VersionError is the one-line error for a driver that offers too old a
// GL (EGL's or GLFW's).
func VersionError(major, minor int, gives string) error {
	return fmt.Errorf("OpenGL %d.%d needed, driver gives %s", major, minor, gives)
}

// destroy unbinds and frees the context and surface, leaving the display.
func (st *Context) destroy() error {
	var err error
	if C.hl_make_current(st.dpy, 0, 0) == 0 {
		err = eglErr("eglMakeCurrent(EGL_NO_CONTEXT)")
	}
	if st.ctx != 0 && C.hl_destroy_context(st.dpy, st.ctx) == 0 && err == nil {
		err = eglErr("eglDestroyContext")
	}
	if st.surf != 0 && C.hl_destroy_surface(st.dpy, st.surf) == 0 && err == nil {
		err = eglErr("eglDestroySurface")
	}
	st.ctx, st.surf = 0, 0
	return err
}

// Release frees the context and drops its hold on the display.
func (st *Context) Release() error {
	err := st.destroy()
	if e := unrefDisplay(st.dpy); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("glctx: freeing the EGL context: %v", err)
	}
	return nil
}

// Held counts the holds of contexts on EGL displays, for tests that check
// that every context let go.
func Held() int {
	eglMu.Lock()
	defer eglMu.Unlock()
	n := 0
	for _, refs := range eglRefs {
		n += refs
	}
	return n
}

// unrefDisplay terminates dpy when its last user lets go.
func unrefDisplay(dpy C.uintptr_t) error {
	eglMu.Lock()
	defer eglMu.Unlock()
	eglRefs[dpy]--
	if eglRefs[dpy] > 0 {
		return nil
	}
	delete(eglRefs, dpy)
	if C.hl_terminate(dpy) == 0 {
		return eglErr("eglTerminate")
	}
	return nil
}

// ProcAddr looks a GL or EGL function up through eglGetProcAddress.
func ProcAddr(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.hl_proc_addr(cs)
}

// ReleaseThread frees EGL's per-thread state before the thread ends.
func ReleaseThread() { C.hl_release_thread() }

// vendorDirs are where glvnd's EGL vendor files live: glvnd's own folders,
// then where NVIDIA's container images mount the driver's.
var vendorDirs = []string{
	"/etc/glvnd/egl_vendor.d", "/usr/share/glvnd/egl_vendor.d", "/usr/local/share/glvnd/egl_vendor.d",
	"/usr/local/nvidia/share/glvnd/egl_vendor.d",
}

// VendorHint says how to point glvnd at a vendor library, with the vendor
// files found here, for when EGL found no driver (NVIDIA servers sometimes).
func VendorHint() string {
	if v := os.Getenv("__EGL_VENDOR_LIBRARY_FILENAMES"); v != "" {
		return fmt.Sprintf("__EGL_VENDOR_LIBRARY_FILENAMES=%s is set; is that vendor library installed?", v)
	}
	var found []string
	for _, dir := range vendorDirs {
		m, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		found = append(found, m...)
	}
	if len(found) == 0 {
		return "no glvnd EGL vendor file in " + strings.Join(vendorDirs, ", ") + ": install the driver's EGL library (libegl-mesa0, or NVIDIA's) and set __EGL_VENDOR_LIBRARY_FILENAMES to its JSON"
	}
	return "point __EGL_VENDOR_LIBRARY_FILENAMES at the vendor's JSON (found: " + strings.Join(found, ", ") + ")"
}

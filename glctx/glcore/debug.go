package glcore

// This file exports hlDebugMessage to C, so its preamble may only declare.

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"log"
	"runtime/cgo"
	"strings"
	"unsafe"
)

// maxDebugErrs bounds the KHR_debug messages kept for one error.
const maxDebugErrs = 8

// KHR_debug's error type and the severities it logs.
const (
	glDebugTypeError      = 0x824C
	glDebugSeverityHigh   = 0x9146
	glDebugSeverityMedium = 0x9147
)

// Debug keeps one context's KHR_debug error messages until TakeErr
// reports them. It belongs to the context's thread.
type Debug struct {
	errs []string // error messages since the last check
	more int      // messages dropped beyond maxDebugErrs
	h    cgo.Handle
}

// hlDebugMessage receives KHR_debug messages from hl_debug_cb (glcore.go).
// The callback is synchronous, so it runs on the context's thread, in the
// call that caused it; user is the handle of the context's Debug.
//
//export hlDebugMessage
func hlDebugMessage(gltype, severity, id C.uint, length C.int, message *C.char, user C.uintptr_t) {
	d, ok := cgo.Handle(user).Value().(*Debug)
	if !ok {
		return
	}
	var msg string
	if length > 0 {
		msg = C.GoStringN(message, length)
	} else {
		msg = C.GoString(message)
	}
	msg = OneLine(msg)
	switch {
	case uint32(gltype) == glDebugTypeError:
		if len(d.errs) < maxDebugErrs {
			d.errs = append(d.errs, msg)
		} else {
			d.more++
		}
	case uint32(severity) == glDebugSeverityHigh || uint32(severity) == glDebugSeverityMedium:
		log.Printf("glctx: GL debug (id %d): %s", uint32(id), msg)
	}
}

// EnableDebug turns on synchronous KHR_debug output for the context
// current on this thread, whose functions proc looks up, so that messages
// arrive during the call that caused them. It returns nil when the
// context has no glDebugMessageCallback.
func EnableDebug(proc func(string) unsafe.Pointer) *Debug {
	dmc := proc("glDebugMessageCallback")
	if dmc == nil {
		log.Print("glctx: debug context without glDebugMessageCallback; only glGetError is checked")
		return nil
	}
	d := &Debug{}
	d.h = cgo.NewHandle(d)
	debugOutput(dmc, uintptr(d.h))
	return d
}

// Close frees d's handle; the context must be gone or its debug output
// off. A nil d does nothing.
func (d *Debug) Close() {
	if d != nil {
		d.h.Delete()
	}
}

// TakeErr drains glGetError and d's KHR_debug error messages (d may be
// nil), naming where they were found; nil when there were none.
func TakeErr(d *Debug, where string) error {
	var codes []string
	// GL keeps one flag per kind of error, so this ends; the bound guards
	// against a lost context answering forever.
	for range 16 {
		e := GetError()
		if e == 0 {
			break
		}
		codes = append(codes, glErrName(e))
	}
	var msgs []string
	more := 0
	if d != nil {
		msgs, more = d.errs, d.more
		d.errs, d.more = nil, 0
	}
	if len(codes) == 0 && len(msgs) == 0 {
		return nil
	}
	if len(codes) == 0 {
		codes = []string{"GL error"}
	}
	s := "glctx: " + strings.Join(codes, ", ") + " " + where
	if len(msgs) > 0 {
		s += " (KHR_debug: " + strings.Join(msgs, "; ")
		if more > 0 {
			s += fmt.Sprintf("; and %d more", more)
		}
		s += ")"
	}
	return errors.New(s)
}

// glErrName names a glGetError code.
func glErrName(e uint32) string {
	if name, ok := glErrNames[e]; ok {
		return name
	}
	return fmt.Sprintf("GL error 0x%x", e)
}

var glErrNames = map[uint32]string{
	0x0500: "GL_INVALID_ENUM", 0x0501: "GL_INVALID_VALUE", 0x0502: "GL_INVALID_OPERATION",
	0x0503: "GL_STACK_OVERFLOW", 0x0504: "GL_STACK_UNDERFLOW", 0x0505: "GL_OUT_OF_MEMORY",
	0x0506: "GL_INVALID_FRAMEBUFFER_OPERATION", 0x0507: "GL_CONTEXT_LOST",
}

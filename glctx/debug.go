package glctx

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
)

// maxDebugErrs bounds the KHR_debug messages kept for one error.
const maxDebugErrs = 8

// KHR_debug's error type and the severities it logs.
const (
	glDebugTypeError      = 0x824C
	glDebugSeverityHigh   = 0x9146
	glDebugSeverityMedium = 0x9147
)

// hlDebugMessage receives KHR_debug messages from hl_debug_cb (gl.go). The
// callback is synchronous, so it runs on the loop, in the call that caused
// it; user is the handle of the Thread whose context it is.
//
//export hlDebugMessage
func hlDebugMessage(gltype, severity, id C.uint, length C.int, message *C.char, user C.uintptr_t) {
	t, ok := cgo.Handle(user).Value().(*Thread)
	if !ok || !t.debug {
		return
	}
	var msg string
	if length > 0 {
		msg = C.GoStringN(message, length)
	} else {
		msg = C.GoString(message)
	}
	msg = oneLine(msg)
	switch {
	case uint32(gltype) == glDebugTypeError:
		if len(t.dbgErrs) < maxDebugErrs {
			t.dbgErrs = append(t.dbgErrs, msg)
		} else {
			t.dbgMore++
		}
	case uint32(severity) == glDebugSeverityHigh || uint32(severity) == glDebugSeverityMedium:
		log.Printf("glctx: GL debug (id %d): %s", uint32(id), msg)
	}
}

// enableDebug turns on synchronous KHR_debug output for this context, so
// messages arrive on the loop during the call that caused them.
func (t *Thread) enableDebug() {
	dmc := t.procAddr("glDebugMessageCallback")
	if dmc == nil {
		log.Print("glctx: debug context without glDebugMessageCallback; only glGetError is checked")
		return
	}
	t.dbg = cgo.NewHandle(t)
	debugOutput(dmc, uintptr(t.dbg))
}

// takeErr drains glGetError and the KHR_debug error messages, naming where
// they were found; nil when there were none. Loop only.
func (t *Thread) takeErr(where string) error {
	var codes []string
	// GL keeps one flag per kind of error, so this ends; the bound guards
	// against a lost context answering forever.
	for range 16 {
		e := glGetError()
		if e == 0 {
			break
		}
		codes = append(codes, glErrName(e))
	}
	msgs, more := t.dbgErrs, t.dbgMore
	t.dbgErrs, t.dbgMore = nil, 0
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

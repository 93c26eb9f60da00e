package glctx

// This file exports hlDebugMessage to C, so its preamble may only declare.

/*
#include <stdint.h>
uint64_t hl_self(void);
void hl_set_debug_callback(void *dmc);
*/
import "C"

import (
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"

	gl "github.com/go-gl/gl/v4.1-core/gl"
)

// maxDebugErrs bounds the KHR_debug messages kept for one error.
const maxDebugErrs = 8

// dbgThreads maps a GL thread's pthread id to its Thread. The debug callback
// is synchronous, so it runs on the thread whose GL call caused it, and this
// routes it without go-gl's single package-wide callback variable. The
// main thread, which serves several Threads under Main, is not in it: there
// the message belongs to the Thread whose work is running.
var dbgThreads sync.Map // uint64 -> *Thread

// hlDebugMessage receives KHR_debug messages from hl_debug_cb (egl.go).
//
//export hlDebugMessage
func hlDebugMessage(gltype, severity, id C.uint, length C.int, message *C.char) {
	var t *Thread
	if self := uint64(C.hl_self()); self == mainTid {
		t = mainSrv.top()
	} else if v, ok := dbgThreads.Load(self); ok {
		t = v.(*Thread)
	}
	if t == nil || !t.debug {
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
	case uint32(gltype) == gl.DEBUG_TYPE_ERROR:
		if len(t.dbgErrs) < maxDebugErrs {
			t.dbgErrs = append(t.dbgErrs, msg)
		} else {
			t.dbgMore++
		}
	case uint32(severity) == gl.DEBUG_SEVERITY_HIGH || uint32(severity) == gl.DEBUG_SEVERITY_MEDIUM:
		log.Printf("glctx: GL debug (id %d): %s", uint32(id), msg)
	}
}

// enableDebug turns on synchronous KHR_debug output for this context, so
// messages arrive on the GL thread during the call that caused them.
func (t *Thread) enableDebug() {
	dmc := t.procAddrHere("glDebugMessageCallback")
	if dmc == nil {
		log.Print("glctx: debug context without glDebugMessageCallback; only glGetError is checked")
		return
	}
	if !t.onMain {
		dbgThreads.Store(t.tid, t)
	}
	gl.Enable(gl.DEBUG_OUTPUT)
	gl.Enable(gl.DEBUG_OUTPUT_SYNCHRONOUS)
	C.hl_set_debug_callback(dmc)
}

// takeErr drains glGetError and the KHR_debug error messages, naming where
// they were found; nil when there were none. GL thread only.
func (t *Thread) takeErr(where string) error {
	var codes []string
	// GL keeps one flag per kind of error, so this ends; the bound guards
	// against a lost context answering forever.
	for range 16 {
		e := gl.GetError()
		if e == gl.NO_ERROR {
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
	switch e {
	case gl.INVALID_ENUM:
		return "GL_INVALID_ENUM"
	case gl.INVALID_VALUE:
		return "GL_INVALID_VALUE"
	case gl.INVALID_OPERATION:
		return "GL_INVALID_OPERATION"
	case gl.STACK_OVERFLOW:
		return "GL_STACK_OVERFLOW"
	case gl.STACK_UNDERFLOW:
		return "GL_STACK_UNDERFLOW"
	case gl.OUT_OF_MEMORY:
		return "GL_OUT_OF_MEMORY"
	case gl.INVALID_FRAMEBUFFER_OPERATION:
		return "GL_INVALID_FRAMEBUFFER_OPERATION"
	case 0x0507:
		return "GL_CONTEXT_LOST"
	}
	return fmt.Sprintf("GL error 0x%x", e)
}

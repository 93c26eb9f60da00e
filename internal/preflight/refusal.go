// Package preflight holds the checks made before any work starts, so that
// bad input is refused in one line (exit 2) and nothing is trained,
// written or left behind: every output path, and whether a run fits in
// memory.
package preflight

import "fmt"

// Refusal is bad input found before any work: a command exits 2 on it.
type Refusal struct{ Err error }

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse marks err as a refusal.
func Refuse(err error) error { return &Refusal{err} }

// Refusef is a refusal of the message format makes of args.
func Refusef(format string, args ...any) error { return Refuse(fmt.Errorf(format, args...)) }

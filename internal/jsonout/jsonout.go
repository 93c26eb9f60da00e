// Package jsonout is the one JSON style of headlab's reports on stdout:
// indented by two spaces, one trailing newline.
package jsonout

import (
	"encoding/json"
	"io"
)

// Write writes v on w in headlab's JSON style.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

package bench

import (
	"io"

	"headlab/internal/jsonout"
)

// Print writes rep on w as `headlab bench` does: one indented JSON
// object when asJSON, else its tables (WriteText).
func (rep *Report) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		return jsonout.Write(w, rep)
	}
	return rep.WriteText(w)
}

// PrintVsPyTorch writes rep on w as `headlab bench vs-pytorch` does: one
// indented JSON object when asJSON, else its text (WriteVsPyTorch).
func (rep *Report) PrintVsPyTorch(w io.Writer, asJSON bool, python string, rounds, rssSteps int) error {
	if asJSON {
		return jsonout.Write(w, rep)
	}
	return rep.WriteVsPyTorch(w, python, rounds, rssSteps)
}

package sweep

import (
	"fmt"
	"io"
	"strings"
)

// Write reports a merge of inputs databases into out: the inputs' notes
// and, when the runs now span several backends, a warning on stderr;
// the counts in one line on stdout.
func (res MergeResult) Write(stdout, stderr io.Writer, out string, inputs int) {
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "merge: %s\n", n)
	}
	if len(res.Backends) > 1 {
		fmt.Fprintf(stderr, "merge: %s now holds runs of backends %s: they agree as distributions over seeds, not bit for bit\n",
			out, strings.Join(res.Backends, ", "))
	}
	fmt.Fprintf(stdout, "merged %d databases into %s: %d runs added, %d duplicates skipped, %d runs in all\n",
		inputs, out, res.Added, res.Duplicates, res.Total)
}

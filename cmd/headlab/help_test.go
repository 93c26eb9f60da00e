package main

import (
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryHelpFileIsShown: each file in help/ is some command's long
// help (or part of it), or the exit table every usage ends with; a file
// no command shows would be help nobody reads.
func TestEveryHelpFileIsShown(t *testing.T) {
	var shown []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		shown = append(shown, c.Long)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd(&env{stdout: io.Discard, stderr: io.Discard}))
	all := strings.Join(append(shown, exitTable), "\n")
	names, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil || len(names) < 20 {
		t.Fatalf("%d help files: %v", len(names), err)
	}
	for _, name := range names {
		text := longHelp(strings.TrimSuffix(strings.TrimPrefix(name, "help/"), ".txt"))
		if text == "" || !strings.Contains(all, strings.SplitN(text, "{", 2)[0]) {
			t.Errorf("%s is in no command's help", name)
		}
	}
}

// Command headlab trains tiny decoder-only transformers on toy tasks and
// reports what their attention heads do.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"headlab/glctx"
	"headlab/internal/simd"
	"headlab/internal/version"
)

// versionLine is what `headlab version` and `--version` print after
// "headlab ": the module version and the VCS revision.
func versionLine() string {
	return fmt.Sprintf("%s, revision %s", version.Module(), version.Revision())
}

// usageError marks bad input: the process exits 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// env carries the streams a command writes to, so tests can run commands
// in-process.
type env struct {
	stdout, stderr io.Writer
}

// commands holds every subcommand's constructor; each command's file adds
// its own in init, so adding a command touches no other file.
var commands []func(*env) *cobra.Command

func rootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "headlab",
		Short:         "Train tiny transformers on toy tasks and watch their attention heads form",
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// run prints its own one-line suggestion (cobra's spans lines).
		DisableSuggestions: true,
	}
	root.SetVersionTemplate("headlab {{.Version}}\n")
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, c := range commands {
		root.AddCommand(c(e))
	}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print headlab's module version and VCS revision",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintf(e.stdout, "headlab %s\n", versionLine()) },
	})
	return root
}

// suggest turns cobra's unknown-command error into one line that names the
// nearest commands, if any.
func suggest(root *cobra.Command, msg string) string {
	var typed string
	if _, err := fmt.Sscanf(msg, "unknown command %q", &typed); err != nil {
		return msg
	}
	root.SuggestionsMinimumDistance = 2
	if s := root.SuggestionsFor(typed); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return msg
}

// run executes headlab with args and returns the exit status: 0 on success,
// 2 for bad input, 1 for anything else.
func run(args []string, stdout, stderr io.Writer) int {
	// HEADLAB_SIMD forcing a vector path this CPU cannot run is bad input.
	if err := simd.Choose(); err != nil {
		fmt.Fprintln(stderr, "headlab:", err)
		return 2
	}
	root := rootCmd(&env{stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	// One line, whatever wrapped it.
	msg := suggest(root, strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; "))
	fmt.Fprintln(stderr, "headlab:", msg)
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.Contains(msg, "accepts 0 arg") {
		return 2
	}
	return 1
}

func main() {
	code := 1
	// GLFW's window and event calls must run on the main OS thread (macOS
	// demands it): glctx serves them there while the command runs on
	// another goroutine.
	glctx.Main(func() { code = run(os.Args[1:], os.Stdout, os.Stderr) })
	os.Exit(code)
}

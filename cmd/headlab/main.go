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
	"headlab/internal/interrupt"
	"headlab/internal/preflight"
	"headlab/internal/simd"
	"headlab/internal/version"
)

// versionLine is what `headlab version` and `--version` print after
// "headlab ": the module version and the VCS revision.
func versionLine() string {
	return fmt.Sprintf("%s, revision %s", version.Module(), version.Revision())
}

// Exit statuses, one rule for every command (README, headlab --help).
const (
	exitOK          = 0
	exitFailed      = 1   // a failure during work
	exitBadInput    = 2   // bad input or arguments, refused before work starts
	exitInterrupted = 130 // stopped by SIGINT or SIGTERM (128 + SIGINT)
)

// exitTable is the table of exit statuses for headlab --help.
var exitTable = longHelp("exit-status")

// usageError marks bad input: the process exits 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// interruptedError marks work stopped by a signal: the process exits 130.
type interruptedError struct{ error }

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
	root.SetUsageTemplate(root.UsageTemplate() + "\n" + exitTable + "\n")
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, c := range commands {
		root.AddCommand(c(e))
	}
	// cobra's completion command prints its help, exit 0, for a shell it
	// does not know: that is bad input.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Args = cobra.NoArgs
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
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

// run executes headlab with args and returns the exit status (exitTable).
func run(args []string, stdout, stderr io.Writer) int {
	// HEADLAB_SIMD forcing a vector path this CPU cannot run is bad input.
	if err := simd.Choose(); err != nil {
		fmt.Fprintln(stderr, "headlab:", err)
		return exitBadInput
	}
	return execute(rootCmd(&env{stdout: stdout, stderr: stderr}), args, stderr)
}

// execute runs root on args and returns the exit status, having said why
// in one line on stderr when it is not 0.
func execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	// One line, whatever wrapped it.
	msg := suggest(root, strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; "))
	fmt.Fprintln(stderr, "headlab:", msg)
	return exitCode(err, msg)
}

// exitCode maps an error a command returned to its exit status.
func exitCode(err error, msg string) int {
	var ue usageError
	var ie interruptedError
	var pr *preflight.Refusal
	switch {
	case errors.As(err, &ie):
		return exitInterrupted
	case errors.As(err, &ue) || errors.As(err, &pr) || strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.Contains(msg, "accepts 0 arg"):
		return exitBadInput
	}
	return exitFailed
}

// exitOnSignal ends any command on SIGINT or SIGTERM at once with
// exitInterrupted, as exitTable says, unless it stops gracefully itself
// (internal/interrupt).
func exitOnSignal(stderr io.Writer) { interrupt.ExitOn(stderr, exitInterrupted) }

func main() {
	code := 1
	exitOnSignal(os.Stderr)
	// GLFW's window and event calls must run on the main OS thread (macOS
	// demands it): glctx serves them there while the command runs on
	// another goroutine.
	glctx.Main(func() { code = run(os.Args[1:], os.Stdout, os.Stderr) })
	os.Exit(code)
}

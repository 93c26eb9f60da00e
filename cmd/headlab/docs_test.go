package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// The docs cannot go stale (docs/cli.md, "How the docs are checked"):
//
//   - docs/cli.md is generated from the commands' own help by cobra's doc
//     generator; TestCLIDoc fails when it differs.
//   - A fenced block right after `<!-- output: COMMAND -->` in README.md
//     or docs/*.md is COMMAND's standard output; TestDocOutputs runs
//     COMMAND (bash, with this build as `headlab`, in a folder where the
//     default model is trained into runs/ind1) and compares, timings aside.
//   - The image right after `<!-- picture: COMMAND -->` is what COMMAND
//     draws at the image's path.
//   - The paragraph right after `<!-- prose: COMMAND -->` may quote only
//     numbers that COMMAND prints (rounded or whole), and labels with
//     their scores as it prints them (`induction 0.96`), so a sentence
//     about a model says what its table shows.
//
// `go test ./cmd/headlab -run 'TestCLIDoc|TestDocOutputs' -update`
// rewrites docs/cli.md, every output block and picture; prose is
// rewritten by hand.
var updateDocs = flag.Bool("update", false, "rewrite docs/cli.md and the docs' output blocks and pictures from what the commands print and draw now")

// updateHint is what a failing docs test tells its reader to run.
const updateHint = "go test ./cmd/headlab -run 'TestCLIDoc|TestDocOutputs' -update"

// defaultModel trains the model the docs' commands read (scripts/run.sh's
// own training, saved where the README says).
const defaultModel = "headlab train --task induction --save runs/ind1"

// checkedDocs are the files whose blocks are checked: README.md and
// docs/*.md, less docs/findings.md, which `headlab reproduce` writes.
func checkedDocs(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md"}
	for _, d := range mustGlob(t, "../../docs/*.md") {
		if filepath.Base(d) != "findings.md" {
			files = append(files, d)
		}
	}
	return files
}

// cliDoc is docs/cli.md: every command's help, as cobra's doc generator
// writes it, on one page.
func cliDoc() ([]byte, error) {
	root := rootCmd(&env{stdout: io.Discard, stderr: io.Discard})
	root.DisableAutoGenTag = true // no date: the page changes only when the help does
	var buf bytes.Buffer
	buf.WriteString("# Command reference\n\n" +
		"<!-- Generated from the commands' own help by cobra's doc generator: do not edit.\n" +
		"     Regenerate: " + updateHint + " -->\n\n" +
		"Every command's `--help`, on one page. Exit statuses and what a\n" +
		"newcomer runs first: [README](../README.md); how the docs are checked:\n" +
		"[below](#how-the-docs-are-checked).\n\n")
	// A link to another command's page becomes a link to its section here.
	link := func(name string) string {
		return "#" + strings.ReplaceAll(strings.TrimSuffix(name, ".md"), "_", "-")
	}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		machineDefaults(c)
		if err := doc.GenMarkdownCustom(c, &buf, link); err != nil {
			return err
		}
		for _, child := range c.Commands() {
			if child.IsAvailableCommand() && !child.IsAdditionalHelpTopicCommand() {
				if err := walk(child); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	buf.WriteString(docsCheckedNote)
	return buf.Bytes(), nil
}

// machineDefaults shows a default that is this machine's CPU count as
// nproc, so that the page is the same on every machine.
func machineDefaults(c *cobra.Command) {
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "workers" && f.DefValue == strconv.Itoa(runtime.NumCPU()) {
			f.DefValue = "nproc"
		}
	})
}

// docsCheckedNote ends docs/cli.md: the rules every doc is held to.
const docsCheckedNote = "## How the docs are checked\n\n" +
	"This page is generated: `" + updateHint + "`\n" +
	"rewrites it, and `TestCLIDoc` (cmd/headlab/docs_test.go) fails when it\n" +
	"differs from the commands' help. Add a flag or a command, run that line.\n\n" +
	"Everything README.md and docs/*.md show from running headlab is checked\n" +
	"the same way, but for docs/findings.md, which `headlab reproduce` writes,\n" +
	"and docs/performance.md's measured figures, benchmarks that name their\n" +
	"processor. `TestDocOutputs` trains the default model\n" +
	"(`" + defaultModel + "`, scripts/run.sh's own training)\n" +
	"in a temporary folder, then:\n\n" +
	"- a fenced block right after a line `<!-- output: COMMAND -->` must be\n" +
	"  COMMAND's standard output (run by bash in that folder, with this build\n" +
	"  as `headlab`), durations, rates and the SIMD path aside; `-update`\n" +
	"  rewrites the block;\n" +
	"- the paragraph right after a line `<!-- prose: COMMAND -->` may quote only\n" +
	"  numbers COMMAND prints (whole or rounded) and, in backquotes, labels\n" +
	"  with the score it prints beside them (`induction 0.96`), so a sentence about the\n" +
	"  default model says what its table shows; when one drifts, the test names\n" +
	"  it and the sentence is rewritten by hand;\n" +
	"- an image right after a line `<!-- picture: COMMAND -->` must be what\n" +
	"  COMMAND draws at its path from the repository's root (the same size, and\n" +
	"  at most 1 pixel in 2,000 off by more than 8 levels: antialiasing may\n" +
	"  round another way on another machine); `-update` redraws it.\n\n" +
	"`TestDocLinks` fails on a relative link, in README.md or docs/*.md, to a\n" +
	"file or heading that does not exist.\n"

// TestCLIDoc: docs/cli.md is what cobra's generator makes of the help now.
func TestCLIDoc(t *testing.T) {
	want, err := cliDoc()
	if err != nil {
		t.Fatal(err)
	}
	const path = "../../docs/cli.md"
	if *updateDocs {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with: %s", err, updateHint)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/cli.md is out of date with the commands' help (%s): regenerate it with: %s", firstDiff(string(got), string(want)), updateHint)
	}
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d is %q, the command prints %q", i+1, gl, wl)
		}
	}
	return "they are equal"
}

// marker is one `<!-- output: ... -->` or `<!-- prose: ... -->` line.
var marker = regexp.MustCompile(`^<!-- (output|prose|picture): (.+) -->$`)

// docBlock is what a marker checks: the lines after it, from..to
// (exclusive), of a doc's lines.
type docBlock struct {
	file, kind, command string
	line                int // the marker's, 1-based
	from, to            int
}

// findBlocks lists the marked blocks of a doc: an output marker's fenced
// block (from its first line inside the fence to the closing fence), a
// prose marker's paragraph (to the next blank line).
func findBlocks(file string, lines []string) ([]docBlock, error) {
	var blocks []docBlock
	for i, l := range lines {
		m := marker.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		b := docBlock{file: file, kind: m[1], command: m[2], line: i + 1, from: i + 1}
		switch b.kind {
		case "output":
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
				return nil, fmt.Errorf("%s:%d: an output marker must be followed by a fenced block", file, i+1)
			}
			b.from = i + 2
			b.to = -1
			for j := b.from; j < len(lines); j++ {
				if lines[j] == "```" {
					b.to = j
					break
				}
			}
			if b.to < 0 {
				return nil, fmt.Errorf("%s:%d: the fenced block is not closed", file, i+1)
			}
		case "picture":
			if i+1 >= len(lines) || !imageLine.MatchString(lines[i+1]) {
				return nil, fmt.Errorf("%s:%d: a picture marker must be followed by an image", file, i+1)
			}
			b.to = i + 2
		case "prose":
			b.to = b.from
			for b.to < len(lines) && strings.TrimSpace(lines[b.to]) != "" {
				b.to++
			}
			if b.to == b.from {
				return nil, fmt.Errorf("%s:%d: a prose marker must be followed by its paragraph", file, i+1)
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// timings are what changes from run to run, or with the machine, in
// otherwise deterministic output: durations, rates, the SIMD path.
var timings = []*regexp.Regexp{
	regexp.MustCompile(`\d+(\.\d+)? ?(ms/step|steps/s|ms|s)\b`),
	regexp.MustCompile(`\bsimd [a-z0-9]+`),
}

// withoutTimings blanks what timings match.
func withoutTimings(s string) string {
	for _, re := range timings {
		s = re.ReplaceAllString(s, "…")
	}
	return s
}

// docRunner runs the docs' commands, each once, in one folder.
type docRunner struct {
	dir, bin string
	outputs  map[string]string
}

// newDocRunner makes a folder with a `headlab` that is this test binary
// (TestSweepHelperProcess runs the command), the Python the tests use and
// the repository's tools, and trains the default model there.
func newDocRunner(t *testing.T) *docRunner {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shim := fmt.Sprintf("#!/bin/sh\nHEADLAB_HELPER=1 exec %q -test.run='^TestSweepHelperProcess$' -- \"$@\"\n", self)
	if err := os.WriteFile(filepath.Join(bin, "headlab"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	// The tools' `#!/usr/bin/env python3` finds the Python with numpy
	// (scripts/setup.sh installs Debian's), as on a fresh machine.
	if err := os.Symlink(defaultPython(), filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	tools, err := filepath.Abs("../../tools")
	if err != nil {
		t.Fatal(err)
	}
	r := &docRunner{dir: filepath.Join(dir, "work"), bin: bin, outputs: map[string]string{}}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tools, filepath.Join(r.dir, "tools")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(r.dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.output(defaultModel); err != nil {
		t.Fatal(err)
	}
	return r
}

// output runs command (once: a repeated command gives its first output).
func (r *docRunner) output(command string) (string, error) {
	if out, ok := r.outputs[command]; ok {
		return out, nil
	}
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "PATH="+r.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HEADLAB_HELPER=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("`%s`: %v: %s", command, err, strings.TrimSpace(stderr.String()))
	}
	out := strings.TrimRight(stdout.String(), "\n")
	r.outputs[command] = out
	return out, nil
}

// TestDocOutputs runs every marked command of the docs and holds its
// block to what it prints (see the top of this file).
func TestDocOutputs(t *testing.T) {
	r := newDocRunner(t)
	for _, file := range checkedDocs(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		blocks, err := findBlocks(file, lines)
		if err != nil {
			t.Fatal(err)
		}
		// Rewritten from the last block up, so earlier line numbers hold.
		changed := false
		for k := len(blocks) - 1; k >= 0; k-- {
			b := blocks[k]
			out, err := r.output(b.command)
			if err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
				continue
			}
			shown := strings.Join(lines[b.from:b.to], "\n")
			switch b.kind {
			case "output":
				if withoutTimings(shown) == withoutTimings(out) {
					continue
				}
				if *updateDocs {
					lines = append(lines[:b.from], append(strings.Split(out, "\n"), lines[b.to:]...)...)
					changed = true
					continue
				}
				t.Errorf("%s:%d: the block differs from what `%s` prints now (%s); rewrite it with: %s",
					b.file, b.line, b.command, firstDiff(withoutTimings(shown), withoutTimings(out)), updateHint)
			case "picture":
				// The command draws the picture at its path from the
				// repository's root, in the folder it runs in.
				path := filepath.Join(filepath.Dir(b.file), imageLine.FindStringSubmatch(shown)[1])
				rel, err := filepath.Rel("../..", path)
				if err != nil {
					t.Fatal(err)
				}
				drawn := filepath.Join(r.dir, rel)
				if *updateDocs {
					copyFile(t, drawn, path, 0o644)
					continue
				}
				if why := pictureDiffers(t, drawn, path); why != "" {
					t.Errorf("%s:%d: %s differs from what `%s` draws now (%s); redraw it with: %s", b.file, b.line, rel, b.command, why, updateHint)
				}
			case "prose":
				for _, q := range unprinted(shown, out) {
					t.Errorf("%s:%d: the paragraph quotes %s, which `%s` does not print: rewrite the sentence to say what it prints", b.file, b.line, q, b.command)
				}
			}
		}
		if changed {
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// image is a line that is one markdown image; its path is the match.
var imageLine = regexp.MustCompile(`^!\[[^\]]*\]\(([^)\s]+)\)$`)

// pictureDiffers says how the PNG drawn differs from the doc's, or ""
// when it does not: the same size, and at most 1 pixel in 2,000 with a
// channel more than 8 levels off (antialiasing may round another way on
// another machine; a changed title or label moves thousands).
func pictureDiffers(t *testing.T, drawn, shown string) string {
	for _, p := range []string{drawn, shown} {
		if _, err := os.Stat(p); err != nil {
			return err.Error()
		}
	}
	a, b := readPNG(t, drawn), readPNG(t, shown)
	if a.Bounds() != b.Bounds() {
		return fmt.Sprintf("size %v, drawn %v", b.Bounds().Size(), a.Bounds().Size())
	}
	off, r := 0, a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			pa, pb := a.RGBAAt(x, y), b.RGBAAt(x, y)
			for _, d := range [][2]uint8{{pa.R, pb.R}, {pa.G, pb.G}, {pa.B, pb.B}, {pa.A, pb.A}} {
				if max(d[0], d[1])-min(d[0], d[1]) > 8 {
					off++
					break
				}
			}
		}
	}
	if n := r.Dx() * r.Dy(); off*2000 > n {
		return fmt.Sprintf("%d of its %d pixels", off, n)
	}
	return ""
}

// number is a decimal as prose and tables write it.
var number = regexp.MustCompile(`-?\d+(,\d{3})*(\.\d+)?(e-?\d+)?`)

// labelQuote is a head's label and score in backquotes, `induction 0.96`.
var labelQuote = regexp.MustCompile("`([a-z][a-z -]*[a-z] -?\\d+\\.\\d+)`")

// unprinted returns what prose quotes that output does not print: numbers,
// whole or rounded to the prose's decimals, and labels with their scores
// in backquotes, verbatim. Other numbers inside backquotes (flags,
// commands: `--steps 2500`) and head names are not quotes.
func unprinted(prose, output string) []string {
	var missing []string
	for _, m := range labelQuote.FindAllStringSubmatch(prose, -1) {
		if !strings.Contains(output, m[1]) {
			missing = append(missing, m[0])
		}
	}
	prose = regexp.MustCompile("`[^`]*`").ReplaceAllString(prose, "")
	prose = regexp.MustCompile(`\bL\d+H\d+\b|\bL\d+\b`).ReplaceAllString(prose, "")
	prose = regexp.MustCompile(`(\d)-`).ReplaceAllString(prose, "$1 ") // a range, 8-15, is two numbers
	var printed []string
	for _, s := range number.FindAllString(output, -1) {
		printed = append(printed, strings.ReplaceAll(s, ",", ""))
	}
	for _, q := range number.FindAllString(prose, -1) {
		want := strings.ReplaceAll(q, ",", "")
		if !printedAs(want, printed) {
			missing = append(missing, q)
		}
	}
	return missing
}

// printedAs reports whether some printed number, rounded to q's
// decimals, reads q.
func printedAs(q string, printed []string) bool {
	if _, err := strconv.ParseFloat(q, 64); err != nil {
		return false
	}
	// q's decimals: after the point, or in its mantissa (4.4e-06).
	format, decimals := byte('f'), 0
	mantissa, _, isExp := strings.Cut(q, "e")
	if isExp {
		format = 'e'
	}
	if i := strings.IndexByte(mantissa, '.'); i >= 0 {
		decimals = len(mantissa) - i - 1
	}
	for _, p := range printed {
		pv, err := strconv.ParseFloat(p, 64)
		if err != nil {
			continue
		}
		if p == q || strconv.FormatFloat(pv, format, decimals, 64) == q {
			return true
		}
	}
	return false
}

// TestDocLinks: every relative link of README.md and docs/*.md names a
// file that exists, and a heading there when it names one.
func TestDocLinks(t *testing.T) {
	files := append([]string{"../../README.md"}, mustGlob(t, "../../docs/*.md")...)
	anchors := map[string]map[string]bool{}
	headingsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, l := range proseLines(string(raw)) {
			m := heading.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				a[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				a[s] = true
			}
			seen[s]++
		}
		anchors[path] = a
		return a
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range proseLines(string(raw)) {
			l = inlineCode.ReplaceAllString(l, "")
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link to %s: no such file", file, i+1, target)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(resolved, ".md") && !headingsOf(resolved)[anchor] {
					t.Errorf("%s:%d: link to %s: no heading #%s there", file, i+1, target, anchor)
				}
			}
		}
	}
}

var (
	heading    = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*$`)
	link       = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	notInSlug  = regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc}\- ]`)
)

// slug is GitHub's anchor for a heading: its text in lower case, without
// markup or punctuation but hyphens and underscores, spaces as hyphens.
func slug(text string) string {
	text = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1")
	return strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
}

// proseLines returns a doc's lines with those of fenced code blocks
// blanked (their links and headings are code), numbered as in the file.
func proseLines(doc string) []string {
	lines := strings.Split(doc, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProseCheck: the prose rule finds a drifted number or label and
// passes what the output prints, rounded or whole.
func TestProseCheck(t *testing.T) {
	output := "| L0H1 | previous-token 0.47 | 44.3% |\nmean answer logit 11.004, L1H1 4.956, within 4.4e-06; positions 8 to 15"
	cases := []struct {
		prose string
		want  []string
	}{
		{"L0H1, labelled `previous-token 0.47`, falls to 44.3%; L1H1 writes 4.96 of 11.0 (within 4.4e-06), at 8-15", nil},
		{"they write 10.2 of the mean answer logit's 13.1", []string{"10.2", "13.1"}},
		{"labelled `uniform 0.55`", []string{"`uniform 0.55`"}},
		{"L1H1 writes 4.95 under `--steps 2500`", []string{"4.95"}},
		{"within 4.5e-06", []string{"4.5e-06"}},
	}
	for _, c := range cases {
		if got := unprinted(c.prose, output); !slices.Equal(got, c.want) {
			t.Errorf("unprinted(%q) = %q, want %q", c.prose, got, c.want)
		}
	}
}

// TestSlug: anchors as GitHub makes them from headings.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"How the docs are checked":           "how-the-docs-are-checked",
		"Today's figures":                    "todays-figures",
		"The GPU engine: many seeds at once": "the-gpu-engine-many-seeds-at-once",
		"Vector paths (HEADLAB_SIMD)":        "vector-paths-headlab_simd",
		"headlab bench vs-pytorch":           "headlab-bench-vs-pytorch",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

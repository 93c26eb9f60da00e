package main

import (
	"embed"
	"strings"
)

// Each command's long help is text of its own, help/NAME.txt, apart from
// the wiring; docs/cli.md is made from it (docs_test.go).
//
//go:embed help/*.txt
var helpFiles embed.FS

// longHelp is help/name.txt, less its final newline. A missing file is a
// mistake of the build, which every test of the commands meets.
func longHelp(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

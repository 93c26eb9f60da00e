// Package archtest holds the architecture test of headlab (arch_test.go):
// the table of docs/architecture.md says which headlab packages each
// package may import, and which may import Gorgonia; the test reads the
// module's import graph and its exported types and fails on whatever
// breaks a rule. The package has no code of its own.
package archtest

package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// module is headlab's module path; table rows name packages relative to it.
const module = "headlab"

// doc is the file whose table is the rule, relative to the module root.
const doc = "docs/architecture.md"

// rule is one row of the table: what a package may import.
type rule struct {
	pkg     string          // relative to the module: "graph", "cmd/headlab"
	any     bool            // every headlab package
	imports map[string]bool // the headlab packages it may import
	// gorgonia is "yes" (its code may import Gorgonia), "tests" (its test
	// files only) or "no".
	gorgonia string
	line     int // the row's line in doc
}

// gorgonia says whether an import path is Gorgonia's: its modules, and
// github.com/chewxy/hm, the type system its ops are typed in.
func gorgonia(path string) bool {
	return strings.HasPrefix(path, "gorgonia.org/") || path == "github.com/chewxy/hm" || strings.HasPrefix(path, "github.com/chewxy/hm/")
}

// moduleRoot is the directory of headlab's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("go env GOMOD: not in a module")
	}
	return filepath.Dir(gomod)
}

// splitRow splits a markdown table row into its trimmed cells.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

var parenthesis = regexp.MustCompile(`\([^()]*\)`)

// parseTable reads the table of what each package may import from the
// markdown r: the table whose header has the columns "package", "may
// import (headlab)" and "Gorgonia".
func parseTable(r io.Reader) (map[string]*rule, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	header := -1
	var pkgCol, impCol, gorCol int
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			continue
		}
		cells := splitRow(l)
		pkgCol, impCol, gorCol = slices.Index(cells, "package"), slices.Index(cells, "may import (headlab)"), slices.Index(cells, "Gorgonia")
		if pkgCol >= 0 && impCol >= 0 && gorCol >= 0 {
			header = i
			break
		}
	}
	if header < 0 {
		return nil, errors.New(`no table with the columns "package", "may import (headlab)" and "Gorgonia"`)
	}
	rules := map[string]*rule{}
	for i := header + 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		line := i + 1
		cells := splitRow(lines[i])
		if len(cells) <= max(pkgCol, impCol, gorCol) {
			return nil, fmt.Errorf("line %d: %d cells, want at least %d", line, len(cells), max(pkgCol, impCol, gorCol)+1)
		}
		r := &rule{pkg: strings.Trim(cells[pkgCol], "`"), imports: map[string]bool{}, line: line}
		if prev, dup := rules[r.pkg]; dup {
			return nil, fmt.Errorf("line %d: package %s has a row already, at line %d", line, r.pkg, prev.line)
		}
		switch imp := strings.TrimSpace(parenthesis.ReplaceAllString(cells[impCol], "")); imp {
		case "any":
			r.any = true
		case "none":
		default:
			for _, p := range strings.Split(imp, ",") {
				p = strings.Trim(strings.TrimSpace(p), "`")
				if p == "" || strings.ContainsAny(p, " \t") {
					return nil, fmt.Errorf("line %d: package %s: %q is not a package path (want any, none, or paths separated by commas)", line, r.pkg, p)
				}
				r.imports[p] = true
			}
		}
		word, _, _ := strings.Cut(cells[gorCol], ":")
		switch r.gorgonia = strings.TrimSpace(word); r.gorgonia {
		case "yes", "tests", "no":
		default:
			return nil, fmt.Errorf("line %d: package %s: Gorgonia is %q, want yes, tests or no", line, r.pkg, r.gorgonia)
		}
		rules[r.pkg] = r
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("line %d: the table has no rows", header+1)
	}
	return rules, nil
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath, Dir                    string
	GoFiles, CgoFiles                  []string
	TestGoFiles, XTestGoFiles          []string
	Imports, TestImports, XTestImports []string
	Error                              *struct{ Err string }
}

// goList lists every package of the module.
func goList(t *testing.T, root string) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list -json: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rel is a headlab import path relative to the module, and whether it is
// headlab's.
func rel(path string) (string, bool) {
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r, true
	}
	return path, path == module
}

// importedAt names the files of p (among files) that import path, with
// their lines.
func importedAt(root string, p listed, files []string, path string) string {
	var at []string
	fset := token.NewFileSet()
	for _, f := range files {
		name := filepath.Join(p.Dir, f)
		file, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, s := range file.Imports {
			if v, err := strconv.Unquote(s.Path.Value); err == nil && v == path {
				pos := fset.Position(s.Pos())
				r, err := filepath.Rel(root, pos.Filename)
				if err != nil {
					r = pos.Filename
				}
				at = append(at, fmt.Sprintf("%s:%d", r, pos.Line))
			}
		}
	}
	if len(at) == 0 {
		return "?"
	}
	return strings.Join(at, ", ")
}

func allowed(r *rule) string {
	if len(r.imports) == 0 {
		return "none"
	}
	ps := make([]string, 0, len(r.imports))
	for p := range r.imports {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return strings.Join(ps, ", ")
}

// TestImports holds the module's import graph to the table of
// docs/architecture.md.
func TestImports(t *testing.T) {
	root := moduleRoot(t)
	f, err := os.Open(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules, err := parseTable(f)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	pkgs := goList(t, root)
	known := map[string]bool{}
	for _, p := range pkgs {
		r, _ := rel(p.ImportPath)
		known[r] = true
	}
	for _, r := range rules {
		if !known[r.pkg] {
			t.Errorf("%s:%d: the row of %s names no package of the module: remove it or correct the name", doc, r.line, r.pkg)
		}
		for p := range r.imports {
			if !known[p] {
				t.Errorf("%s:%d: %s may import %s, which is no package of the module", doc, r.line, r.pkg, p)
			}
		}
	}
	for _, p := range pkgs {
		name, _ := rel(p.ImportPath)
		r := rules[name]
		if r == nil {
			t.Errorf("%s has no row in the table of %s: add one that says which headlab packages it may import", p.ImportPath, doc)
			continue
		}
		code := append(slices.Clone(p.GoFiles), p.CgoFiles...)
		for _, imp := range p.Imports {
			if gorgonia(imp) && r.gorgonia != "yes" {
				t.Errorf("%s imports %s (%s): only packages whose row in %s says Gorgonia \"yes\" may (%s's row, line %d, says %q)",
					p.ImportPath, imp, importedAt(root, p, code, imp), doc, name, r.line, r.gorgonia)
			}
			dep, ours := rel(imp)
			if ours && !glPackage(imp) && !r.any && !r.imports[dep] {
				t.Errorf("%s imports %s (%s), which %s's row in %s (line %d) does not allow; it may import: %s",
					p.ImportPath, imp, importedAt(root, p, code, imp), name, doc, r.line, allowed(r))
			}
		}
		tests := append(slices.Clone(p.TestGoFiles), p.XTestGoFiles...)
		for _, imp := range append(slices.Clone(p.TestImports), p.XTestImports...) {
			if gorgonia(imp) && r.gorgonia == "no" {
				t.Errorf("%s's tests import %s (%s): only packages whose row in %s says Gorgonia \"yes\" or \"tests\" may (%s's row, line %d, says \"no\")",
					p.ImportPath, imp, importedAt(root, p, tests, imp), doc, name, r.line)
			}
		}
	}
}

// glPackage says whether an import path is one the GL table governs:
// go-gl's packages and headlab's generated bindings, a module of their own.
func glPackage(path string) bool {
	return strings.HasPrefix(path, "github.com/go-gl/")
}

// glRule is one row of the GL table: which headlab packages may import
// one GL package.
type glRule struct {
	importers map[string]bool
	line      int
}

// parseGLTable reads the table of who imports GL packages from the
// markdown r: the table whose header has the columns "GL package" and
// "imported by".
func parseGLTable(r io.Reader) (map[string]*glRule, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	header, pathCol, byCol := -1, 0, 0
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "|") {
			cells := splitRow(l)
			if pathCol, byCol = slices.Index(cells, "GL package"), slices.Index(cells, "imported by"); pathCol >= 0 && byCol >= 0 {
				header = i
				break
			}
		}
	}
	if header < 0 {
		return nil, errors.New(`no table with the columns "GL package" and "imported by"`)
	}
	rules := map[string]*glRule{}
	for i := header + 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		cells := splitRow(lines[i])
		if len(cells) <= max(pathCol, byCol) {
			return nil, fmt.Errorf("line %d: %d cells, want at least %d", i+1, len(cells), max(pathCol, byCol)+1)
		}
		path := strings.Trim(cells[pathCol], "`")
		if !glPackage(path) {
			return nil, fmt.Errorf("line %d: %q is not a go-gl package", i+1, path)
		}
		if _, dup := rules[path]; dup {
			return nil, fmt.Errorf("line %d: %s has a row already", i+1, path)
		}
		r := &glRule{importers: map[string]bool{}, line: i + 1}
		for p := range strings.SplitSeq(cells[byCol], ",") {
			if p = strings.Trim(strings.TrimSpace(p), "`"); p != "" {
				r.importers[p] = true
			}
		}
		rules[path] = r
	}
	return rules, nil
}

// TestGLImports holds the imports of GL packages (go-gl's)
// by headlab's code, test files aside, to the GL table of
// docs/architecture.md, both ways.
func TestGLImports(t *testing.T) {
	root := moduleRoot(t)
	f, err := os.Open(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules, err := parseGLTable(f)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	seen := map[string]map[string]bool{} // GL package -> importers
	for _, p := range goList(t, root) {
		name, _ := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if !glPackage(imp) {
				continue
			}
			if seen[imp] == nil {
				seen[imp] = map[string]bool{}
			}
			seen[imp][name] = true
			if r := rules[imp]; r == nil || !r.importers[name] {
				code := append(slices.Clone(p.GoFiles), p.CgoFiles...)
				t.Errorf("%s imports %s (%s), which the GL table of %s does not allow: add the package to that row and say why",
					p.ImportPath, imp, importedAt(root, p, code, imp), doc)
			}
		}
	}
	for path, r := range rules {
		for name := range r.importers {
			if !seen[path][name] {
				t.Errorf("%s:%d: %s does not import %s: remove it from the row", doc, r.line, name, path)
			}
		}
	}
}

// TestNoGorgoniaInExportedAPI fails on every exported identifier of the
// module, in any package, whose type names a Gorgonia type: Gorgonia's
// graph, nodes and values stay inside package graph.
func TestNoGorgoniaInExportedAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the types of every package")
	}
	root := moduleRoot(t)
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: root}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("packages did not load")
	}
	for _, p := range pkgs {
		for _, v := range exportedGorgonia(p.Types) {
			pos := p.Fset.Position(v.pos)
			file := pos.Filename
			if r, err := filepath.Rel(root, file); err == nil {
				file = r
			}
			t.Errorf("%s:%d: %s (%s) names %s in its type, %s: no exported identifier may have a Gorgonia type (%s)",
				file, pos.Line, v.name, v.kind, v.gorgonia, v.typ, doc)
		}
	}
}

// violation is one exported identifier whose type names a Gorgonia type.
type violation struct {
	name, kind    string // "graph.Net.Params", "method"
	gorgonia, typ string // the Gorgonia type named, and the whole type
	pos           token.Pos
}

// exportedGorgonia lists the exported identifiers of pkg whose types
// name a Gorgonia type: package-level functions, variables and
// constants, types defined as a Gorgonia type or an alias of one, and
// the exported fields and methods of exported types.
func exportedGorgonia(pkg *types.Package) []violation {
	var out []violation
	q := func(p *types.Package) string { return p.Path() }
	check := func(name, kind string, t types.Type, pos token.Pos) {
		if g, ok := mentions(t, map[types.Type]bool{}); ok {
			out = append(out, violation{name: name, kind: kind, gorgonia: g, typ: types.TypeString(t, q), pos: pos})
		}
	}
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		obj := scope.Lookup(n)
		if !obj.Exported() {
			continue
		}
		name := pkg.Name() + "." + n
		tn, ok := obj.(*types.TypeName)
		if !ok {
			check(name, kindOf(obj), obj.Type(), obj.Pos())
			continue
		}
		if tn.IsAlias() {
			check(name, "alias", types.Unalias(tn.Type()), tn.Pos())
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		switch u := named.Underlying().(type) {
		case *types.Struct:
			for f := range u.Fields() {
				if f.Exported() || f.Embedded() {
					check(name+"."+f.Name(), "field", f.Type(), f.Pos())
				}
			}
		case *types.Interface:
			for m := range u.Methods() {
				if m.Exported() {
					check(name+"."+m.Name(), "interface method", m.Type(), m.Pos())
				}
			}
		default:
			check(name, "type", u, tn.Pos())
		}
		for m := range named.Methods() {
			if m.Exported() {
				check(name+"."+m.Name(), "method", m.Type(), m.Pos())
			}
		}
	}
	return out
}

func kindOf(obj types.Object) string {
	switch obj.(type) {
	case *types.Func:
		return "func"
	case *types.Var:
		return "var"
	case *types.Const:
		return "const"
	}
	return "identifier"
}

// mentions returns the first Gorgonia type that t names, looking through
// pointers, containers, signatures, the exported fields of struct
// literals, interfaces' methods, type arguments, and the underlying types
// of unexported named types (an exported one is checked as an identifier
// of its own).
func mentions(t types.Type, seen map[types.Type]bool) (string, bool) {
	if t == nil || seen[t] {
		return "", false
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		return mentions(types.Unalias(t), seen)
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil && gorgonia(obj.Pkg().Path()) {
			return obj.Pkg().Path() + "." + obj.Name(), true
		}
		for a := range t.TypeArgs().Types() {
			if g, ok := mentions(a, seen); ok {
				return g, true
			}
		}
		if !obj.Exported() && obj.Pkg() != nil {
			return mentions(t.Underlying(), seen)
		}
	case *types.Pointer:
		return mentions(t.Elem(), seen)
	case *types.Slice:
		return mentions(t.Elem(), seen)
	case *types.Array:
		return mentions(t.Elem(), seen)
	case *types.Chan:
		return mentions(t.Elem(), seen)
	case *types.Map:
		if g, ok := mentions(t.Key(), seen); ok {
			return g, true
		}
		return mentions(t.Elem(), seen)
	case *types.Signature:
		if g, ok := mentions(t.Params(), seen); ok {
			return g, true
		}
		return mentions(t.Results(), seen)
	case *types.Tuple:
		for v := range t.Variables() {
			if g, ok := mentions(v.Type(), seen); ok {
				return g, true
			}
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				if g, ok := mentions(f.Type(), seen); ok {
					return g, true
				}
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if g, ok := mentions(m.Type(), seen); ok {
				return g, true
			}
		}
		for e := range t.EmbeddedTypes() {
			if g, ok := mentions(e, seen); ok {
				return g, true
			}
		}
	case *types.TypeParam:
		return mentions(t.Constraint(), seen)
	case *types.Union:
		for i := range t.Len() {
			if g, ok := mentions(t.Term(i).Type(), seen); ok {
				return g, true
			}
		}
	}
	return "", false
}

// TestParseTable checks the reader of the table on a small one.
func TestParseTable(t *testing.T) {
	md := `intro

| package | holds | may import (headlab) | Gorgonia |
|---|---|---|---|
| ` + "`a`" + ` | x | none | no |
| ` + "`b/c`" + ` | y | a, ` + "`d`" + ` (for z, w) | yes: because |
| ` + "`cmd/x`" + ` | z | any | tests: one test |

after
`
	rules, err := parseTable(strings.NewReader(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 {
		t.Fatalf("%d rules, want 3", len(rules))
	}
	if r := rules["a"]; r.any || len(r.imports) != 0 || r.gorgonia != "no" || r.line != 5 {
		t.Errorf("a: %+v", r)
	}
	if r := rules["b/c"]; r.any || !r.imports["a"] || !r.imports["d"] || len(r.imports) != 2 || r.gorgonia != "yes" {
		t.Errorf("b/c: %+v", r)
	}
	if r := rules["cmd/x"]; !r.any || r.gorgonia != "tests" {
		t.Errorf("cmd/x: %+v", r)
	}
	for _, bad := range []string{
		"| package | may import (headlab) | Gorgonia |\n|---|---|---|\n| `a` | none | maybe |\n",
		"| package | may import (headlab) | Gorgonia |\n|---|---|---|\n| `a` | b c | no |\n",
		"| package | may import (headlab) | Gorgonia |\n|---|---|---|\n| `a` | none | no |\n| `a` | none | no |\n",
		"| package | imports | Gorgonia |\n|---|---|---|\n| `a` | none | no |\n",
	} {
		if _, err := parseTable(strings.NewReader(bad)); err == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}

// TestParseGLTable checks the reader of the GL table on a small one.
func TestParseGLTable(t *testing.T) {
	md := "| GL package | imported by | why |\n|---|---|---|\n" +
		"| `github.com/go-gl/gl/v4.3-core/gl` | `a`, `b/c` | x |\n| `github.com/go-gl/glfw/v3.3/glfw` | `a` | y |\n"
	rules, err := parseGLTable(strings.NewReader(md))
	if err != nil {
		t.Fatal(err)
	}
	if r := rules["github.com/go-gl/gl/v4.3-core/gl"]; r == nil || !r.importers["a"] || !r.importers["b/c"] || len(r.importers) != 2 || r.line != 3 {
		t.Errorf("gl43: %+v", r)
	}
	if r := rules["github.com/go-gl/glfw/v3.3/glfw"]; r == nil || !r.importers["a"] || len(r.importers) != 1 {
		t.Errorf("glfw: %+v", r)
	}
	for _, bad := range []string{
		"| GL package | importers |\n|---|---|\n| `github.com/go-gl/gl/v4.3-core/gl` | `a` |\n",
		"| GL package | imported by |\n|---|---|\n| `gonum.org/v1/gonum` | `a` |\n",
		"| GL package | imported by |\n|---|---|\n| `headlab/internal/gl43` | `a` |\n",
		"| GL package | imported by |\n|---|---|\n| `github.com/go-gl/glfw/v3.3/glfw` | `a` |\n| `github.com/go-gl/glfw/v3.3/glfw` | `b` |\n",
	} {
		if _, err := parseGLTable(strings.NewReader(bad)); err == nil {
			t.Errorf("no error for\n%s", bad)
		}
	}
}

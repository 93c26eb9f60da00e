#!/usr/bin/env bash
# Regenerates third_party/glbind/gl43 and gl41, headlab's OpenGL bindings,
# with go-gl's generator, Glow, restricted to the functions and enums
# headlab's code (tests included) calls. go-gl/gl's full packages bind
# every function of their version, and cgo took over a minute of a cold
# build to process the two (docs/architecture.md). The bindings are a
# module of their own (third_party/glbind/go.mod), as go-gl/gl is.
#
#   scripts/glbind.sh GLOW_DIR   # a checkout of github.com/go-gl/glow
#
# Run it after calling a GL function or enum the bindings lack: the build
# says "undefined: gl43.X".
set -euo pipefail
cd "$(dirname "$0")/.."
glow=${1:?usage: scripts/glbind.sh GLOW_DIR (a checkout of github.com/go-gl/glow)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$glow" && go build -o "$tmp/glow" .)

# symbols reads Go files' paths on stdin and writes Glow's restriction
# file for the package its argument names: every pkg.X in a file that
# imports headlab/third_party/glbind/pkg (under any name). The helpers
# Glow's templates always write (Ptr, Str, ...) are left out;
# VertexAttribPointer's WithOffset form is an overload of the function.
symbols=$(cat <<'EOF'
import json, re, sys
pkg = sys.argv[1]
helpers = {"Ptr", "PtrOffset", "Str", "Strs", "GoStr", "Init", "InitWithProcAddrFunc"}
syms = set()
for path in sys.stdin.read().split():
    src = open(path).read()
    m = re.search(r'(?m)^(?:import)?\s*(\w+\s+)?"headlab/third_party/glbind/' + pkg + '"', src)
    if not m:
        continue
    name = (m.group(1) or pkg).strip()
    syms |= set(re.findall(r"\b" + re.escape(name) + r"\.([A-Za-z]\w*)", src))
syms -= helpers
enums = sorted("GL_" + s for s in syms if re.fullmatch(r"[A-Z0-9_]+", s))
funcs = sorted({"gl" + s.removesuffix("WithOffset") for s in syms if not re.fullmatch(r"[A-Z0-9_]+", s)})
json.dump({"Enums": enums, "Functions": funcs}, sys.stdout, indent=1)
EOF
)

for v in 4.3 4.1; do
	pkg=gl${v/./}
	git ls-files --cached --others --exclude-standard '*.go' ':!third_party' |
		python3 -c "$symbols" "$pkg" >"$tmp/$pkg.json"
	rm -rf "$tmp/out"
	(cd "$glow" && "$tmp/glow" generate -out="$tmp/out" -api=gl -version="$v" -profile=core \
		-restrict="$tmp/$pkg.json" -xml="$glow/xml" -tmpl="$glow/tmpl")
	dir=third_party/glbind/$pkg
	rm -rf "$dir"
	mkdir -p "$dir/KHR"
	for f in "$tmp"/out/*.go; do
		sed -e "s/^package gl$/package $pkg/" -e "s|^// Package gl |// Package $pkg |" "$f" >"$dir/$(basename "$f")"
	done
	cp "$glow/xml/include/KHR/khrplatform.h" "$dir/KHR/"
	gofmt -l "$dir" | (! grep .)
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[2] + ":", len(r["Functions"]), "functions,", len(r["Enums"]), "enums")' "$tmp/$pkg.json" "$dir" >&2
done

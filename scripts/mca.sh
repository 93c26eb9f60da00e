#!/usr/bin/env bash
# Cycles per iteration of every amd64 kernel's inner loops on several
# microarchitectures, from llvm-mca's static model of each, written as a
# table into docs/performance.md (between the mca markers) and printed.
#
# The loops are read from the built kernels, not the source: the script
# builds internal/simd's test binary, disassembles each TEXT symbol of
# internal/simd/*_amd64.s with binutils' objdump (Go's own cannot decode
# VEX), finds its innermost loops (a backward branch whose span holds no
# other) and names each by the label it starts at. Each loop goes to
# llvm-mca once per CPU; a loop that uses AVX-512 has no figure on CPUs
# without it. A second table lists each instruction that llvm-mca models
# as 4 or more micro-ops, or as taking 4 or more cycles of its unit a time,
# on any CPU (microcoded or slow there).
#
#   scripts/mca.sh            regenerate the tables in docs/performance.md
#   scripts/mca.sh --print    print them only
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

cpus=(znver2 znver3 znver4 skylake-avx512 icelake-server)

# An llvm-mca that knows every CPU above (znver4 needs LLVM 16 or later;
# Debian 12's plain `llvm` is 14).
find_mca() {
  local m
  for m in $(compgen -c llvm-mca | sort -t- -k3 -n -r | uniq) ; do
    if [[ $("$m" -mtriple=x86_64 -mcpu=help </dev/null 2>&1 || true) == *znver4* ]]; then
      echo "$m"
      return
    fi
  done
}
mca=$(find_mca)
if [ -z "$mca" ]; then
  echo "mca.sh: installing llvm-19 (llvm-mca with a Zen 4 model)" >&2
  apt-get update >&2 && { apt-get install -y llvm-19 >&2 || apt-get install -y llvm >&2; }
  mca=$(find_mca)
fi
if [ -z "$mca" ]; then
  echo "mca.sh: no llvm-mca that knows znver4 (install llvm-16 or later)" >&2
  exit 2
fi
command -v objdump >/dev/null || { echo "mca.sh: objdump (binutils) is needed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/simd.test" ./internal/simd
go tool nm -size "$tmp/simd.test" >"$tmp/nm"

MCA="$mca" CPUS="${cpus[*]}" TMP="$tmp" MODE="${1:-}" python3 - <<'PY'
import glob, os, re, subprocess, sys

mca, cpus, tmp, mode = os.environ["MCA"], os.environ["CPUS"].split(), os.environ["TMP"], os.environ["MODE"]
exe = os.path.join(tmp, "simd.test")

# The kernels, in source order, and where each lives in the binary.
kernels = []
for f in sorted(glob.glob("internal/simd/*_amd64.s")):
    for m in re.finditer(r"(?m)^TEXT\s+·(\w+)\(SB\)", open(f).read()):
        kernels.append((os.path.basename(f), m.group(1)))
syms = {}
for line in open(os.path.join(tmp, "nm")):
    p = line.split()
    if len(p) == 4 and p[3].startswith("headlab/internal/simd.") and p[3].endswith(".abi0"):
        syms[p[3][len("headlab/internal/simd."):-len(".abi0")]] = (int(p[0], 16), int(p[1]))

insn_re = re.compile(r"^\s*([0-9a-f]+):\t[0-9a-f ]+\t(\S+)\s*(.*)$")

def disasm(lo, hi):
    out = subprocess.run(["objdump", "-d", "-w",
                          f"--start-address={lo:#x}", f"--stop-address={hi:#x}", exe],
                         capture_output=True, text=True, check=True).stdout
    ins = []
    for line in out.splitlines():
        m = insn_re.match(line)
        if m:
            ops = m.group(3).split("#")[0].strip()
            ins.append((int(m.group(1), 16), m.group(2), ops))
    return ins

def srcline(addr):
    out = subprocess.run(["go", "tool", "addr2line", exe], input=f"{addr:#x}\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    path, _, line = out[1].rpartition(":")
    return path, int(line)

def label(addr):
    path, line = srcline(addr)
    src = open(path).read().split("\n")
    for i in range(line - 1, -1, -1):
        m = re.match(r"^(\w+):", src[i])
        if m:
            return m.group(1), line
        if src[i].startswith("TEXT"):
            break
    return f"line {line}", line

def loops(ins):
    """Innermost loops: per branch target, the span to its last backward
    branch; kept when no other span lies inside it."""
    spans = {}
    for a, mn, ops in ins:
        if mn.startswith("j"):
            t = re.match(r"([0-9a-f]+)", ops)
            if t and int(t.group(1), 16) <= a:
                tgt = int(t.group(1), 16)
                spans[tgt] = max(spans.get(tgt, a), a)
    inner = []
    for s, e in spans.items():
        if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2 in spans.items()):
            inner.append((s, e))
    return sorted(inner)

def body(ins, s, e):
    lines = ["L0:"]
    for a, mn, ops in ins:
        if s <= a <= e:
            if mn.startswith("j"):
                ops = "L0"
            lines.append(f"\t{mn} {ops}")
    return "\n".join(lines) + "\n"

def run_mca(asm, cpu):
    p = subprocess.run([mca, "-mtriple=x86_64", f"-mcpu={cpu}", "-iterations=200",
                        "-instruction-info", "-resource-pressure=false", "-timeline=false"],
                       input=asm, capture_output=True, text=True)
    if p.returncode != 0:
        return None, []
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", p.stdout).group(1))
    iters = int(re.search(r"Iterations:\s+(\d+)", p.stdout).group(1))
    # The instruction info: micro-ops and reciprocal throughput in the
    # first and third columns, the instruction from the header's
    # "Instructions:" column on.
    info, col = [], None
    for line in p.stdout.split("\n"):
        if line.startswith("[1]") and "Instructions:" in line:
            col = line.index("Instructions:")
            continue
        if col is not None:
            if not line.strip():
                break
            f = line.split()
            info.append((line[col:].strip(), int(f[0]), float(f[2])))
    return cycles / iters, info

avx512_cpus = {"znver4", "skylake-avx512", "icelake-server"}

def uses_avx512(asm):
    return re.search(r"%zmm|%k[0-7]|\{1to", asm) is not None

def whole(ins):
    return "\n".join(f"\t{mn} {'L0' if mn.startswith('j') else ops}" for _, mn, ops in ins) + "\n"

rows, slowrows = [], {}
for f, k in kernels:
    if k not in syms:
        print(f"mca.sh: {k} is not in the test binary", file=sys.stderr)
        sys.exit(1)
    lo, size = syms[k]
    ins = disasm(lo, lo + size)
    # Every instruction of the kernel, its tails included, for the second
    # table.
    asm = "L0:\n" + whole(ins)
    for cpu in cpus:
        if uses_avx512(asm) and cpu not in avx512_cpus:
            continue
        _, info = run_mca(asm, cpu)
        for text, uops, rt in info:
            key = (text.split()[0], "store" if re.search(r",\s*[^,]*\(", text) else "load" if "(" in text else "reg")
            slowrows.setdefault(key, {"where": set()})[cpu] = (uops, rt)
            slowrows[key]["where"].add(k)
    for s, e in loops(ins):
        name, line = label(s)
        asm = body(ins, s, e)
        if os.environ.get("MCA_KEEP"):
            open(os.path.join(os.environ["MCA_KEEP"], f"{k}.{name}.s"), "w").write(asm)
        n = asm.count("\n") - 1
        cells = []
        for cpu in cpus:
            c = None
            if not uses_avx512(asm) or cpu in avx512_cpus:
                c, _ = run_mca(asm, cpu)
            cells.append("—" if c is None else f"{c:.1f}")
        rows.append(f"| {k} | {f}:{line} `{name}` | {n} | " + " | ".join(cells) + " |")

out = []
out.append("| kernel | inner loop (first line, label) | instructions | " + " | ".join(cpus) + " |")
out.append("|---|---|---|" + "---|" * len(cpus))
out += rows
out.append("")
out.append("Instructions modelled as 4 or more micro-ops or 4 or more cycles of")
out.append("their unit a time on some CPU (micro-ops / reciprocal throughput):")
out.append("")
out.append("| instruction | operand | " + " | ".join(cpus) + " | in |")
out.append("|---|---|" + "---|" * len(cpus) + "---|")
for (mnem, kind), d in sorted(slowrows.items()):
    if not any(d[c][0] >= 4 or d[c][1] >= 4 for c in cpus if c in d):
        continue
    cells = [f"{d[c][0]} / {d[c][1]:g}" if c in d else "—" for c in cpus]
    out.append(f"| {mnem} | {kind} | " + " | ".join(cells) + " | " + ", ".join(sorted(d["where"])) + " |")
table = "\n".join(out)

ver = subprocess.run([mca, "--version"], capture_output=True, text=True).stdout
ver = re.search(r"LLVM version (\S+)", ver).group(1)
block = (f"<!-- mca: begin (scripts/mca.sh writes this block) -->\n"
         f"Cycles per iteration, llvm-mca {ver}, 200 iterations of each loop body:\n\n{table}\n"
         f"<!-- mca: end -->")
print(block)
if mode != "--print":
    doc = open("docs/performance.md").read()
    new, n = re.subn(r"<!-- mca: begin.*?<!-- mca: end -->", lambda _: block, doc, flags=re.S)
    if n != 1:
        print("mca.sh: docs/performance.md has no mca block to replace; printed only", file=sys.stderr)
        sys.exit(1)
    open("docs/performance.md", "w").write(new)
PY

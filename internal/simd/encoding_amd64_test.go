//go:build amd64 && !purego

package simd

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A legacy SSE instruction (no VEX or EVEX prefix) that writes an XMM
// register keeps the upper bits of its YMM/ZMM register: executed while
// they are dirty, it costs a state transition (Intel) or a merge with the
// old value, a false dependency (AMD). One such MOVQ in the AVX2 row
// kernels' lane masks made the batch-64 step almost twice as slow on Zen
// 3. So every kernel here is VEX/EVEX only, and one that touches YMM or
// ZMM ends with VZEROUPPER before each RET.
//
// Go's own disassembler cannot decode VEX, so this builds this package's
// test binary (`go test` strips the one it runs) and reads it with
// binutils' objdump.

// asmKernels names the TEXT symbols of this package's amd64 assembly.
func asmKernels(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*_amd64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no *_amd64.s files here (%v)", err)
	}
	text := regexp.MustCompile(`(?m)^TEXT\s+·(\w+)\(SB\)`)
	var names []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range text.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// insn is one disassembled instruction: its bytes, mnemonic and operands.
type insn struct {
	bytes    []byte
	mnemonic string
	operands string
}

// objdumpLine is a line of `objdump -d -w`: address, hex bytes, mnemonic,
// operands.
var objdumpLine = regexp.MustCompile(`^\s*[0-9a-f]+:\t([0-9a-f ]+)\t(\S+)\s*(.*)$`)

// parseObjdump reads the instructions of an `objdump -d -w` listing.
func parseObjdump(out string) ([]insn, error) {
	var is []insn
	for line := range strings.SplitSeq(out, "\n") {
		m := objdumpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b []byte
		for h := range strings.FieldsSeq(m[1]) {
			var v byte
			if _, err := fmt.Sscanf(h, "%02x", &v); err != nil {
				return nil, fmt.Errorf("bad byte %q in %q", h, line)
			}
			b = append(b, v)
		}
		is = append(is, insn{b, m[2], m[3]})
	}
	return is, nil
}

// vexOrEVEX reports whether an instruction's opcode comes after a VEX (C4,
// C5) or EVEX (62) prefix: in 64-bit mode those bytes are no other
// instruction's first opcode byte once the legacy prefixes and REX are
// skipped.
func vexOrEVEX(b []byte) bool {
	for _, c := range b {
		switch {
		case c == 0x66 || c == 0xf2 || c == 0xf3 || c == 0xf0 ||
			c == 0x2e || c == 0x36 || c == 0x3e || c == 0x26 || c == 0x64 || c == 0x65:
			continue // legacy prefixes
		case c >= 0x40 && c <= 0x4f:
			continue // REX
		}
		return c == 0xc4 || c == 0xc5 || c == 0x62
	}
	return false
}

var (
	vectorReg = regexp.MustCompile(`%(x|y|z)?mm\d+`)
	wideReg   = regexp.MustCompile(`%(y|z)mm\d+`)
)

// encodingProblems lists what breaks the rule in one kernel's
// instructions: a legacy SSE (or MMX) instruction anywhere in a kernel,
// an instruction objdump could not decode, and, in a kernel that touches
// YMM or ZMM, a RET without VZEROUPPER just before it.
func encodingProblems(is []insn) []string {
	var bad []string
	wide := false
	for _, in := range is {
		if wideReg.MatchString(in.operands) {
			wide = true
		}
	}
	for i, in := range is {
		desc := strings.TrimSpace(in.mnemonic + " " + in.operands)
		switch {
		case in.mnemonic == "(bad)":
			bad = append(bad, fmt.Sprintf("undecodable bytes % x", in.bytes))
		case vectorReg.MatchString(in.operands) && !vexOrEVEX(in.bytes):
			bad = append(bad, fmt.Sprintf("legacy SSE %s (% x)", desc, in.bytes))
		case wide && strings.HasPrefix(in.mnemonic, "ret") && (i == 0 || is[i-1].mnemonic != "vzeroupper"):
			bad = append(bad, fmt.Sprintf("%s without vzeroupper before it", desc))
		}
	}
	return bad
}

// TestEncodingParser: the checks above catch what they are for, on
// listings as objdump prints them.
func TestEncodingParser(t *testing.T) {
	const listing = `
  55bc1d:	4c 89 e1             	mov    %r12,%rcx
  55bc23:	66 4c 0f 6e e9       	movq   %rcx,%xmm13
  55bc28:	c4 c2 7d 58 dd       	vpbroadcastd %xmm13,%ymm3
  55bc2d:	62 f1 7c 48 10 07    	vmovups (%rdi),%zmm0
  55bc33:	c3                   	ret
`
	is, err := parseObjdump(listing)
	if err != nil || len(is) != 5 {
		t.Fatalf("parsed %d instructions (%v), want 5", len(is), err)
	}
	got := encodingProblems(is)
	if len(got) != 2 || !strings.Contains(got[0], "movq") || !strings.Contains(got[1], "ret") {
		t.Errorf("problems %q, want the legacy movq and the ret without vzeroupper", got)
	}
	fixed := strings.Replace(listing, "66 4c 0f 6e e9       \tmovq", "c4 61 f9 6e e9       \tvmovq", 1)
	fixed = strings.Replace(fixed, "  55bc33:", "  55bc30:\tc5 f8 77             \tvzeroupper\n  55bc33:", 1)
	is, _ = parseObjdump(fixed)
	if got := encodingProblems(is); len(got) != 0 {
		t.Errorf("clean listing: problems %q", got)
	}
}

// TestKernelEncodings disassembles every kernel of this package's amd64
// assembly in a test binary built with symbols and fails on any legacy SSE
// instruction in it, or on a RET not preceded by VZEROUPPER in one that
// touches YMM or ZMM.
func TestKernelEncodings(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Fatal("objdump (GNU binutils) is needed to read the kernels' VEX encodings: apt-get install binutils")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build a test binary with symbols")
	}
	exe := filepath.Join(t.TempDir(), "simd.test")
	if out, err := exec.Command(gocmd, "test", "-c", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	bySuffix := map[string]elf.Symbol{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "headlab/internal/simd.") && strings.HasSuffix(s.Name, ".abi0") {
			bySuffix[strings.TrimSuffix(strings.TrimPrefix(s.Name, "headlab/internal/simd."), ".abi0")] = s
		}
	}
	kernels := asmKernels(t)
	for _, name := range kernels {
		s, ok := bySuffix[name]
		if !ok || s.Size == 0 {
			t.Errorf("%s: not in the test binary", name)
			continue
		}
		out, err := exec.Command(objdump, "-d", "-w",
			fmt.Sprintf("--start-address=%#x", s.Value),
			fmt.Sprintf("--stop-address=%#x", s.Value+s.Size), exe).Output()
		if err != nil {
			t.Fatalf("objdump %s: %v", name, err)
		}
		is, err := parseObjdump(string(out))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(is) == 0 {
			t.Errorf("%s: objdump printed no instructions", name)
		}
		for _, p := range encodingProblems(is) {
			t.Errorf("%s: %s", name, p)
		}
	}
}

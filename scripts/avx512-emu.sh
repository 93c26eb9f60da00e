#!/usr/bin/env bash
# Runs the AVX-512 path on a machine without AVX-512, in Bochs (Debian's
# bochs, which emulates AVX-512: CPU model corei7_skylake_x), and holds it
# to the AVX2 path's bits:
#   - internal/simd's tests that run the AVX-512 kernels, on every path
#     the emulated CPU runs (avx512, avx2, go): the kernel digests, the
#     avx2-against-avx512 comparisons, each kernel against its Go
#     reference;
#   - train/testdata/goamd64 (50 steps of the default induction run on
#     the CPU device: every loss's bits and a SHA-256 of every weight's)
#     with HEADLAB_SIMD=avx512 in the emulator, the same with
#     HEADLAB_SIMD=avx2 natively, and the two outputs must be the same.
# The emulated machine boots Debian's cloud kernel from an ISO with an
# initramfs holding static test binaries and internal/simd/testdata/
# emuinit, which runs them and powers off. About 2 minutes; scripts/test.sh
# runs it on x86 machines without AVX-512 (where the native tests cannot
# run that path).
#
#   scripts/avx512-emu.sh          run it
#   KEEP=1 scripts/avx512-emu.sh   keep the work folder (its serial.log is
#                                  the emulated console)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

# Bochs and its BIOS, isolinux and xorriso (the boot CD), cpio (the
# initramfs) come with the test set-up.
scripts/setup.sh test

work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root" "$work/iso/isolinux" "$work/kernel"

# The kernel: Debian's cloud image kernel (serial console, initramfs and
# ACPI power-off built in; no modules needed).
kernel_pkg() { apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
kpkg=$(kernel_pkg)
if [ -z "$kpkg" ]; then # no package lists yet
  apt-get update >&2
  kpkg=$(kernel_pkg)
fi
(cd "$work/kernel" && apt-get download "$kpkg" 2>&1 | grep -v -e '^W: Download is performed unsandboxed' >&2 || true)
dpkg -x "$work"/kernel/*.deb "$work/kernel/x"
cp "$work"/kernel/x/boot/vmlinuz-* "$work/iso/vmlinuz"

# The programs, static. goamd64 also runs natively on the AVX2 path, the
# reference its emulated AVX-512 run must match.
export CGO_ENABLED=0
go test -c -o "$work/root/simd.test" ./internal/simd/
go build -o "$work/root/goamd64" ./train/testdata/goamd64
go build -o "$work/root/init" ./internal/simd/testdata/emuinit
HEADLAB_SIMD=avx2 "$work/root/goamd64" 50 >"$work/avx2.out"
# The tests that run the avx512 kernels (the rest of the package, and the
# go path's own tests, run natively in test.sh: Bochs computes floats in
# software, and internal/simd's whole test takes over ten minutes here).
cat >"$work/root/commands" <<'EOF'
/simd.test -test.short -test.v -test.run ^(TestKernelDigests|TestAVX2MatchesAVX512.*|TestChoose|TestGELUAccuracy|TestExp|TestPathsAgree|TestRowsMatchGo|TestRowMaxSpecials|TestClearMaskedPaths|TestVecMatchesGo|TestLayerNormPaths|TestColsMatchRowLoops)$
HEADLAB_SIMD=avx512 /goamd64 50
EOF
(cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/iso/initrd.gz")

# The boot: isolinux straight into the kernel, console on the serial port.
# Bochs 2.7 reports the uncompacted XSAVE area's size where the compacted
# one belongs (CPUID 0xD.1 EBX), and Linux then turns XSAVE, and with it
# AVX, off: noxsaves and clearcpuid=321,323 (XSAVEC, XSAVES) keep it on the
# standard format, whose sizes Bochs reports right.
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$work/iso/isolinux/"
cat >"$work/iso/isolinux/isolinux.cfg" <<'EOF'
DEFAULT emu
PROMPT 0
TIMEOUT 0
LABEL emu
  KERNEL /vmlinuz
  APPEND initrd=/initrd.gz console=ttyS0,115200 quiet panic=-1 nokaslr mitigations=off noxsaves clearcpuid=321,323
EOF
xorriso -as mkisofs -quiet -o "$work/emu.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
  -no-emul-boot -boot-load-size 4 -boot-info-table "$work/iso/" 2>/dev/null
cat >"$work/bochsrc" <<EOF
megs: 1024
cpu: model=corei7_skylake_x, count=1, ips=200000000
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/bochs/VGABIOS-lgpl-latest
ata0-master: type=cdrom, path=$work/emu.iso, status=inserted
boot: cdrom
display_library: rfb, options="timeout=0"
com1: enabled=1, mode=file, dev=$work/serial.log
log: $work/bochs.log
panic: action=fatal
error: action=ignore
info: action=ignore
debug: action=ignore
clock: sync=none
EOF
# Debian's bochs has the internal debugger: "c" starts the machine.
echo c >"$work/debugger"
echo "avx512-emu.sh: booting the emulated AVX-512 machine (about 2 minutes)" >&2
timeout 900 bochs -q -f "$work/bochsrc" -rc "$work/debugger" </dev/null >"$work/bochs.out" 2>&1 || true
log="$work/serial.log"
[ -s "$log" ] || { echo "avx512-emu.sh: the emulated machine printed nothing (see $work/bochs.out)" >&2; exit 1; }

fail() {
  echo "avx512-emu.sh: $1" >&2
  grep -a -E -e '--- FAIL|^FAIL|_test\.go:[0-9]+:|^emuinit: [^cr]' "$log" | head -30 >&2 || true
  [ -n "${KEEP:-}" ] && echo "avx512-emu.sh: the emulated console is $log" >&2
  exit 1
}
grep -q '^emuinit: cpu .*avx512f' "$log" || fail "the emulated CPU shows no avx512f to Linux"
grep -q -- '--- PASS: TestKernelDigests/avx512 ' "$log" || fail "internal/simd's kernel digests did not pass on the avx512 path"
grep -q -- '--- PASS: TestAVX2MatchesAVX512Sgemm ' "$log" || fail "TestAVX2MatchesAVX512Sgemm did not pass"
# Both programs exit 0: simd.test does not if any test failed.
[ "$(grep -c '^emuinit: exit 0' "$log")" = 2 ] || fail "a program in the emulator failed"
# goamd64's output: the lines between its run line and its exit line.
awk '/^emuinit: run .*goamd64/ {on=1; next} /^emuinit: exit/ {on=0} on' "$log" | tr -d '\r' >"$work/avx512.out"
if ! cmp -s "$work/avx2.out" "$work/avx512.out"; then
  diff "$work/avx2.out" "$work/avx512.out" | head -10 >&2
  fail "50 training steps on the emulated avx512 path differ from the avx2 path's bits"
fi
echo "avx512-emu.sh: avx512 (emulated, Bochs $(dpkg-query -W -f='${Version}' bochs)): $(grep -c -- '^--- PASS' "$log") tests passed; 50 training steps the same bits as avx2"

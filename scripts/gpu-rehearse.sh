#!/usr/bin/env bash
# Rehearses scripts/gpu-check.sh as it runs on a bare GPU server, without
# one: in a bare Debian root (debootstrap's minbase: no GL library, no Go,
# no Python, no X), entered with chroot, holding only what the device tool
# would carry (the tracked files, the untracked ones git does not ignore,
# and gpu-carry/). It checks that every stage that needs no GPU gets
# through, that the GL ones are skipped with one line saying why, and that
# $OUT holds what the tool returns (at most 8 files, 16 MiB each, two
# folders deep, names of letters, digits, '.', '_' and '-').
#
#   sudo scripts/gpu-rehearse.sh       (root, for debootstrap and chroot)
#
# The root is built once (a few minutes; needs deb.debian.org and the
# debootstrap package, installed if missing) and kept in
# scratch/rehearse-root (git-ignored): later runs take under a minute.
# gpu-carry/ is made first if missing (scripts/gpu-prepare.sh). The check
# runs there with SEEDS=8 STEPS=300 CPU_SIZES=1,16,64 unless REHEARSE_ENV
# says otherwise (this machine's 2 cores are slower than a GPU server's).
# Exits 0 when the rehearsal passes.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "gpu-rehearse.sh: debootstrap and chroot need root" >&2
  exit 2
fi
root=$PWD/scratch/rehearse-root
suite=${SUITE:-bookworm}
rehearse_env=${REHEARSE_ENV:-SEEDS=8 STEPS=300 CPU_SIZES=1,16,64}

if [ ! -e "$root/.headlab-rehearse-root" ]; then
  command -v debootstrap >/dev/null 2>&1 || apt-get install -y debootstrap >&2
  echo "gpu-rehearse.sh: building a bare Debian $suite root in $root (once)..." >&2
  rm -rf "$root.tmp"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase "$suite" "$root.tmp" http://deb.debian.org/debian >&2
  touch "$root.tmp/.headlab-rehearse-root"
  rm -rf "$root"
  mv "$root.tmp" "$root"
fi
[ -d gpu-carry ] || scripts/gpu-prepare.sh >&2

# The root must lack what the server lacks.
bare=$(chroot "$root" /bin/sh -c 'ldconfig -p | grep -E "libEGL|libGL|libX11" ; command -v go python3 nvidia-smi' || true)
if [ -n "$bare" ]; then
  echo "gpu-rehearse.sh: the root is not bare: $bare" >&2
  exit 1
fi

# What travels, fresh each time.
job=$root/job
rm -rf "$job"
mkdir -p "$job/repo" "$job/out"
{ git ls-files -z && git ls-files -z --others --exclude-standard; } |
  tar --null -T - -cf - | tar -C "$job/repo" -xf -
cp -a gpu-carry "$job/repo/"
echo "gpu-rehearse.sh: $(du -sh "$job/repo" | cut -f1) in $job/repo; running the check there ($rehearse_env)..." >&2

mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in proc dev; do
  if ! mountpoint -q "$root/$m"; then
    if [ $m = proc ]; then mount -t proc proc "$root/proc"; else mount --bind /dev "$root/dev"; fi
    mounted+=("$root/$m")
  fi
done
set +e
# shellcheck disable=SC2086 # rehearse_env is a list of NAME=VALUE words
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 OUT=/job/out $rehearse_env /bin/bash -c 'cd /job/repo && bash scripts/gpu-check.sh'
rc=$?
set -e
echo "gpu-rehearse.sh: gpu-check.sh exited $rc" >&2

# The checks.
out=$job/out
problems=()
n=$(find "$out" -type f | wc -l)
((n <= 8)) || problems+=("$n files in \$OUT (the tool returns 8)")
while IFS= read -r f; do
  rel=${f#"$out"/}
  [[ $rel =~ ^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+){0,2}$ ]] || problems+=("$rel: a name or depth the tool does not return")
  (($(stat -c %s "$f") <= 16 * 1024 * 1024)) || problems+=("$rel: over 16 MiB")
done < <(find "$out" -mindepth 1)
status() { grep -o "{\"stage\":\"$1\",\"status\":\"[a-z-]*\"" "$out/stages.jsonl" | sed 's/.*"status":"//; s/"$//'; }
[ "$(status probe)" = no-gl ] || problems+=("stage probe: $(status probe) (want no-gl)")
for s in env sweep-cpu report cpu-curve; do
  [ "$(status "$s")" = ok ] || problems+=("stage $s: $(status "$s") (want ok)")
done
for s in glctx-tests gl-tests gl-debug profile gl-curve sweep-gl; do
  [ "$(status "$s")" = skipped ] || problems+=("stage $s: $(status "$s") (want skipped)")
done
grep -q '"gl_skipped"' "$out/stages.jsonl" || problems+=("no line says why GL was skipped")
[ -s "$out/curve.jsonl" ] || problems+=("no CPU curve")
[ -s "$out/parity.txt" ] || problems+=("no report")
((rc == 0)) || problems+=("gpu-check.sh exited $rc")

echo
echo "== files in \$OUT"
(cd "$out" && find . -type f -printf '%10s  %P\n' | sort -k2)
echo "== stages.jsonl"
cat "$out/stages.jsonl"
echo "== curve.jsonl"
cat "$out/curve.jsonl"
if ((${#problems[@]})); then
  printf 'gpu-rehearse.sh: FAILED: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "gpu-rehearse.sh: passed: every stage that needs no GPU ran, the GL ones were skipped with one line, and \$OUT is what the device tool returns" >&2

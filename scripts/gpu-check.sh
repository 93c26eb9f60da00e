#!/usr/bin/env bash
# The GPU check: one run of under 10 minutes on a bare GPU server (no Go,
# no GL libraries, no X) that always leaves figures behind. It needs the
# working tree and gpu-carry/ (scripts/gpu-prepare.sh makes it); with the
# device tool: command `bash scripts/gpu-check.sh`, carry ["gpu-carry"].
# scripts/gpu-rehearse.sh runs it here in a bare Debian root.
#
# Set-up: the carried binaries are unpacked; the carried .deb files with
# dpkg -x into a folder of their own, whose libraries the system lacks go
# on LD_LIBRARY_PATH (nothing under / changes); NVIDIA's EGL vendor file is
# searched for (its container folder, glvnd's, then /usr, /etc and /opt);
# and GL runs on the EGL device platform only (HEADLAB_GL_CONTEXT).
# Then the stages, each under its own timeout, all under one deadline that
# keeps the CPU stages' time whatever the GL ones do, each writing its
# result as soon as it has it:
#   probe        one GL step: the renderer. Unless it is a GPU's (not
#                llvmpipe or another software renderer), every GL stage is
#                skipped, with one line saying why.
#   glctx-tests  glctx's tests (contexts, the NVIDIA device choice, limits)
#   gl-tests     backend/gl's kernel parity, batch invariance and NaN tests
#   gl-debug     one step at S = 4 with HEADLAB_GL_DEBUG=1 (KHR_debug)
#   profile      HEADLAB_GL_PROFILE=1 bench at S = 1,024: per dispatch
#                (the table is looked for under "profile" in its JSON)
#   gl-curve-S   bench --groups S, one process per S of GL_SIZES, with the
#                fraction of fp32 peak and of memory bandwidth
#   sweep-gl, sweep-cpu  the same SEEDS whole induction runs on each backend
#   report       report --against: GL against the CPU (docs/model.md)
#   cpu-curve    bench --groups on the CPU, every core
# Files in $OUT (default gpu-check/), at most the 8 the device tool returns:
#   stages.jsonl  one JSON line per stage (status ok, failed, timeout,
#                 skipped, differs or no-gl; exit code, seconds, budget,
#                 note) and per fact found (renderer, loaders, vendor file)
#   env.txt       the machine: GPU (nvidia-smi), CPU, memory, limits, EGL
#   gltest.txt    the two test binaries' -test.v output
#   profile.json  the profile stage's JSON
#   curve.jsonl   one JSON line per backend and S, as measured
#   parity.txt    report's output
#   dbs.tar.gz    the two sweeps' databases
#   logs.tar.gz   every stage's stdout and stderr (rewritten after each)
# Knobs: DEADLINE (seconds, default 560), SEEDS (32), STEPS (the task's),
# GL_SIZES (1,4,16,64,256,1024,2048,4096), CPU_SIZES (1,16,64,256,1024),
# PROFILE_S (1024), PEAK_GFLOPS and PEAK_GBS (for an H200 by default:
# 67,000 GFLOP/s fp32 by the datasheet, 4,300 GB/s measured copying on
# one), CARRY (gpu-carry), GL_ANY_RENDERER=1 (run the GL stages on a
# software renderer too: to try the script's GL half on llvmpipe, never
# for figures).
# Exits 0 when every stage that ran succeeded (GL skipped for want of a
# GPU counts as success where nvidia-smi sees none), else 1.
set -u
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
deadline=${DEADLINE:-560}
carry=${CARRY:-gpu-carry}
seeds=${SEEDS:-32}
gl_sizes=${GL_SIZES:-1,4,16,64,256,1024,2048,4096}
cpu_sizes=${CPU_SIZES:-1,16,64,256,1024}
profile_s=${PROFILE_S:-1024}
steps=()
[ -n "${STEPS:-}" ] && steps=(--steps "$STEPS")
out=${OUT:-gpu-check}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
files=(stages.jsonl env.txt gltest.txt profile.json curve.jsonl parity.txt dbs.tar.gz logs.tar.gz)
(cd "$out" && rm -f "${files[@]}")
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
logs=$work/logs bin=$work/bin
mkdir -p "$logs" "$bin"
stages=$out/stages.jsonl
: >"$stages"
: >"$out/curve.jsonl"
failed=0

elapsed() { echo $((SECONDS - t0)); }
# say: progress on stdout (the device tool returns its tail).
say() { printf '[%3ds] %s\n' "$(elapsed)" "$*"; }
jstr() {
  local s=$1
  s=${s//\\/\\\\} s=${s//\"/\\\"} s=${s//$'\t'/ } s=${s//$'\r'/ } s=${s//$'\n'/ }
  printf '"%s"' "$s"
}
# record NAME STATUS RC SECONDS BUDGET NOTE: a stage's line in stages.jsonl.
record() {
  printf '{"stage":%s,"status":%s,"rc":%d,"seconds":%d,"budget":%d,"note":%s}\n' \
    "$(jstr "$1")" "$(jstr "$2")" "$3" "$4" "$5" "$(jstr "$6")" >>"$stages"
}
# fact NAME KEY VALUE: something a stage found.
fact() { printf '{"stage":%s,%s:%s}\n' "$(jstr "$1")" "$(jstr "$2")" "$(jstr "$3")" >>"$stages"; }
skip() {
  record "$1" skipped 0 0 0 "$2"
  say "$1: skipped: $2"
}
lastline() { grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1 | cut -c1-600; }
save_logs() { tar -C "$logs" -czf "$work/logs.tar.gz" . 2>/dev/null && mv -f "$work/logs.tar.gz" "$out/logs.tar.gz"; }
trap 'record check interrupted 130 "$(elapsed)" 0 "stopped by a signal"; save_logs; exit 130' TERM INT

reserve=0 # seconds kept for the CPU stages while GL ones run
grace=10  # seconds a stage has to stop after its SIGINT, before SIGKILL
# stage NAME CAP CMD...: runs CMD under a timeout of CAP seconds (cut to
# the deadline, less the reserve and the grace), stdout and stderr to
# $logs/NAME.out and .err; records how it ended. Returns CMD's status, 99
# when no time was left. report's exit 1 is a verdict (the backends
# differ), and so is the probe's failure (no GL here), not a failure of
# the check.
stage() {
  local name=$1 cap=$2
  shift 2
  local left=$((deadline - $(elapsed) - reserve - grace - 2))
  if ((left < 5)); then
    skip "$name" "no time left before the deadline"
    return 99
  fi
  local budget=$((cap < left ? cap : left)) start=$SECONDS
  say "$name: running (up to ${budget}s)"
  # SIGINT first: headlab then keeps what it finished (sweep's runs).
  { timeout -s INT -k "$grace" "$budget" "$@" >"$logs/$name.out" 2>"$logs/$name.err" </dev/null; } 2>/dev/null
  local rc=$? status=ok note=""
  case $rc in
    0) ;;
    124 | 137) status=timeout note="stopped after ${budget}s" ;;
    *) status=failed note=$(lastline "$logs/$name.err") ;;
  esac
  case $name:$rc in
    report:1) status=differs note="the backends differ: see parity.txt" ;;
    probe*:0 | probe*:124 | probe*:137) ;;
    probe*:*) status=no-gl ;; # a verdict; failed or not, the caller decides
  esac
  case $status in ok | differs | no-gl) ;; *) failed=1 ;; esac
  record "$name" "$status" "$rc" $((SECONDS - start)) "$budget" "$note"
  say "$name: $status ($((SECONDS - start))s)${note:+: $note}"
  save_logs
  return $rc
}

# rows: bench --json on stdin, one JSON line per row of its group curve
# on stdout, with the fraction of fp32 peak and of bandwidth when peak
# figures are given (-v pf=GFLOP/s -v pb=GB/s).
rows() {
  awk -v pf="${1:-0}" -v pb="${2:-0}" '
    /^[ \t]*"steps": \[/ { on = 1; depth = 0; next }
    !on { next }
    depth == 0 && /^[ \t]*\]/ { on = 0; next }
    {
      line = $0; sub(/^[ \t]+/, "", line)
      if (depth == 0 && line ~ /^\{/) { depth = 1; row = ""; gf = ""; gb = ""; next }
      opens = gsub(/[\[{]/, "&", line); closes = gsub(/[\]}]/, "&", line)
      if (depth == 1 && closes > opens && line ~ /^\},?$/) {
        sub(/,$/, "", row); extra = ""
        if (pf > 0 && gf != "") extra = extra sprintf(",\"frac_fp32_peak\":%.6g,\"peak_gflop_per_s\":%s", gf / pf, pf)
        if (pb > 0 && gb != "") extra = extra sprintf(",\"frac_bandwidth\":%.6g,\"peak_gb_per_s\":%s", gb / pb, pb)
        print "{" row extra "}"; depth = 0; next
      }
      if (depth == 1 && line ~ /^"gflop_per_s":/) { v = line; sub(/^[^:]*:[ \t]*/, "", v); gf = v + 0 }
      if (depth == 1 && line ~ /^"gb_per_s":/) { v = line; sub(/^[^:]*:[ \t]*/, "", v); gb = v + 0 }
      depth += opens - closes; row = row line
    }'
}

# --- Set-up: binaries, loaders, vendor file.
for b in headlab gl.test glctx.test; do
  if [ -f "$carry/$b.gz" ]; then
    gzip -dc "$carry/$b.gz" >"$bin/$b" && chmod +x "$bin/$b"
  elif [ -f "$carry/$b" ]; then
    cp "$carry/$b" "$bin/$b" && chmod +x "$bin/$b"
  fi
done
have=1
if [ ! -x "$bin/headlab" ]; then
  have=0 failed=1
  record setup failed 1 0 0 "no $carry/headlab.gz: run scripts/gpu-prepare.sh where Go is, and carry $carry"
  say "setup: no $carry/headlab.gz (scripts/gpu-prepare.sh makes it; carry $carry)"
fi
# The loaders: unpacked where they change nothing else, and only those
# the system lacks put on LD_LIBRARY_PATH (libEGL's own dependencies too).
gl=$work/gl
mkdir -p "$gl/root" "$gl/lib"
taken=""
if ! compgen -G "$carry/debs/*.deb" >/dev/null; then
  fact setup loaders "no $carry/debs/*.deb carried: the system's own libraries or none"
elif ! command -v dpkg-deb >/dev/null 2>&1; then
  fact setup loaders "no dpkg-deb here to unpack $carry/debs"
else
  for f in "$carry"/debs/*.deb; do dpkg-deb -x "$f" "$gl/root" || fact setup loaders "dpkg-deb -x $f failed"; done
  for _ in 1 2 3 4; do
    missing=$(LD_LIBRARY_PATH="$gl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$bin"/* 2>/dev/null | awk '/=> not found/ {print $1}' | sort -u)
    added=0
    for so in $missing; do
      src=$(find "$gl/root" -name "$so" \( -type f -o -type l \) 2>/dev/null | head -n 1)
      if [ -n "$src" ] && [ ! -e "$gl/lib/$so" ]; then
        ln -s "$src" "$gl/lib/$so" && added=1 taken="$taken $so"
      fi
    done
    ((added)) || break
  done
  # glvnd's libraries share an internal interface: take them as one set.
  if [[ $taken == *libGL* || $taken == *libEGL* ]]; then
    for so in libEGL.so.1 libGL.so.1 libGLX.so.0 libGLdispatch.so.0 libOpenGL.so.0; do
      src=$(find "$gl/root" -name "$so" \( -type f -o -type l \) 2>/dev/null | head -n 1)
      if [ -n "$src" ] && [ ! -e "$gl/lib/$so" ]; then
        ln -s "$src" "$gl/lib/$so" && taken="$taken $so"
      fi
    done
  fi
  export LD_LIBRARY_PATH=$gl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fact setup loaders "from $carry/debs:${taken:- none needed}"
fi
still=$(ldd "$bin"/* 2>/dev/null | awk '/=> not found/ {print $1}' | sort -u | tr '\n' ' ')
[ -n "$still" ] && fact setup missing_libraries "$still"
# NVIDIA's EGL library: its folder on LD_LIBRARY_PATH when ld.so does not
# know it (glvnd dlopens it by name).
if ! ldconfig -p 2>/dev/null | grep -q 'libEGL_nvidia\.so\.0'; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    if [ -e "$d/libEGL_nvidia.so.0" ]; then
      case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d ;; esac
      fact setup nvidia_egl_library "$d/libEGL_nvidia.so.0"
      break
    fi
  done
fi
# The vendor file: as set, else NVIDIA's where its container image mounts
# the driver or in glvnd's folders, else searched for.
vendor=${__EGL_VENDOR_LIBRARY_FILENAMES:-}
if [ -z "$vendor" ]; then
  for d in /usr/local/nvidia/share/glvnd/egl_vendor.d /usr/share/glvnd/egl_vendor.d /etc/glvnd/egl_vendor.d /usr/local/share/glvnd/egl_vendor.d; do
    for j in "$d"/*nvidia*.json; do
      [ -f "$j" ] && vendor=$j && break 2
    done
  done
fi
if [ -z "$vendor" ]; then
  vendor=$(timeout 20 find /usr /etc /opt -maxdepth 8 -path '*egl_vendor.d/*' -name '*nvidia*.json' 2>/dev/null | head -n 1)
fi
if [ -n "$vendor" ]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES=$vendor
  fact setup vendor_file "$vendor"
else
  fact setup vendor_file "none found (no NVIDIA EGL driver here?)"
fi
export HEADLAB_GL_CONTEXT=egl-device
unset DISPLAY

# --- The machine.
gpu=$(timeout 15 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
pf=${PEAK_GFLOPS:-} pb=${PEAK_GBS:-}
case $gpu in *H200*) pf=${pf:-67000} pb=${pb:-4300} ;; esac
{
  echo "== headlab GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  cat "$carry/MANIFEST" 2>/dev/null || echo "no $carry/MANIFEST"
  echo "== machine"
  uname -a
  grep -h '^PRETTY_NAME' /etc/os-release 2>/dev/null
  echo "cores: $(nproc)   $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null)"
  grep -E '^(MemTotal|MemAvailable)' /proc/meminfo 2>/dev/null
  echo "== limits (ulimit -a)"
  ulimit -a
  echo "== GPU"
  if command -v nvidia-smi >/dev/null 2>&1; then
    timeout 15 nvidia-smi -L
    timeout 15 nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,compute_mode,mig.mode.current --format=csv
    timeout 15 nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv
  else
    echo "nvidia-smi: not here"
  fi
  echo "peaks for the fractions: ${pf:-none} GFLOP/s fp32, ${pb:-none} GB/s"
  echo "== EGL"
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>} NVIDIA_VISIBLE_DEVICES=${NVIDIA_VISIBLE_DEVICES-<unset>} NVIDIA_DRIVER_CAPABILITIES=${NVIDIA_DRIVER_CAPABILITIES-<unset>}"
  echo "__EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES-<unset>}"
  [ -n "$vendor" ] && cat "$vendor"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH-}"
  echo "loaders from $carry/debs:${taken:- none}"
  ldconfig -p 2>/dev/null | grep -E 'libEGL|libGLX_nvidia|libGLdispatch|libnvidia-eglcore' || echo "ldconfig knows no EGL library"
  echo "== ldd headlab"
  ldd "$bin/headlab" 2>&1
} >"$out/env.txt" 2>&1
say "env: ${gpu:-no nvidia-smi}; $(nproc) cores"
record env ok 0 "$(elapsed)" 0 "${gpu:-no nvidia-smi}"

# --- GL: the renderer first. The probe is one headlab GL step; should it
# fail, a bare context (glctx's TestComputeLimits on the device platform)
# tells a broken step on a GPU, whose GL stages then run to show why, from
# no GPU at all.
gl_stages="glctx-tests, gl-tests, gl-debug, profile, gl-curve, sweep-gl"
software() { grep -qiE 'llvmpipe|softpipe|swrast|lavapipe|swiftshader' <<<"$1"; }
why="" renderer=""
if ((!have)); then
  why="no headlab binary"
elif stage probe 60 "$bin/headlab" bench --parts groups --groups 1 --backends gl --steps 1 --json; then
  renderer=$(sed -n 's/^[[:space:]]*"gl_renderer": "\(.*\)",\{0,1\}[[:space:]]*$/\1/p' "$logs/probe.out" | head -n 1)
  [ -n "$renderer" ] || why="the probe printed no renderer"
else
  why="the probe's GL step failed: $(lastline "$logs/probe.err")"
  if [ -x "$bin/glctx.test" ] &&
    stage probe-context 30 env -C glctx "$bin/glctx.test" -test.run '^TestComputeLimits$/^egl-device$' -test.v; then
    renderer=$(sed -n 's/.*limits on \(.*\): shared memory.*/\1/p' "$logs/probe-context.out" | head -n 1)
    if [ -n "$renderer" ] && ! software "$renderer"; then
      fact probe-context gl_runs "headlab's GL step failed, but a context on this renderer works: the GL stages run to show why"
      why=""
    fi
  fi
fi
if [ -n "$renderer" ]; then
  fact probe renderer "$renderer"
  echo "GL renderer: $renderer" >>"$out/env.txt"
  if [ -z "$why" ] && software "$renderer"; then
    if [ -n "${GL_ANY_RENDERER:-}" ]; then
      fact probe gl_any_renderer "GL_ANY_RENDERER is set: the GL stages run on a software renderer (their figures say nothing of a GPU)"
    else
      why="the renderer is software ($renderer), not a GPU"
    fi
  fi
fi
cpu_reserve=170 # sweep-cpu, report and cpu-curve
if [ -n "$why" ]; then
  # Without a GPU that is the expected outcome; with one, a failure, and
  # what the driver brought goes into env.txt for the next try.
  if [ -n "$gpu" ]; then
    failed=1
    {
      echo "== GL failed on a GPU: the driver's EGL and GL files"
      find /usr/local/nvidia -maxdepth 2 2>&1 | head -n 60
      timeout 20 find / -xdev \( -name 'libEGL*' -o -name '*egl_vendor*' -o -name '10_nvidia*.json' \) 2>/dev/null | head -n 40
    } >>"$out/env.txt" 2>&1
  fi
  say "GL stages skipped ($gl_stages): $why"
  fact probe gl_skipped "$why"
  for s in ${gl_stages//,/}; do record "$s" skipped 0 0 0 "no GPU renderer (see probe)"; done
  : >"$out/gltest.txt"
else
  reserve=$cpu_reserve
  stage glctx-tests 40 env -C glctx "$bin/glctx.test" -test.v -test.timeout 35s
  stage gl-tests 90 env -C backend/gl CI=1 "$bin/gl.test" -test.v -test.timeout 85s \
    -test.run 'TestInfo|Parity|Invarian|NaN|Diverg|TestDispatchCounts|TestLargeGrids|TestTrainingSteps'
  cat "$logs"/glctx-tests.out "$logs"/glctx-tests.err "$logs"/gl-tests.out "$logs"/gl-tests.err >"$out/gltest.txt" 2>/dev/null
  { echo "== GL, from the tests"; grep -hE 'renderer "|GPU memory|limits on |EGL devices:' "$logs"/gl*-tests.out; } >>"$out/env.txt" 2>/dev/null
  stage gl-debug 30 env HEADLAB_GL_DEBUG=1 "$bin/headlab" bench --parts groups --groups 4 --backends gl --steps 1
  dmon=""
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi dmon -s pucm -d 1 >"$logs/dmon.log" 2>&1 &
    dmon=$!
  fi
  stage profile 60 env HEADLAB_GL_PROFILE=1 "$bin/headlab" bench --parts groups --groups "$profile_s" --backends gl --json
  cp "$logs/profile.out" "$out/profile.json" 2>/dev/null
  if grep -q '"profile"' "$out/profile.json" 2>/dev/null; then
    fact profile dispatches "$(grep -c '"name"' "$out/profile.json") entries under \"profile\""
  else
    fact profile dispatches "no \"profile\" in the output (does this build know HEADLAB_GL_PROFILE?)"
  fi
  curve_end=$(($(elapsed) + 150))
  stop=""
  for S in ${gl_sizes//,/ }; do
    if [ -n "$stop" ]; then
      skip "gl-curve-$S" "$stop"
      continue
    fi
    cap=$((curve_end - $(elapsed)))
    ((cap > 45)) && cap=45
    if ((cap < 5)); then
      skip "gl-curve-$S" "the curve's 150 s are spent"
      continue
    fi
    stage "gl-curve-$S" "$cap" "$bin/headlab" bench --parts groups --groups "$S" --backends gl --json
    case $? in
      0) rows "$pf" "$pb" <"$logs/gl-curve-$S.out" >>"$out/curve.jsonl" ;;
      124 | 137) stop="S = $S ran out of time" ;;
    esac
  done
  [ -n "$dmon" ] && kill "$dmon" 2>/dev/null
  stage sweep-gl 90 "$bin/headlab" sweep --backend gl --task induction --seeds "1-$seeds" "${steps[@]}" --db "$work/gl.db" --quiet
  reserve=0
fi

# --- The CPU stages.
if ((have)); then
  stage sweep-cpu 100 "$bin/headlab" sweep --backend cpu --task induction --seeds "1-$seeds" "${steps[@]}" --db "$work/cpu.db" --quiet
  dbs=()
  for d in gl.db cpu.db; do [ -s "$work/$d" ] && dbs+=("$d"); done
  ((${#dbs[@]})) && tar -C "$work" -czf "$out/dbs.tar.gz" "${dbs[@]}"
  if [ -s "$work/gl.db" ] && [ -s "$work/cpu.db" ]; then
    stage report 20 "$bin/headlab" report --db "$work/gl.db" --against "$work/cpu.db"
    [ -e "$logs/report.out" ] && cp "$logs/report.out" "$out/parity.txt"
  elif [ -s "$work/cpu.db" ]; then
    stage report 20 "$bin/headlab" report --db "$work/cpu.db"
    [ -e "$logs/report.out" ] &&
      { echo "no GL sweep (${why:-sweep-gl did not finish}): the CPU's runs alone"; cat "$logs/report.out"; } >"$out/parity.txt"
  else
    skip report "no sweep database"
  fi
  stage cpu-curve 50 "$bin/headlab" bench --parts groups --groups "$cpu_sizes" --backends cpu --json &&
    rows <"$logs/cpu-curve.out" >>"$out/curve.jsonl"
fi

save_logs
n_ok=$(grep -c '"status":"ok"' "$stages") n_skip=$(grep -c '"status":"skipped"' "$stages")
n_bad=$(grep -cE '"status":"(failed|timeout)"' "$stages")
say "done: $n_ok stages ok, $n_bad failed or timed out, $n_skip skipped; in $out: $(find "$out" -mindepth 1 -printf '%P ')"
exit "$failed"

#!/usr/bin/env bash
# Builds deploy/Dockerfile's two images with podman and runs them as the
# Kubernetes manifests would (deploy/README.md, "What is tested"):
#
#   - `version` names the revision built, and the CPU image holds no GL
#     driver (no Mesa, no glvnd vendor library or file);
#   - there `--backend gl` exits 2 with one line, and `--backend auto`
#     says so and trains on the CPU;
#   - two containers run as two pods of the Indexed Job (JOB_COMPLETION_INDEX,
#     JOB_COMPLETIONS, a /work of their own, a shared /results), writing
#     their shards as the manifests do, and the shards merge to the
#     one-machine sweep of the same pairs (`report --against`);
#   - a pod without JOB_COMPLETIONS exits 2 with one line, writing nothing.
#
#   scripts/image-test.sh        (not part of scripts/test.sh: on 2 busy
#                                 cores about 20 minutes the first time, the
#                                 base images made and Go's build cache
#                                 empty; under 2 minutes after a change)
#
# Needs podman and runc (apt-get install podman runc), and debootstrap
# when the base images are missing: no registry is reached, so the
# Dockerfile's FROM images (golang:1.26-bookworm, debian:bookworm-slim)
# are made locally (debootstrap --variant=minbase bookworm, and this
# machine's Go toolchain for golang's) and kept for the next run. The
# build's apt-get reaches Debian's mirror on the host's network; Go
# modules come from this machine's module cache, served to the build as
# a file proxy. Podman runs with runc and cgroupfs and ulimits this
# machine allows (a containers.conf of its own, CONTAINERS_CONF).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

die() {
  echo "image-test: $*" >&2
  exit 1
}
for c in podman runc go; do
  command -v "$c" >/dev/null 2>&1 || die "needs $c (apt-get install podman runc)"
done

work=$(mktemp -d)
cleanup() {
  # Containers started here (--rm ones go by themselves).
  podman rm -f -i headlab-test-pod0 headlab-test-pod1 >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"

export CONTAINERS_CONF=$work/containers.conf
cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
# The defaults (nofile and nproc of about a million) need CAP_SYS_RESOURCE,
# which some machines (this project's) withhold from root.
default_ulimits = ["nofile=16384:16384", "nproc=32768:32768"]
[engine]
# crun refuses a machine with mixed cgroup versions; runc does not.
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF

start=$SECONDS
step() { echo "image-test: [$((SECONDS - start)) s] $*" >&2; }

# The FROM images, made locally when absent.
slim=docker.io/library/debian:bookworm-slim
golang=docker.io/library/golang:1.26-bookworm
if ! podman image exists "$slim" || ! podman image exists "$golang"; then
  command -v debootstrap >/dev/null 2>&1 || die "needs debootstrap to make $slim and $golang (apt-get install debootstrap)"
  step "making $slim and $golang with debootstrap"
  root=$work/rootfs
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -5 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  # What Debian's slim image leaves out.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
  tar -C "$root" -c . | podman import -q --change 'CMD ["bash"]' - "$slim" >/dev/null
  goroot=$(go env GOROOT)
  mkdir -p "$root/usr/local/go" "$root/go"
  cp -a "$goroot/." "$root/usr/local/go/"
  tar -C "$root" -c . | podman import -q \
    --change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV GOPATH=/go' --change 'ENV GOTOOLCHAIN=local' --change 'WORKDIR /go' --change 'CMD ["bash"]' \
    - "$golang" >/dev/null
  rm -rf "$root"
fi

rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
# The build context: the files git tracks or would (what a clone holds,
# with this tree's changes), copied once so that both images build from
# the same files while others edit the tree.
ctx=$work/context
mkdir "$ctx"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -c | tar -x -C "$ctx"
build() { # build TARGET TAG
  podman build --pull=never --network host -q -f "$ctx/deploy/Dockerfile" --target "$1" -t "$2" \
    --volume "$(go env GOMODCACHE)/cache/download:/goproxy:ro" --build-arg GOPROXY=file:///goproxy \
    --build-arg REVISION="$rev" "$ctx" >/dev/null
}
step "building the CPU image (headlab:test-cpu)"
build cpu headlab:test-cpu
step "building the GPU image (headlab:test-gpu)"
build gpu headlab:test-gpu
size() { podman image inspect --format '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1e6 }'; }
step "sizes: headlab:test-cpu $(size headlab:test-cpu), headlab:test-gpu $(size headlab:test-gpu), $slim $(size "$slim")"

fail=0
check() { # check WHAT COND...
  local what=$1
  shift
  if "$@"; then echo "ok   $what" >&2; else echo "FAIL $what" >&2; fail=1; fi
}
# pod IMAGE ARGS...: the image's entry point (headlab) with ARGS, no network.
pod() { podman run --rm --network none "$@"; }
oneline() { # oneline STATUS FILE WANT: exit STATUS, one "headlab: " line in FILE
  [ "$1" = 2 ] && [ "$(wc -l <"$2")" = 1 ] && grep -q '^headlab: ' "$2"
}

step "running the images"
pod headlab:test-cpu version >"$work/version"
check "version names revision $rev" grep -qF "$rev" "$work/version"
for img in headlab:test-cpu headlab:test-gpu; do
  drivers=$(pod --entrypoint sh "$img" -c \
    "find / -xdev \( -name '*mesa*' -o -name '*_dri.so' -o -name 'libEGL_*' -o -name 'libGLX_*' -o -name 'egl_vendor.d' \) -print")
  check "$img holds no GL driver${drivers:+ (found: $drivers)}" test -z "$drivers"
  set +e
  pod "$img" train --steps 2 --backend gl --quiet >"$work/out" 2>"$work/err"
  st=$?
  set -e
  check "$img: --backend gl exits 2 with one line (exit $st: $(head -c 300 "$work/err"))" oneline "$st" "$work/err"
  check "$img: --backend gl writes nothing on stdout" test ! -s "$work/out"
done
pod headlab:test-gpu version >/dev/null
gpuenv=$(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' headlab:test-gpu)
check "the GPU image asks the NVIDIA runtime for graphics" grep -q '^NVIDIA_DRIVER_CAPABILITIES=.*graphics' <<<"$gpuenv"
pod headlab:test-cpu train --steps 5 --backend auto --quiet >"$work/out" 2>"$work/err"
check "--backend auto says it uses the cpu" grep -q '^headlab: using the cpu backend: ' "$work/err"
check "--backend auto trains on the cpu" grep -q 'backend cpu' "$work/out"

# Two pods of the Indexed Job, as deploy/kubernetes-job.yaml runs them: the
# shard on the pod's own /work (an emptyDir; SQLite's log wants a local
# disk), copied to the shared /results under a temporary name and renamed.
sweepflags="--task induction --seeds 1-6 --grid layers=1,2 --steps 100 --measure none --workers 1 --quiet"
podscript="set -e
headlab sweep $sweepflags --db /work/shard.db
mkdir -p /results/headlab-sweep
cp /work/shard.db /results/headlab-sweep/.shard-\$JOB_COMPLETION_INDEX.db.tmp
mv /results/headlab-sweep/.shard-\$JOB_COMPLETION_INDEX.db.tmp /results/headlab-sweep/shard-\$JOB_COMPLETION_INDEX.db"
results=$work/results
mkdir -p "$results"
step "two pods: the sweep in two shards"
for i in 0 1; do
  podman run -d --name "headlab-test-pod$i" --network none --tmpfs /work -v "$results:/results" \
    -e JOB_COMPLETION_INDEX=$i -e JOB_COMPLETIONS=2 --entrypoint sh headlab:test-cpu -c "$podscript" >/dev/null
done
for i in 0 1; do
  st=$(podman wait "headlab-test-pod$i")
  check "pod $i exits 0 (exit $st)" test "$st" = 0
  [ "$st" = 0 ] || podman logs "headlab-test-pod$i" 2>&1 | tail -5 >&2
  podman rm "headlab-test-pod$i" >/dev/null
done
step "the one-machine sweep, merge and compare"
set +e
pod -v "$results:/results" --entrypoint sh headlab:test-cpu -c "set -e
headlab sweep $sweepflags --db /results/one.db
headlab merge --db /results/all.db /results/headlab-sweep/shard-0.db /results/headlab-sweep/shard-1.db
headlab report --db /results/all.db --against /results/one.db >/dev/null
headlab merge --db /results/both.db /results/all.db /results/one.db" >"$work/out" 2>"$work/err"
st=$?
set -e
[ "$st" = 0 ] || tail -5 "$work/err" >&2
check "the merged shards agree with the one-machine sweep (report --against; exit $st)" test "$st" = 0
# Merging the two refuses any pair whose results differ in a bit: all
# twelve of one.db's must be duplicates.
cat "$work/out" >&2
check "the merged shards hold the one-machine sweep's runs, bit for bit" \
  grep -q ': 12 runs added, 12 duplicates skipped, 12 runs in all' "$work/out"

step "a pod without JOB_COMPLETIONS"
set +e
pod --tmpfs /work -v "$results:/results" -e JOB_COMPLETION_INDEX=0 headlab:test-cpu \
  sweep $sweepflags --db /results/nocount.db >"$work/out" 2>"$work/err"
st=$?
set -e
check "it exits 2 with one line (exit $st: $(head -c 300 "$work/err"))" oneline "$st" "$work/err"
check "it writes no database" test ! -e "$results/nocount.db"

# The build stages of earlier runs (untagged, 2 GB each) go; the base
# images, the two tested ones and Go's build cache stay.
podman image prune -f >/dev/null
step "done"
[ "$fail" = 0 ] || die "FAILED"
echo "image-test: ok in $((SECONDS - start)) s" >&2

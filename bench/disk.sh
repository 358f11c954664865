#!/usr/bin/env bash
# Benchmark: what a cold build and test of a real project writes to disk,
# against failpass's default per-run disk cap (internal/run/disk.go:
# DefaultMaxDisk 4 GiB, DefaultMaxDiskFiles 100,000 files, folders and
# links).
#
# Each project runs as a card command would in a sandbox: in one fresh
# folder that holds a copy of the project tree and the run's private
# HOME, TMPDIR (and GOTMPDIR), an empty GOCACHE and an empty
# CARGO_TARGET_DIR. While the command runs, a background loop samples that
# folder about every 0.5 s: its allocated bytes (du -s -B1, st_blocks as
# the watcher counts them, hard links once) and its entries (find | wc -l).
# What the folder held before the command (the tree, a cargo config) is
# subtracted, so the figures are what the run itself wrote. Peak bytes and
# peak entries are maxima taken separately, as the watcher checks each cap
# on its own; "final" is the folder after the command ended.
#
# Kept outside the measured folder, because a run only reads them: the
# Go module cache (GOMODCACHE, filled before the timed command), the Go
# and Rust toolchains, and Debian's crate sources.
#
# Projects:
#   Go:    spf13/pflag, BurntSushi/toml, google/go-cmp from the local git
#          mirrors (/work/.mirror/OWNER+NAME/repo), and gin and
#          prometheus/client_golang, larger modules with many dependencies,
#          from the Go module proxy. Command: go test ./... (GOFLAGS gains
#          -mod=mod).
#   cargo: regex, serde_json and clap (with its derive, env, cargo,
#          unicode, wrap_help and string features: more dependencies, proc
#          macros) from Debian's packaged crate sources
#          (/usr/share/cargo/registry), with crates.io replaced by that
#          folder. Command: cargo test --offline. The crates and their
#          dev-dependencies come from apt:
#            apt-get install librust-regex-dev librust-serde-json-dev \
#              librust-clap-dev librust-quickcheck-dev librust-rand-dev \
#              librust-lazy-static-dev librust-trybuild-dev \
#              librust-humantime-dev librust-rustversion-dev \
#              librust-shlex-dev librust-static-assertions-dev \
#              librust-automod-dev librust-indoc-dev librust-ref-cast-dev \
#              librust-serde-bytes-dev librust-serde-stacker-dev
#
# Usage: bench/disk.sh
#   Runs every project; one whose source cannot be got here is skipped with
#   the reason. Prints one line per project: exit code of the command, wall
#   time, peak and final bytes written (MiB) and entries created, and the
#   peaks as a share of the 4 GiB and 100,000 caps. A failing test does not
#   matter here (only what the build writes), but the exit code is shown.
#   BENCH_LOGS=DIR copies each command's output there as NAME.log.
#   GIN_VERSION and CLIENT_GOLANG_VERSION choose the proxy modules'
#   versions (default: the ones last measured).
#
# pipefail is left off on purpose: du and find exit non-zero when a file
# vanishes mid-walk, which a running build does all the time.
set -eu

cap_bytes=$((4 << 30))
cap_files=100000

work=$(mktemp -d)
sampler_pid=
cleanup() {
  if [ -n "$sampler_pid" ]; then kill "$sampler_pid" 2>/dev/null || true; fi
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/logs"

# What the runs read but must not write into the measured folder: with
# HOME moved, the go command and rustup would otherwise look under the new
# HOME for their config, module cache and toolchains.
user_goenv=$(go env GOENV 2>/dev/null || true)
user_gopath=$(go env GOPATH 2>/dev/null || true)
user_gomodcache=$(go env GOMODCACHE 2>/dev/null || true)
user_goflags=$(go env GOFLAGS 2>/dev/null || true)
user_rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_registry=/usr/share/cargo/registry

# sample DIR: prints "BYTES ENTRIES" for DIR, what the disk watcher counts.
sample() {
  local b n
  b=$(du -s -B1 "$1" 2>/dev/null | cut -f1)
  n=$(find "$1" 2>/dev/null | wc -l)
  echo "${b:-0} ${n:-0}"
}

# sampler DIR OUT: keeps the maxima of DIR's bytes and entries in OUT until
# OUT.stop exists, then samples once more (after the command ended).
sampler() {
  local pb=0 pn=0 b n
  while :; do
    read -r b n < <(sample "$1")
    if [ "$b" -gt "$pb" ]; then pb=$b; fi
    if [ "$n" -gt "$pn" ]; then pn=$n; fi
    echo "$pb $pn" > "$2.tmp" && mv "$2.tmp" "$2"
    if [ -e "$2.stop" ]; then break; fi
    sleep 0.5
  done
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
pct() { awk -v a="$1" -v c="$2" 'BEGIN { printf "%.1f%%", 100 * a / c }'; }

# fresh NAME: a new measured folder for project NAME (printed), with the
# run's private folders; the project tree goes in its src/.
fresh() {
  local d="$work/run-$1"
  mkdir -p "$d/src" "$d/home" "$d/tmp" "$d/gocache" "$d/target"
  echo "$d"
}

# measure NAME DIR UNITS_REGEX CMD...: runs CMD in DIR/src with the run's
# environment in DIR, samples DIR meanwhile, prints the result line.
# UNITS_REGEX counts lines of the output (packages tested, crates compiled).
measure() {
  local name=$1 dir=$2 units_re=$3
  shift 3
  local log="$work/logs/$name.log" out="$work/peak-$name"
  local b0 n0 pb pn fb fn t0 t1 rc=0 units
  read -r b0 n0 < <(sample "$dir")
  echo "$b0 $n0" > "$out"
  sampler "$dir" "$out" &
  sampler_pid=$!
  t0=$(date +%s.%N)
  (cd "$dir/src" && env \
    HOME="$dir/home" TMPDIR="$dir/tmp" GOTMPDIR="$dir/tmp" \
    GOCACHE="$dir/gocache" GOENV="$user_goenv" GOPATH="$user_gopath" \
    GOMODCACHE="$user_gomodcache" GOFLAGS="$user_goflags -mod=mod" \
    CARGO_HOME="$dir/home/.cargo" CARGO_TARGET_DIR="$dir/target" \
    RUSTUP_HOME="$user_rustup_home" \
    "$@") > "$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  touch "$out.stop"
  wait "$sampler_pid"
  sampler_pid=
  read -r pb pn < "$out"
  read -r fb fn < <(sample "$dir")
  pb=$((pb - b0)) pn=$((pn - n0)) fb=$((fb - b0)) fn=$((fn - n0))
  units=$(grep -cE "$units_re" "$log" || true)
  printf '%-14s exit=%-3s time=%5.0fs  peak=%8s MiB (%6s of 4 GiB) %7s entries (%6s of 100k)  final=%8s MiB %7s entries  tree=%s MiB %s entries  %s\n' \
    "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "$(mib "$pb")" "$(pct "$pb" "$cap_bytes")" "$pn" "$(pct "$pn" "$cap_files")" \
    "$(mib "$fb")" "$fn" "$(mib "$b0")" "$n0" "$units"
  if [ -n "${BENCH_LOGS:-}" ]; then mkdir -p "$BENCH_LOGS" && cp "$log" "$BENCH_LOGS/"; fi
  chmod -R u+w "$dir" 2>/dev/null || true
  rm -rf "$dir"
}

skip() { printf '%-14s skipped: %s\n' "$1" "$2"; }

# go_prepare DIR: fetches the module's dependencies (tests' too) into the
# user's module cache, outside DIR, so the timed run only builds. Its own
# GOCACHE is a throwaway one, so the measured run stays cold.
go_prepare() {
  (cd "$1/src" && GOCACHE="$work/prep-gocache" GOFLAGS="$user_goflags -mod=mod" \
    go list -deps -test ./... > /dev/null 2>&1) || true
}

# go_mirror NAME OWNER+REPO: a Go project from a local bare git mirror.
go_mirror() {
  local name=$1 git="/work/.mirror/$2/repo" dir
  if ! command -v go > /dev/null; then skip "$name" "no go command"; return; fi
  if ! git --git-dir="$git" rev-parse -q --verify HEAD > /dev/null 2>&1; then
    skip "$name" "no git mirror at $git"; return
  fi
  dir=$(fresh "$name")
  git --git-dir="$git" archive HEAD | tar -x -C "$dir/src"
  go_prepare "$dir"
  measure "$name" "$dir" '^(ok|FAIL|\?) ' go test ./...
}

# go_proxy NAME MODULE VERSION: a Go module's source out of the module
# cache, fetched through the module proxy, copied to a writable tree.
go_proxy() {
  local name=$1 mod=$2 ver=$3 src dir
  if ! command -v go > /dev/null; then skip "$name" "no go command"; return; fi
  if ! src=$(cd "$work" && GOFLAGS= go mod download -json "$mod@$ver" 2> /dev/null \
      | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || [ -z "$src" ] || [ ! -d "$src" ]; then
    skip "$name" "$mod@$ver did not download from the module proxy"; return
  fi
  dir=$(fresh "$name")
  cp -r "$src/." "$dir/src"
  chmod -R u+w "$dir/src"
  go_prepare "$dir"
  measure "$name" "$dir" '^(ok|FAIL|\?) ' go test ./...
}

# cargo_crate NAME CRATE [CARGO_ARGS...]: a crate's source from Debian's
# registry, built against that registry in place of crates.io.
cargo_crate() {
  local name=$1 crate=$2 src dir err
  shift 2
  if ! command -v cargo > /dev/null; then skip "$name" "no cargo command"; return; fi
  src=$(ls -d "$cargo_registry/$crate"-[0-9]* 2> /dev/null | sort -V | tail -n 1)
  if [ -z "$src" ]; then
    skip "$name" "no $cargo_registry/$crate-* (apt-get install librust-${crate//_/-}-dev)"; return
  fi
  dir=$(fresh "$name")
  cp -r "$src/." "$dir/src"
  mkdir -p "$dir/home/.cargo"
  printf '[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "%s"\n' \
    "$cargo_registry" > "$dir/home/.cargo/config.toml"
  # Resolving needs every dependency, dev ones too, in the registry: a
  # crate whose set is incomplete is skipped with cargo's reason.
  if ! err=$(cd "$dir/src" && HOME="$dir/home" CARGO_HOME="$dir/home/.cargo" \
      RUSTUP_HOME="$user_rustup_home" cargo generate-lockfile --offline 2>&1); then
    skip "$name" "$(basename "$src") does not resolve offline: $(echo "$err" | grep -m1 -i error)"
    rm -rf "$dir"; return
  fi
  measure "$name" "$dir" '^ *Compiling ' cargo test --offline "$@"
}

echo "disk written by a cold build+test, against the default cap (4 GiB, 100000 entries); $(nproc) cores"
echo "(last field: go test's per-package result lines (ok, FAIL, ?), or cargo's Compiling lines)"
go_mirror pflag spf13+pflag
go_mirror toml BurntSushi+toml
go_mirror go-cmp google+go-cmp
go_proxy gin github.com/gin-gonic/gin "${GIN_VERSION:-v1.12.0}"
go_proxy client_golang github.com/prometheus/client_golang "${CLIENT_GOLANG_VERSION:-v1.25.0}"
cargo_crate regex regex
cargo_crate serde_json serde_json
cargo_crate clap clap --features derive,env,cargo,unicode,wrap_help,string

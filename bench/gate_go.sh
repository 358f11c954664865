#!/usr/bin/env bash
# Benchmark: a warm `failpass gate` of a Go card (go test of a small
# module, sandbox on), one binary against another, interleaved in the same
# run: each binary gets a repository of its own, warmed by one gate first,
# then the two take turns. Prints the medians and the ratio B/A.
#
# Usage: bench/gate_go.sh A_BINARY [B_BINARY] [ITERATIONS]
#   B_BINARY defaults to a build of this checkout; ITERATIONS to 11.
#   FRESH=1 gates a new diff each iteration (a comment that differs), as
#   a stream of real candidates does: then no binary can reuse a
#   candidate's own build or test result from an earlier gate.
#   For "before and after" numbers: build A from the commit before a
#   change (git worktree add /tmp/old REV; go build -o /tmp/fp-old ./cmd/failpass).
set -euo pipefail
a=${1:?usage: bench/gate_go.sh A_BINARY [B_BINARY] [ITERATIONS]}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
b=${2:-}
if [ -z "$b" ]; then
  go build -o "$work/failpass" "$here/../cmd/failpass"
  b="$work/failpass"
fi
n=${3:-11}

mkrepo() {
  local repo=$1
  mkdir -p "$repo/lib"
  (cd "$repo" && git init -q -b main
   printf 'module example.org/bench\n\ngo 1.21\n' > go.mod
   printf 'package lib\n\nimport "strings"\n\n// Answer is wrong: the bug.\nfunc Answer() int { return len(strings.Fields("a b")) + 39 }\n' > lib/lib.go
   printf 'package lib\n\nimport (\n\t"fmt"\n\t"testing"\n)\n\nfunc TestAnswer(t *testing.T) {\n\tif got := Answer(); got != 42 {\n\t\tt.Fatal(fmt.Sprint("Answer() = ", got))\n\t}\n}\n\nfunc TestOther(t *testing.T) {}\n' > lib/lib_test.go
   git add -A && git -c user.name=b -c user.email=b@example.org commit -qm base)
}
mkrepo "$work/ra"
mkrepo "$work/rb"
(cd "$work/ra" && sed -i 's/+ 39/+ 40/' lib/lib.go && git diff > "$work/fix.diff" && git checkout -q .)
cat > "$work/card.yml" <<'CARD'
id: "BENCH-GO"
base_ref: "main"
fail: {cmd: ["go", "test", "-run", "^TestAnswer$", "./lib"], expect_exit: 1}
pass: {cmd: ["go", "test", "-run", "^TestAnswer$", "./lib"], expect_exit: 0}
invariant: {cmd: ["go", "test", "-run", "^TestOther$", "./lib"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 10}
CARD

gate() { "$1" gate --allow-unsigned --card "$work/card.yml" --diff "$work/fix.diff" --repo "$2" >/dev/null 2>&1; }
fresh() {
  [ "${FRESH:-}" = 1 ] || return 0
  (cd "$work/ra" && sed -i "s/+ 39.*/+ 40 \/\/ fix $1/" lib/lib.go && git diff > "$work/fix.diff" && git checkout -q .)
}
echo "warming both (a cold Go build each)..."
gate "$a" "$work/ra" || { echo "bench: A did not pass"; "$a" gate --allow-unsigned --card "$work/card.yml" --diff "$work/fix.diff" --repo "$work/ra"; exit 1; }
gate "$b" "$work/rb" || { echo "bench: B did not pass"; "$b" gate --allow-unsigned --card "$work/card.yml" --diff "$work/fix.diff" --repo "$work/rb"; exit 1; }

ms() { local s=${EPOCHREALTIME//[.,]/}; "$@"; local e=${EPOCHREALTIME//[.,]/}; echo $(( e - s )); }
ta=(); tb=()
for i in $(seq 1 "$n"); do
  fresh "$i"
  ta+=("$(ms gate "$a" "$work/ra")"); tb+=("$(ms gate "$b" "$work/rb")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ma=$(median "${ta[@]}"); mb=$(median "${tb[@]}")
awk -v a="$ma" -v b="$mb" -v n="$n" -v fresh="${FRESH:+, a new diff each time}" 'BEGIN {
  printf "iterations: %d (interleaved), warm gate of a Go card, sandbox on%s\n", n, fresh

  printf "A: median %.0f ms\n", a/1000
  printf "B: median %.0f ms  (%.2fx A)\n", b/1000, b/a
}'

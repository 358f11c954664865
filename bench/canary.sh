#!/usr/bin/env bash
# bench/canary.sh: what a warm gate of a small Go card costs, canary
# included, against an older build (issue #13: at most 1.3x the build
# before the canary; issue #23: at most 1.05x its starting commit).
#
# One small Go module (a library package, internal and external tests,
# a second package for the invariant) and one card:
#   fail/pass: go test -count=1 -run '^TestAdd$' ./calc
#   invariant: go test -count=1 -skip '^TestAdd$' ./...
# gated with an honest one-line fix, every rule in place (sandbox on, as
# by default), by
#   before: failpass built from BEFORE (default: main)
#   after:  this tree's failpass (canary on)
#   off:    this tree's failpass on the same card with canary: "off"
# interleaved in one run after one warm-up gate each (the card's build
# cache is then warm for every variant). Prints the medians and the
# ratios after/before and off/before.
#
#   bench/canary.sh [ROUNDS]     ROUNDS=9 by default; BEFORE=<rev>
set -euo pipefail
rounds=${1:-9}
before=${BEFORE:-main}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/after" "$root/cmd/failpass"
mkdir "$work/src"
git -C "$root" archive "$before" | tar -x -C "$work/src"
(cd "$work/src" && go build -o "$work/before" ./cmd/failpass)

repo="$work/repo"
mkdir -p "$repo/calc" "$repo/other"
cd "$repo"
git init -q -b main
printf 'module example.org/bench\n\ngo 1.21\n' > go.mod
cat > calc/calc.go <<'GO'
package calc

import (
	"fmt"
	"strings"
)

// Add adds, wrongly.
func Add(a, b int) int { return a + b - 1 }

// Join formats a sum.
func Join(xs ...int) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, "+")
}
GO
cat > calc/calc_test.go <<'GO'
package calc_test

import (
	"testing"

	"example.org/bench/calc"
)

func TestAdd(t *testing.T) {
	if got := calc.Add(1, 2); got != 3 {
		t.Fatalf("Add(1, 2) = %d, want 3", got)
	}
}
GO
cat > calc/join_test.go <<'GO'
package calc

import "testing"

func TestJoin(t *testing.T) {
	if got := Join(1, 2); got != "1+2" {
		t.Errorf("Join(1, 2) = %q", got)
	}
}
GO
printf 'package other\n\nimport "strconv"\n\nfunc Itoa(n int) string { return strconv.Itoa(n) }\n' > other/other.go
printf 'package other\n\nimport "testing"\n\nfunc TestItoa(t *testing.T) {\n\tif Itoa(3) != "3" {\n\t\tt.Fatal("Itoa")\n\t}\n}\n' > other/other_test.go
git add -A
git -c user.name=b -c user.email=b@example.org commit -qm base
sed -i 's/ - 1 }/ }/' calc/calc.go
git diff > "$work/fix.diff"
git checkout -q .

card() {
  cat <<'CARD'
id: "BENCH-CANARY"
base_ref: "main"
fail: {cmd: ["go", "test", "-count=1", "-run", "^TestAdd$", "./calc"], expect_exit: 1}
pass: {cmd: ["go", "test", "-count=1", "-run", "^TestAdd$", "./calc"], expect_exit: 0}
invariant: {cmd: ["go", "test", "-count=1", "-skip", "^TestAdd$", "./..."], expect_exit: 0}
budget: {max_files: 1, max_changed_lines: 4, deny_globs: ["go.mod"]}
CARD
}
card > "$work/card.yml"
{ card; echo 'canary: "off"'; } > "$work/off.yml"

gate() { # BINARY CARD: milliseconds of one passing gate
  local t0 t1
  t0=$(date +%s%N)
  if ! "$1" gate --allow-unsigned --card "$2" --diff "$work/fix.diff" --repo "$repo" > "$work/out" 2>&1; then
    { echo "bench: $1 did not pass $2:"; cat "$work/out"; } >&2; exit 1
  fi
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
echo "warming up (the first gate of each builds the card's cache)..."
gate "$work/before" "$work/card.yml" >/dev/null
gate "$work/after" "$work/card.yml" >/dev/null
grep -q '^patch.canary: exit 1 (ok)' "$work/out" || { echo "bench: the canary did not run"; cat "$work/out"; exit 1; }
gate "$work/after" "$work/off.yml" >/dev/null

b=() a=() o=()
for i in $(seq 1 "$rounds"); do
  b+=("$(gate "$work/before" "$work/card.yml")")
  a+=("$(gate "$work/after" "$work/card.yml")")
  o+=("$(gate "$work/after" "$work/off.yml")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
mb=$(median "${b[@]}") ma=$(median "${a[@]}") mo=$(median "${o[@]}")
echo "rounds: $rounds (before = $before)"
echo "before:              median ${mb} ms  [${b[*]}]"
echo "after (canary on):   median ${ma} ms  [${a[*]}]"
echo "after (canary off):  median ${mo} ms  [${o[*]}]"
awk -v a="$ma" -v b="$mb" -v o="$mo" 'BEGIN {printf "after/before: %.2f\noff/before:   %.2f\n", a/b, o/b}'

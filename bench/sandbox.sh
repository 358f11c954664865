#!/usr/bin/env bash
# Benchmark: what the sandbox adds per card command. Two measurements, each
# against the same commands run uncontained in the same run, interleaved:
#
#  1. per command, through run.Run (internal/run BenchmarkSandboxOverhead): the
#     sandbox's own cost (prepare, namespaces, mounts, Landlock, cgroups,
#     finish) with the run package's test binary as the helper, both with
#     a helper re-exec per command and with every command through one
#     session helper (run.Session);
#  2. per gate, through the real binary: `failpass gate` on a card whose
#     four command runs are trivial, default vs --sandbox=off, the
#     difference divided by the four runs. The gate's commands share one
#     session helper; its start-up (a failpass re-exec) is included.
#
# The target is at most 25 ms added per command at the median.
#
# Usage: bench/sandbox.sh [ITERATIONS]   (default 31)
set -euo pipefail
n=${1:-31}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== 1. per command (run.Run, $n runs each, interleaved)"
(cd "$here/.." && go test -count=1 -run '^$' -bench '^BenchmarkSandboxOverhead$' -benchtime "${n}x" ./internal/run |
  grep -E '^Benchmark|SKIP|skip' || true)

echo "== 2. per gate (failpass gate, $n runs each, interleaved)"
go build -o "$work/failpass" "$here/../cmd/failpass"
echo "failpass built with CGO_ENABLED=$(go env CGO_ENABLED) (set CGO_ENABLED=0 for the static build)"
fp="$work/failpass"
if ! "$fp" gate -h 2>&1 | grep -q -- '-sandbox'; then
  echo "failpass gate has no --sandbox flag yet: skipped"
  exit 0
fi

repo="$work/repo"
mkdir -p "$repo"
cd "$repo"
git init -q -b main
printf 'line 1\n' > file.txt
git add -A
git -c user.name=b -c user.email=b@example.org commit -qm base
sed -i 's/line 1$/line one/' file.txt
git diff > "$work/fix.diff"
git checkout -q .
cat > "$work/card.yml" <<'CARD'
id: "BENCH-SANDBOX"
base_ref: "main"
fail: {cmd: ["false"], expect_exit: 1}
pass: {cmd: ["true"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 1, max_changed_lines: 10}
CARD

on() { "$fp" gate --allow-unsigned --card "$work/card.yml" --diff "$work/fix.diff" >/dev/null 2>&1; }
off() { "$fp" gate --allow-unsigned --sandbox=off --card "$work/card.yml" --diff "$work/fix.diff" >/dev/null 2>&1; }
on || { echo "bench: the gate failed with the sandbox on:"; "$fp" gate --allow-unsigned --card "$work/card.yml" --diff "$work/fix.diff"; exit 1; }
"$fp" gate --allow-unsigned --json --card "$work/card.yml" --diff "$work/fix.diff" 2>/dev/null | grep -o '"sandbox":{[^}]*}' || true

# Microseconds from bash's own clock (bash 5): a `date` process on each
# side would add its start-up (a few ms) to every sample.
if [ -n "${EPOCHREALTIME:-}" ]; then
  ms() { local s=${EPOCHREALTIME//[.,]/}; "$@"; local e=${EPOCHREALTIME//[.,]/}; echo $(( e - s )); }
else
  ms() { local s=$(date +%s%N); "$@"; local e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
fi
a=(); b=()
for i in $(seq 1 "$n"); do a+=("$(ms on)"); b+=("$(ms off)"); done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mon=$(median "${a[@]}"); moff=$(median "${b[@]}")
awk -v on="$mon" -v off="$moff" -v n="$n" 'BEGIN {
  printf "gate, sandbox on:  median %.1f ms\n", on/1000
  printf "gate, --sandbox=off: median %.1f ms\n", off/1000
  printf "added per command (4 runs per gate): %.1f ms  (target <= 25 ms)\n", (on-off)/4000
}'

#!/usr/bin/env bash
# Benchmark: the whole `failpass gate` run on a trivial card (false / true /
# true) and a one-file fix, against the floor a shell script reaches doing
# the same work by hand (git worktree add, git apply, the four command runs,
# git worktree remove), measured interleaved in the same run. Also: a diff
# refused by a static rule. Prints medians and ratios.
#
# Usage: bench/gate.sh [ITERATIONS]   (default 21)
#
# With FAILPASS_BEFORE=/path/to/an/older/failpass, the same gate and static
# refusal are also run with that binary, interleaved, and the ratios
# after/before printed: build it from another commit, for example
#   git worktree add /tmp/old main && (cd /tmp/old && go build -o /tmp/failpass-old ./cmd/failpass)
set -euo pipefail
n=${1:-21}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/failpass" "$here/../cmd/failpass"
echo "failpass built with CGO_ENABLED=$(go env CGO_ENABLED) (set CGO_ENABLED=0 for the static build)"
fp="$work/failpass"
sandbox_flag=()
if "$fp" gate -h 2>&1 | grep -q -- '-sandbox'; then sandbox_flag=(--sandbox=off); fi

repo="$work/repo"
mkdir -p "$repo"
cd "$repo"
git init -q -b main
for i in $(seq 1 200); do printf 'line %d\n' "$i" > "file$i.txt"; done
git add -A
git -c user.name=b -c user.email=b@example.org commit -qm base
sed -i 's/line 1$/line one/' file1.txt
git diff > "$work/fix.diff"
git checkout -q .
mkdir -p .github
printf 'x\n' > .github/evil.yml
git add -N .github/evil.yml
git diff > "$work/denied.diff"
git reset -q; rm -rf .github

cat > "$work/card.yml" <<'CARD'
id: "BENCH-1"
base_ref: "main"
fail: {cmd: ["false"], expect_exit: 1}
pass: {cmd: ["true"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 10, deny_globs: [".github/**"]}
CARD

baseline() {
  local wt="$work/wt"
  git worktree add -q --detach "$wt" main
  (cd "$wt" && git apply "$work/fix.diff")
  # env makes each a real process, as the gate runs them (not shell builtins)
  (cd "$wt" && { env false || :; } && env true && env true && env true)
  git worktree remove --force "$wt"
}
before=${FAILPASS_BEFORE:-}
gate_before() { "$before" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/fix.diff" >/dev/null 2>&1; }
static_before() { "$before" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/denied.diff" >/dev/null 2>&1 || true; }
gate() { "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/fix.diff" >/dev/null 2>&1; }
static() { "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/denied.diff" >/dev/null 2>&1 || true; }

gate || { echo "bench: the honest diff did not pass"; "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/fix.diff"; exit 1; }

# Microseconds from bash's own clock (bash 5): a `date` process on each
# side would add its start-up (a few ms) to every sample.
if [ -n "${EPOCHREALTIME:-}" ]; then
  ms() { local s=${EPOCHREALTIME//[.,]/}; "$@"; local e=${EPOCHREALTIME//[.,]/}; echo $(( e - s )); }
else
  ms() { local s=$(date +%s%N); "$@"; local e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
fi
if [ -n "$before" ]; then
  gate_before || { echo "bench: the honest diff did not pass with $before"; exit 1; }
fi
b=(); g=(); s=(); gb=(); sb=()
for i in $(seq 1 "$n"); do
  b+=("$(ms baseline)"); g+=("$(ms gate)"); s+=("$(ms static)")
  if [ -n "$before" ]; then gb+=("$(ms gate_before)"); sb+=("$(ms static_before)"); fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mb=$(median "${b[@]}"); mg=$(median "${g[@]}"); msx=$(median "${s[@]}")
awk -v b="$mb" -v g="$mg" -v s="$msx" -v n="$n" 'BEGIN {
  printf "iterations: %d (interleaved)\n", n
  printf "baseline (worktree add + apply + 4 runs + remove): median %.1f ms\n", b/1000
  printf "failpass gate, every rule:                          median %.1f ms  (%.2fx the baseline)\n", g/1000, g/b
  printf "failpass gate, refused by budget.deny (static):     median %.1f ms\n", s/1000
}'
if [ -n "$before" ]; then
  mgb=$(median "${gb[@]}"); msb=$(median "${sb[@]}")
  awk -v b="$mb" -v g="$mg" -v s="$msx" -v gb="$mgb" -v sb="$msb" -v bin="$before" 'BEGIN {
    printf "before (%s):\n", bin
    printf "  failpass gate, every rule:                        median %.1f ms  (%.2fx the baseline; after/before %.2f)\n", gb/1000, gb/b, g/gb
    printf "  failpass gate, refused by budget.deny (static):   median %.1f ms  (after/before %.2f)\n", sb/1000, s/sb
  }'
fi

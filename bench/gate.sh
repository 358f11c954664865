#!/usr/bin/env bash
# Benchmark: the whole `failpass gate` run on a trivial card (false / true /
# true) and a one-file fix, against the floor a shell script reaches doing
# the same work by hand (git worktree add, git apply, the four command runs,
# git worktree remove), measured interleaved in the same run. Also: a diff
# refused by a static rule, with the trivial card and with a go test card
# (budget.deny, and budget.harness, which reads the base's Go files to
# find a test-only helper). Prints medians and ratios.
#
# Usage: bench/gate.sh [ITERATIONS]   (default 21)
#
# With FAILPASS_BEFORE=/path/to/an/older/failpass, the same gate and static
# refusals are also run with that binary, interleaved, and the ratios
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
# A small Go module: a package, its test, and a helper only the test uses.
mkdir -p pkg internal/th
printf 'module example.org/bench\n\ngo 1.21\n' > go.mod
printf 'package pkg\n\nimport "strings"\n\nfunc F(s string) string { return strings.ToUpper(s) }\n' > pkg/pkg.go
printf 'package pkg\n\nimport (\n\t"testing"\n\n\t"example.org/bench/internal/th"\n)\n\nfunc TestF(t *testing.T) { th.Eq(t, F("a"), "A") }\n' > pkg/pkg_test.go
printf 'package th\n\nimport "testing"\n\nfunc Eq(t *testing.T, a, b string) {\n\tif a != b {\n\t\tt.Fatal(a, b)\n\t}\n}\n' > internal/th/th.go
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
sed -i 's/t.Fatal(a, b)/_ = t/' internal/th/th.go
git diff > "$work/helper.diff"
git checkout -q .

cat > "$work/card.yml" <<'CARD'
id: "BENCH-1"
base_ref: "main"
fail: {cmd: ["false"], expect_exit: 1}
pass: {cmd: ["true"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 10, deny_globs: [".github/**"]}
CARD
cat > "$work/gocard.yml" <<'CARD'
id: "BENCH-2"
base_ref: "main"
fail: {cmd: ["go", "test", "-run", "^TestF$", "./pkg"], expect_exit: 1}
pass: {cmd: ["go", "test", "-run", "^TestF$", "./pkg"], expect_exit: 0}
invariant: {cmd: ["go", "test", "./..."], expect_exit: 0}
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
gate() { "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/fix.diff" >/dev/null 2>&1; }
static() { "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/denied.diff" >/dev/null 2>&1 || true; }
go_deny() { "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/gocard.yml" --diff "$work/denied.diff" >/dev/null 2>&1 || true; }
go_harness() { "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/gocard.yml" --diff "$work/helper.diff" >/dev/null 2>&1 || true; }
before="${FAILPASS_BEFORE:-}"
before_gate() { "$before" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/fix.diff" >/dev/null 2>&1; }
before_static() { "$before" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/denied.diff" >/dev/null 2>&1 || true; }
before_go_deny() { "$before" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/gocard.yml" --diff "$work/denied.diff" >/dev/null 2>&1 || true; }
out=$("$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/gocard.yml" --diff "$work/helper.diff" 2>&1 || true)
echo "$out" | grep -q '^GATE: FAIL budget.harness' || { echo "bench: the helper diff was not refused by budget.harness"; echo "$out"; exit 1; }

gate || { echo "bench: the honest diff did not pass"; "$fp" gate --allow-unsigned "${sandbox_flag[@]}" --card "$work/card.yml" --diff "$work/fix.diff"; exit 1; }

# Microseconds from bash's own clock (bash 5): a `date` process on each
# side would add its start-up (a few ms) to every sample.
if [ -n "${EPOCHREALTIME:-}" ]; then
  ms() { local s=${EPOCHREALTIME//[.,]/}; "$@"; local e=${EPOCHREALTIME//[.,]/}; echo $(( e - s )); }
else
  ms() { local s=$(date +%s%N); "$@"; local e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
fi
if [ -n "$before" ]; then
  before_gate || { echo "bench: the honest diff did not pass with $before"; exit 1; }
fi
b=(); g=(); s=(); gd=(); gh=(); bg=(); bs=(); bgd=()
for i in $(seq 1 "$n"); do
  b+=("$(ms baseline)"); g+=("$(ms gate)"); s+=("$(ms static)")
  gd+=("$(ms go_deny)"); gh+=("$(ms go_harness)")
  if [ -n "$before" ]; then bg+=("$(ms before_gate)"); bs+=("$(ms before_static)"); bgd+=("$(ms before_go_deny)"); fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mb=$(median "${b[@]}"); mg=$(median "${g[@]}"); msx=$(median "${s[@]}")
mgd=$(median "${gd[@]}"); mgh=$(median "${gh[@]}")
awk -v b="$mb" -v g="$mg" -v s="$msx" -v n="$n" 'BEGIN {
  printf "iterations: %d (interleaved)\n", n
  printf "baseline (worktree add + apply + 4 runs + remove): median %.1f ms\n", b/1000
  printf "failpass gate, every rule:                          median %.1f ms  (%.2fx the baseline)\n", g/1000, g/b
  printf "failpass gate, refused by budget.deny (static):     median %.1f ms\n", s/1000
}'
awk -v d="$mgd" -v h="$mgh" 'BEGIN {
  printf "go test card, refused by budget.deny (static):      median %.1f ms\n", d/1000
  printf "go test card, refused by budget.harness (reads):    median %.1f ms\n", h/1000
}'
if [ -n "$before" ]; then
  mbg=$(median "${bg[@]}"); mbs=$(median "${bs[@]}"); mbgd=$(median "${bgd[@]}")
  awk -v b="$mb" -v g="$mg" -v bg="$mbg" -v s="$msx" -v bs="$mbs" -v d="$mgd" -v bd="$mbgd" 'BEGIN {
    printf "before (%s):\n", ENVIRON["FAILPASS_BEFORE"]
    printf "  trivial card, every rule:   median %.1f ms (%.2fx the baseline; now %.2fx)\n", bg/1000, bg/b, g/bg
    printf "  trivial card, budget.deny:  median %.1f ms (now %.2fx)\n", bs/1000, s/bs
    printf "  go test card, budget.deny:  median %.1f ms (now %.2fx)\n", bd/1000, d/bd
  }'
fi

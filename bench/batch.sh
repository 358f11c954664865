#!/bin/sh
# bench/batch.sh: what batch gating saves (issue #8).
#
# 32 candidates (honest and hostile, from the gate's own test cases)
# against one card whose commands take 200 ms or more, gated
#   serial: `failpass gate` on each candidate alone, one after another
#   batch:  one `failpass gate --manifest` (--jobs = cores), cold cache
#   warm:   the same batch again, every verdict cached
# interleaved in one run, every rule in place (sandbox on, as by default).
# Prints the medians and the ratios batch/serial (target <= 0.35) and
# warm/serial (target <= 0.05), checks that every candidate got the same
# verdict and rule both ways, then measures preparing a pooled worktree
# against a fresh worktree (internal/gate BenchmarkPoolPrepare) on a
# 20,000-file repository
# (target <= 0.2).
#
# With BEFORE=<rev>, failpass built from that revision is measured the
# same way in the same rounds, interleaved, and the ratios after/before
# are printed too.
#
#   sh bench/batch.sh            ROUNDS=3 by default; FILES=20000; SKIP_PREPARE=1 skips the last part; BEFORE=<rev>
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/failpass" "$root/cmd/failpass"
builds=failpass
if [ -n "${BEFORE:-}" ]; then
	mkdir "$work/src"
	git -C "$root" archive "$BEFORE" | tar -x -C "$work/src"
	(cd "$work/src" && go build -o "$work/before" ./cmd/failpass)
	builds="failpass before"
fi

repo="$work/repo"
mkdir -p "$repo/src" "$repo/tests" "$repo/ci" "$repo/docs"
cd "$repo"
git init -q -b main
printf 'answer=41\n' > src/lib.sh
printf 'helper=1\n' > src/util.sh
printf 'x: 1\n' > ci/build.yml
printf '# docs\n' > docs/index.md
printf '. src/lib.sh\nsleep 0.2\n[ "$answer" = 42 ]\n' > tests/check.sh
printf 'sleep 0.2\n[ -f src/lib.sh ]\n' > tests/invariant.sh
git add -A
git -c user.name=b -c user.email=b@example.org commit -qm base
cat > "$work/card.yml" <<'CARD'
id: "BENCH-1"
base_ref: "main"
fail: {cmd: ["sh", "tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "tests/invariant.sh"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 10, deny_globs: ["ci/**"]}
CARD

c="$work/cands"
mkdir -p "$c"
# add runs at the end of a pipeline (a subshell): it numbers by what is there.
add() { cat > "$c/$(printf %02d $(($(ls "$c" | wc -l) + 1)))-$1.diff"; }
gitdiff() { git diff; git checkout -q -- .; git clean -qfd; }
# Honest fixes, each a little different (16).
for k in $(seq 1 16); do printf 'answer=42 # fix %s\n' "$k" > src/lib.sh; gitdiff | add honest; done
# Wrong fixes (4): fail patch.pass.
for k in 40 43 44 0; do printf 'answer=%s\n' "$k" > src/lib.sh; gitdiff | add wrong; done
# Budget: too many files, too many lines, a denied path, the oracle itself.
printf 'answer=42\n' > src/lib.sh; printf 'helper=2\n' > src/util.sh; printf '# d\n' > docs/index.md; gitdiff | add files
printf 'answer=42\n%s\n' "$(seq 1 20 | sed 's/^/x=/')" > src/lib.sh; gitdiff | add lines
printf 'answer=42\n' > src/lib.sh; printf 'x: 2\n' > ci/build.yml; gitdiff | add deny
printf 'exit 0\n' > tests/check.sh; gitdiff | add oracle
# Malformed and hostile diffs.
printf 'Here is my fix: set answer to 42.\n' | add prose
: | add empty
printf -- '--- a/../outside\n+++ b/../outside\n@@ -1 +1 @@\n-a\n+b\n' | add traversal
printf -- '--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n' | add dotgit
printf -- '--- a/src/lib.sh\n+++ b/src/lib.sh\n@@ -1 +1 @@\n-answer=40\n+answer=42\n' | add stale
# Flaky: passes, then fails.
printf 'if [ -e .flip ]; then rm .flip; answer=0; else : > .flip; answer=42; fi\n' > src/lib.sh; gitdiff | add flaky
# Plants files for whoever comes next.
printf 'answer=42\n: > planted\nmkdir -p build; : > build/junk\n' > src/lib.sh; gitdiff | add planter
# Breaks the invariant.
git rm -q src/util.sh; printf 'answer=42\n' > src/lib.sh; git add -A; git diff --cached | add delete; git reset -q --hard
n=$(ls "$c" | wc -l)
[ "$n" = 32 ] || { echo "bench: $n candidates, want 32" >&2; exit 1; }
: > "$work/manifest.jsonl"
for f in "$c"/*.diff; do printf '{"card": "card.yml", "diff": "cands/%s"}\n' "$(basename "$f")" >> "$work/manifest.jsonl"; done
cd "$work"

now() { date +%s.%N; }
med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# round BUILD: one serial, cold batch and warm batch of BUILD, appended
# to BUILD's times; every candidate must get the same verdict and rule
# every way.
round() {
	b=$1 fp="$work/$1"
	t0=$(now)
	: > serial.ndjson
	for f in cands/*.diff; do
		"$fp" gate --allow-unsigned --json --card card.yml --diff "$f" --repo repo >> serial.ndjson 2>/dev/null || [ $? = 1 ]
	done
	t1=$(now)
	rm -rf repo/.git/failpass/cache/gate
	"$fp" gate --allow-unsigned --json --manifest manifest.jsonl --repo repo > batch.ndjson 2>/dev/null || [ $? = 1 ]
	t2=$(now)
	"$fp" gate --allow-unsigned --json --manifest manifest.jsonl --repo repo > warm.ndjson 2>/dev/null || [ $? = 1 ]
	t3=$(now)
	eval "serial_$b=\"\$serial_$b $(echo "$t1 - $t0" | bc)\""
	eval "batch_$b=\"\$batch_$b $(echo "$t2 - $t1" | bc)\""
	eval "warm_$b=\"\$warm_$b $(echo "$t3 - $t2" | bc)\""
	echo "round $r, $b: serial $(echo "$t1 - $t0" | bc)s batch $(echo "$t2 - $t1" | bc)s warm $(echo "$t3 - $t2" | bc)s"
	for out in serial batch warm; do
		grep '"candidate"' $out.ndjson | sed 's/^{"verdict":"\([a-z]*\)","rule":\([^,]*\),.*"candidate":"\([^"]*\)".*/\3 \1 \2/' | sort > $out.verdicts
	done
	cmp -s serial.verdicts batch.verdicts || { echo "bench: $b: batch verdicts differ from serial:"; diff serial.verdicts batch.verdicts; exit 1; }
	cmp -s serial.verdicts warm.verdicts || { echo "bench: $b: cached verdicts differ from serial:"; diff serial.verdicts warm.verdicts; exit 1; }
	if [ "$b" = failpass ]; then passes=$(grep -c '"verdict":"pass"' serial.ndjson || true); fi
}
for b in $builds; do eval "serial_$b= batch_$b= warm_$b="; done
for r in $(seq 1 "$rounds"); do
	for b in $builds; do round "$b"; done
done
for b in $builds; do
	eval "ms=\$(med \$serial_$b); mb=\$(med \$batch_$b); mw=\$(med \$warm_$b)"
	eval "ms_$b=$ms mb_$b=$mb mw_$b=$mw"
	echo "== $b"
	echo "median serial ${ms}s, batch ${mb}s, warm ${mw}s"
	echo "ratio batch/serial: $(echo "scale=3; $mb / $ms" | bc) (target <= 0.35)"
	echo "ratio warm/serial:  $(echo "scale=3; $mw / $ms" | bc) (target <= 0.05)"
done
echo "candidates: 32 ($passes pass with this tree's build), cores: $(nproc), rounds: $rounds"
if [ -n "${BEFORE:-}" ]; then
	echo "after/before ($BEFORE): serial $(echo "scale=3; $ms_failpass / $ms_before" | bc), batch $(echo "scale=3; $mb_failpass / $mb_before" | bc), warm $(echo "scale=3; $mw_failpass / $mw_before" | bc)"
fi

if [ "${SKIP_PREPARE:-}" = "" ]; then
	cd "$root"
	go test ./internal/gate -run '^$' -bench '^BenchmarkPoolPrepare$' -benchtime 3x -count 1 -args -pool-files "${FILES:-20000}" 2>&1 |
		grep '^BenchmarkPoolPrepare' || { echo "bench: prepare measurement failed"; exit 1; }
fi

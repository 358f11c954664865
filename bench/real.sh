#!/usr/bin/env bash
# bench/real.sh: a warm gate of a real fix against the bare floor, for
# one or two failpass binaries, interleaved in one run.
#
# The card is the one `card from-commit REV` writes (with the binary
# given last), gated with its reference fix. The bare floor is what the
# same work costs by hand with the user's warm caches: on a checkout of
# the base, the fail and invariant commands, `git apply`, then the pass
# and invariant commands, each as its argv with the card's env. Each must
# exit as the card expects, or the floor measured nothing and the bench
# stops.
#
# That floor's GOCACHE holds the patched packages from its warm-up, so a
# Go floor compiles nothing, and a warm gate of the same fix finds them
# built too (the prebuild its first gate kept, and the base results it
# cached). No gate of a new candidate can. So a second floor, "new",
# costs what a new candidate costs by hand: a comment of its own
# appended to each Go file the fix changes, after `git apply`, so go
# compiles the patched packages again (go keys a build by its files'
# content), as for a fix it has not seen; and each round also gates such
# a new candidate, the fix with a fresh comment, against that floor. A
# Python floor is new already: `git clean -fdx` takes the bytecode each
# round.
#
# Each binary gates in a clone of its own, warmed by one gate first;
# then each round runs the floors and every binary's gates in turn.
# Prints the medians and the ratios.
#
#   bench/real.sh REPO REV [ROUNDS] [FAILPASS...]
#
# REPO is a git repository (a folder or URL), REV a fix commit (a code
# change and the test that shows it), ROUNDS 5 by default; FAILPASS
# defaults to a build of this checkout. For before and after, give two:
#   git worktree add /tmp/old START && (cd /tmp/old && go build -o /tmp/fp-old ./cmd/failpass)
#   bench/real.sh /work/.mirror/spf13+pflag/repo 298bcdf 5 /tmp/fp-old /tmp/fp-new
set -euo pipefail
src=${1:?usage: bench/real.sh REPO REV [ROUNDS] [FAILPASS...]}
rev=${2:?usage: bench/real.sh REPO REV [ROUNDS] [FAILPASS...]}
rounds=${3:-5}
shift $(( $# < 3 ? $# : 3 ))
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bins=("$@")
if [ ${#bins[@]} = 0 ]; then
  go build -o "$work/failpass" "$here/../cmd/failpass"
  bins=("$work/failpass")
fi
last=${bins[${#bins[@]}-1]}

git clone -q "$src" "$work/card-repo"
git -C "$work/card-repo" checkout -q "$rev"
echo "card from-commit $rev ..."
"$last" card from-commit "$rev" --repo "$work/card-repo" -o "$work/card.yml" --quiet >/dev/null
diff=$work/card.reference.diff
# from-commit keeps the base it made (the fix's parent with the fix's
# tests) under refs/failpass/bases/: every clone fetches it from here.
baseref=$(sed -n 's/^base_ref: "\(.*\)"$/\1/p' "$work/card.yml")
base=$(git -C "$work/card-repo" rev-parse "$baseref")
clone() {  # DIR: a clone of REPO that holds the card's base
  git clone -q "$src" "$1"
  git -C "$1" fetch -q "$work/card-repo" "+$baseref:$baseref"
}

# The card's commands, as argv lines (NUL-separated fields) for the floor,
# with the card's environment (a src layout's PYTHONPATH) through env(1).
"$last" card canonical --card "$work/card.yml" > "$work/card.json"
for c in fail pass invariant; do
  python3 - "$work/card.json" "$c" > "$work/$c.argv" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))[sys.argv[2]]
env = ["%s=%s" % kv for kv in sorted(c.get("env", {}).items())]
argv = (["env"] + env if env else []) + c["cmd"]
sys.stdout.write(c.get("workdir", ".") + "\0" + str(c.get("expect_exit", 0)) + "\0" + "\0".join(argv))
EOF
done
runargv() {  # FILE: run the argv in FILE in its workdir of the floor's tree
  local -a f
  mapfile -d '' f < "$1"
  local rc=0
  (cd "$work/floor/${f[0]}" && "${f[@]:2}" >/dev/null 2>&1) || rc=$?
  if [ "$rc" != "${f[1]}" ]; then
    echo "bench: the floor's $(basename "$1" .argv) command exited $rc, not ${f[1]}: ${f[*]:2}" >&2
    exit 1
  fi
}
clone "$work/floor"
git -C "$work/floor" checkout -q "$base"
# The Go files the fix changes: where floor new writes its comment.
mapfile -t gofiles < <(git -C "$work/card-repo" apply --numstat "$diff" | awk '$3 ~ /\.go$/ {print $3}')
floor() {  # [new]: the floor, or with "new" the floor of a new candidate
  runargv "$work/fail.argv"; runargv "$work/invariant.argv"
  git -C "$work/floor" apply "$diff"
  if [ "${1:-}" = new ]; then
    for f in "${gofiles[@]}"; do printf '\n// bench/real.sh: new candidate %s\n' "$EPOCHREALTIME" >> "$work/floor/$f"; done
  fi
  runargv "$work/pass.argv"; runargv "$work/invariant.argv"
  git -C "$work/floor" checkout -q -- . && git -C "$work/floor" clean -q -fdx
}

# A new candidate for the gates, as the new floor's: the fix with a
# comment of its own appended to each Go file it changes, as a diff.
clone "$work/nd"
git -C "$work/nd" checkout -q "$base"
newdiff() {  # FILE
  git -C "$work/nd" apply "$diff"
  for f in "${gofiles[@]}"; do printf '\n// bench/real.sh: new candidate %s\n' "$EPOCHREALTIME" >> "$work/nd/$f"; done
  git -C "$work/nd" add -A && git -C "$work/nd" diff --cached --binary > "$1"
  git -C "$work/nd" reset -q --hard && git -C "$work/nd" clean -q -fdx
}

for i in "${!bins[@]}"; do
  clone "$work/r$i"
done
gate() {  # I [DIFF]: gate the reference fix (or DIFF) with binary I
  "${bins[$1]}" gate --allow-unsigned --card "$work/card.yml" --diff "${2:-$diff}" --repo "$work/r$1" > "$work/out.$1" 2>&1
}
echo "warming: the floor and each binary once ..."
floor
for i in "${!bins[@]}"; do
  gate "$i" || { echo "bench: ${bins[$i]} did not pass:"; cat "$work/out.$i"; exit 1; }
done

ms() { local s=${EPOCHREALTIME//[.,]/}; "$@"; local e=${EPOCHREALTIME//[.,]/}; echo $(( (e - s) / 1000 )); }
declare -A t
for r in $(seq 1 "$rounds"); do
  t[floor]+="$(ms floor) "
  t[new]+="$(ms floor new) "
  newdiff "$work/new.diff"
  for i in "${!bins[@]}"; do
    t[$i]+="$(ms gate "$i") "
    grep -q '^GATE: PASS' "$work/out.$i" || { echo "bench: ${bins[$i]} did not pass:"; cat "$work/out.$i"; exit 1; }
    t[new$i]+="$(ms gate "$i" "$work/new.diff") "
    grep -q '^GATE: PASS' "$work/out.$i" || { echo "bench: ${bins[$i]} did not pass the new candidate:"; cat "$work/out.$i"; exit 1; }
  done
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mf=$(median "${t[floor]}")
mn=$(median "${t[new]}")
echo "$(basename "$src" .git) ${rev}: $rounds rounds, medians"
echo "  floor: $mf ms  (${t[floor]% })"
echo "  floor, new candidate: $mn ms  (${t[new]% })"
for i in "${!bins[@]}"; do
  m=$(median "${t[$i]}")
  awk -v m="$m" -v f="$mf" -v b="${bins[$i]}" -v all="${t[$i]% }" 'BEGIN { printf "  %s: %d ms, %.2fx the floor  (%s)\n", b, m, m/f, all }'
  m=$(median "${t[new$i]}")
  awk -v m="$m" -v fn="$mn" -v b="${bins[$i]}" -v all="${t[new$i]% }" 'BEGIN { printf "  %s, new candidate: %d ms, %.2fx the new candidate'"'"'s floor  (%s)\n", b, m, m/fn, all }'
done

#!/usr/bin/env bash
# bench/first_gate.sh: what the first gate after signing costs (issue #14:
# at most 1.3x a warm gate), on a real fix commit.
#
# Each round clones REPO afresh (cold caches), builds a card from the fix
# commit REV (card from-commit), signs it with its reference fix (card sign
# --reference, whose base runs fill the card's build cache), signs it once
# more (--force: a new signoff, so no result cache of the first gate
# applies), then times
#   first: the gate of the reference fix, the first after that signing
#   warm:  the same gate again with --no-cache (verdict and base results
#          run afresh; build caches are never skipped)
# and prints the medians and first/warm. With REV2, another fix commit of
# the same repository, each round then turns it into a second card in the
# same clone (card from-commit) and times
#   sign2: `card sign --reference` of that second card (issue #25: at
#          most 3x its warm gate)
#   warm2: its gate with --no-cache, after one gate
#
#   bench/first_gate.sh REPO REV [ROUNDS [REV2]]     ROUNDS=5 by default
#   e.g. bench/first_gate.sh https://github.com/google/uuid a2b2b32
set -euo pipefail
repo=${1:?usage: bench/first_gate.sh REPO REV [ROUNDS]}
rev=${2:?usage: bench/first_gate.sh REPO REV [ROUNDS]}
rounds=${3:-5}
rev2=${4:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fp="$work/failpass"
go build -o "$fp" "$root/cmd/failpass"
ssh-keygen -q -t ed25519 -N '' -C bench -f "$work/key"
echo "bench@example.org $(cut -d' ' -f1,2 "$work/key.pub")" > "$work/allowed"
ms() { local s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; local e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
first=(); warm=(); sign2=(); warm2=()
for i in $(seq 1 "$rounds"); do
  d="$work/round$i"
  git clone -q "$repo" "$d/r"
  cd "$d/r"
  "$fp" card from-commit "$rev" -o "$d/card.yml" >/dev/null
  sign() { "$fp" card sign "$@" --card "$d/card.yml" --reference "$d/card.reference.diff" --key "$work/key" --principal bench@example.org >/dev/null; }
  sign
  sign --force
  g() { "$fp" gate --card "$d/card.yml" --allowed-signers "$work/allowed" --diff "$d/card.reference.diff" "$@"; }
  first+=("$(ms g)")
  warm+=("$(ms g --no-cache)")
  g | grep -q '^GATE: PASS' || { echo "bench: the reference fix did not pass"; exit 1; }
  if [ -n "$rev2" ]; then
    "$fp" card from-commit "$rev2" -o "$d/card2.yml" >/dev/null
    sign2+=("$(ms "$fp" card sign --card "$d/card2.yml" --reference "$d/card2.reference.diff" --key "$work/key" --principal bench@example.org)")
    g2() { "$fp" gate --card "$d/card2.yml" --allowed-signers "$work/allowed" --diff "$d/card2.reference.diff" "$@"; }
    g2 | grep -q '^GATE: PASS' || { echo "bench: the second card's reference fix did not pass"; exit 1; }
    warm2+=("$(ms g2 --no-cache)")
  fi
  cd "$work"; rm -rf "$d"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mf=$(median "${first[@]}"); mw=$(median "${warm[@]}")
echo "first gate after signing: median $mf ms [${first[*]}]"
echo "warm gate (--no-cache):   median $mw ms [${warm[*]}]"
awk -v f="$mf" -v w="$mw" 'BEGIN { printf "first/warm: %.2f (target <= 1.3)\n", f/w }'
if [ -n "$rev2" ]; then
  ms2=$(median "${sign2[@]}"); mw2=$(median "${warm2[@]}")
  echo "second card's sign:       median $ms2 ms [${sign2[*]}]"
  echo "its warm gate:            median $mw2 ms [${warm2[*]}]"
  awk -v s="$ms2" -v w="$mw2" 'BEGIN { printf "sign2/warm2: %.2f (target <= 3)\n", s/w }'
fi

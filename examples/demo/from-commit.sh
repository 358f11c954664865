#!/bin/sh
# From an upstream fix to a signed card in two commands, on the demo
# project: make a history whose last commit is the fix of issue 4419 (the
# honest diff plus the test that proves the bug), build a card and the
# reference fix from that commit, sign it with a throwaway key after the
# reference passes, and gate the reference and a hostile diff against it.
# Needs Go, git and ssh-keygen. Usage: examples/demo/from-commit.sh
#
# Everything lives in examples/demo/.work (ignored by git); remove it to
# start over.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${FAILPASS_DEMO_DIR:-$here/.work}
mkdir -p "$work"
go build -o "$work/failpass" "$here/../../cmd/failpass"
fp="$work/failpass"

repo="$work/libparse-history"
if [ ! -d "$repo/.git" ]; then
  rm -rf "$repo"
  mkdir "$repo"
  cp -R "$here/project/." "$repo/"
  (
    cd "$repo"
    export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.org GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.org
    export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
    git init -q -b main
    # Before the fix, the test that proves the bug did not exist.
    sed '/^func TestEmptyHeader/,$d' "$here/project/header_test.go" >header_test.go
    git add -A
    git commit -qm "libparse at issue 4419"
    cp "$here/project/header_test.go" header_test.go
    git apply "$here/honest.diff"
    git add -A
    git commit -qm "ParseHeader: an empty line is ErrEmpty, not a panic (fixes 4419)"
  )
fi
if [ ! -f "$work/demo-key" ]; then
  ssh-keygen -q -t ed25519 -N '' -C demo -f "$work/demo-key"
fi
echo "demo@example.org $(cut -d' ' -f1,2 "$work/demo-key.pub")" >"$work/allowed_signers"
cd "$repo"

echo "== failpass card from-commit HEAD -o fix-4419.yml"
"$fp" card from-commit HEAD -o "$work/fix-4419.yml" --force
echo
echo "== failpass card sign --card fix-4419.yml --reference fix-4419.reference.diff"
"$fp" card sign --card "$work/fix-4419.yml" --reference "$work/fix-4419.reference.diff" \
  --key "$work/demo-key" --principal demo@example.org
for d in "$work/fix-4419.reference.diff" "$here/hostile-gut-test.diff"; do
  echo
  echo "== failpass gate --card fix-4419.yml --diff $(basename "$d")"
  code=0
  "$fp" gate --card "$work/fix-4419.yml" --allowed-signers "$work/allowed_signers" --diff "$d" || code=$?
  echo "(exit $code)"
done

#!/bin/sh
# The loop demo: a committed candidate fix for issue 4419 that still holds
# a FIXME marker; the bundled scripted reviewer (examples/adapters/
# reviewer.sh) flags it, the bundled scripted fixer removes it, the card's
# pass and invariant commands validate the attempt, and the loop converges
# with one new commit. No model needed; only Go and git.
# Usage: examples/demo/loop.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
adapters=$(cd "$here/../adapters" && pwd)
work=${FAILPASS_DEMO_DIR:-$here/.work}
mkdir -p "$work"

go build -o "$work/failpass" "$here/../../cmd/failpass"
repo="$work/loop-libparse"
if [ ! -d "$repo/.git" ]; then
  rm -rf "$repo"
  mkdir "$repo"
  cp -R "$here/project/." "$repo/"
  (
    cd "$repo"
    git init -q -b main
    git add -A
    git -c user.name=demo -c user.email=demo@example.org commit -qm "libparse at issue 4419"
  )
fi
cd "$repo"
# A fresh candidate each run: the honest fix plus a FIXME the review finds.
git checkout -q main
git branch -q -D fix-4419 2>/dev/null || true
git checkout -q -b fix-4419
git apply "$here/honest.diff"
sed -i.bak 's|^\tif line == "" {|\t// FIXME: also reject a line of only spaces\n\tif line == "" {|' header.go
rm -f header.go.bak
git -c user.name=demo -c user.email=demo@example.org commit -qam "fix ISSUE-4419: an empty header line no longer panics"

id="demo-$(date +%Y%m%d%H%M%S)"
code=0
"$work/failpass" loop start --branch fix-4419 --card "$here/issue-contract.yml" --allow-unsigned \
  --reviewer "cmd:$adapters/reviewer.sh" --fixer "cmd:$adapters/fixer.sh" --id "$id" || code=$?
echo "(exit $code)"
echo
git log --oneline main..fix-4419

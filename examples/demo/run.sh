#!/bin/sh
# The demo: build the example project as a git repository, then gate one
# honest diff and three hostile ones against its card. Needs only Go and
# git. Usage: examples/demo/run.sh
#
# The repository is kept in examples/demo/.work (ignored by git), so the
# card's sandboxed build cache, which lives in that repository's git
# directory, is warm from the second run on. Remove the folder to start
# over.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${FAILPASS_DEMO_DIR:-$here/.work}
mkdir -p "$work"

go build -o "$work/failpass" "$here/../../cmd/failpass"
if [ ! -d "$work/libparse/.git" ]; then
  rm -rf "$work/libparse"
  mkdir "$work/libparse"
  cp -R "$here/project/." "$work/libparse/"
  (
    cd "$work/libparse"
    git init -q -b main
    git add -A
    git -c user.name=demo -c user.email=demo@example.org commit -qm "libparse at issue 4419"
  )
fi
cd "$work/libparse"

for d in honest hostile-workflow hostile-gut-test hostile-prose; do
  echo "== failpass gate --card issue-contract.yml --diff $d.diff"
  code=0
  "$work/failpass" gate --allow-unsigned --card "$here/issue-contract.yml" --diff "$here/$d.diff" || code=$?
  echo "(exit $code)"
  echo
done

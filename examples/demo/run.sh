#!/bin/sh
# The demo: build the example project as a git repository in a temporary
# folder, then gate one honest diff and three hostile ones against its card.
# Needs only Go and git. Usage: examples/demo/run.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

go build -o "$work/failpass" "$here/../../cmd/failpass"
mkdir "$work/libparse"
cp -R "$here/project/." "$work/libparse/"
cd "$work/libparse"
git init -q -b main
git add -A
git -c user.name=demo -c user.email=demo@example.org commit -qm "libparse at issue 4419"

for d in honest hostile-workflow hostile-gut-test hostile-prose; do
  echo "== failpass gate --card issue-contract.yml --diff $d.diff"
  code=0
  "$work/failpass" gate --allow-unsigned --card "$here/issue-contract.yml" --diff "$here/$d.diff" || code=$?
  echo "(exit $code)"
  echo
done

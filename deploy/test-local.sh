#!/bin/sh
# Test the shipped shard runners locally, as their engines would run them:
# every shard of a Kubernetes Indexed Job (index in JOB_COMPLETION_INDEX)
# and of the CI matrix (index in FAILPASS_SHARD_INDEX), each through
# deploy/shard.sh, then `failpass results merge`; the merged summary and
# exit code must equal one unsharded run's. No cluster or CI is needed.
#
#   sh deploy/test-local.sh        (from the repository root)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/failpass" "$root/cmd/failpass"
export FAILPASS="$work/failpass"

# The shard counts the shipped files declare, and that they agree.
k8s_n=$(sed -n 's/^  completions: \([0-9]*\).*/\1/p' "$root/deploy/k8s-indexed-job.yaml")
k8s_env=$(grep -A1 'name: FAILPASS_SHARDS' "$root/deploy/k8s-indexed-job.yaml" | sed -n 's/.*value: "\([0-9]*\)".*/\1/p')
ci_n=$(sed -n 's/^  FAILPASS_SHARDS: "\([0-9]*\)".*/\1/p' "$root/deploy/github-actions-batch.yml")
ci_matrix=$(sed -n 's/^ *shard: \[\(.*\)\]/\1/p' "$root/deploy/github-actions-batch.yml" | tr -d ' ' | tr ',' ' ')
[ "$k8s_n" = "$k8s_env" ] || { echo "k8s: completions $k8s_n != FAILPASS_SHARDS $k8s_env"; exit 1; }
[ "$ci_n" = "$(echo $ci_matrix | wc -w)" ] || { echo "ci: FAILPASS_SHARDS $ci_n != matrix size"; exit 1; }
# The pod settings the sandbox needs (docs/sandbox.md), and no privileged pod.
for want in 'hostUsers: false' 'procMount: Unmasked' 'appArmorProfile: {type: Unconfined}' \
	'add: \["SYS_ADMIN", "NET_ADMIN", "SETPCAP"\]' 'privileged: false'; do
	grep -q "^ *$want" "$root/deploy/k8s-indexed-job.yaml" || { echo "k8s: the pod spec lacks $want"; exit 1; }
done
if grep -q 'privileged: true\|hostPID: true\|hostNetwork: true' "$root/deploy/k8s-indexed-job.yaml"; then
	echo "k8s: the pod must not be privileged or share the node's namespaces"; exit 1
fi

# A repository, a card, and a mix of candidates.
repo="$work/repo"
mkdir -p "$repo/src" "$repo/tests" "$repo/candidates"
cd "$repo"
git init -q -b main
echo 'answer=41' > src/lib.sh
printf '. src/lib.sh\n[ "$answer" = 42 ]\n' > tests/check.sh
git add -A
git -c user.name=t -c user.email=t@example.org commit -qm base
cat > candidates/card.yml <<'CARD'
id: "LOCAL-1"
base_ref: "main"
fail: {cmd: ["sh", "tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["true"], expect_exit: 0}
budget: {max_files: 1, max_changed_lines: 10}
CARD
: > candidates/manifest.jsonl
for v in 42 43 42' #a' 44 42' #b' 40 42' #c'; do
	echo "answer=$v" > src/lib.sh
	i=$(wc -l < candidates/manifest.jsonl)
	git diff > "candidates/$i.diff"
	echo "{\"card\": \"card.yml\", \"diff\": \"$i.diff\"}" >> candidates/manifest.jsonl
	git checkout -q -- src/lib.sh
done
export FAILPASS_MANIFEST="$repo/candidates/manifest.jsonl" FAILPASS_REPO="$repo"

set +e
"$FAILPASS" gate --manifest "$FAILPASS_MANIFEST" --repo "$repo" --json --no-cache --allow-unsigned > "$work/all.ndjson" 2>/dev/null
want_rc=$?
set -e
want=$(tail -n 1 "$work/all.ndjson" | sed 's/"cached":[0-9]*//')

check() { # engine, results folder
	set +e
	"$FAILPASS" results merge "$2"/shard-*.ndjson --json > "$work/merged.ndjson"
	rc=$?
	set -e
	got=$(tail -n 1 "$work/merged.ndjson" | sed 's/"cached":[0-9]*//')
	if [ "$got" != "$want" ] || [ "$rc" != "$want_rc" ]; then
		echo "FAIL $1: merged $got (exit $rc), unsharded $want (exit $want_rc)"
		exit 1
	fi
	echo "ok   $1: $(ls "$2"/shard-*.ndjson | wc -l) shards merged: $got, exit $rc"
}

# Kubernetes: one pod per completion index, the index in the environment.
k=0
while [ "$k" -lt "$k8s_n" ]; do
	env -u FAILPASS_SHARD_INDEX JOB_COMPLETION_INDEX=$k FAILPASS_SHARDS=$k8s_n FAILPASS_RESULTS="$work/k8s" \
		sh "$root/deploy/shard.sh" --no-cache --allow-unsigned
	k=$((k + 1))
done
check "kubernetes indexed job" "$work/k8s"

# CI matrix: one job per matrix entry.
for k in $ci_matrix; do
	env -u JOB_COMPLETION_INDEX FAILPASS_SHARD_INDEX=$k FAILPASS_SHARDS=$ci_n FAILPASS_RESULTS="$work/ci" \
		sh "$root/deploy/shard.sh" --no-cache --allow-unsigned
done
check "ci matrix" "$work/ci"

# Trouble in a shard fails that shard (exit 2), never passes silently.
set +e
env JOB_COMPLETION_INDEX=0 FAILPASS_SHARDS=2 FAILPASS_MANIFEST="$work/missing.jsonl" FAILPASS_RESULTS="$work/bad" \
	sh "$root/deploy/shard.sh" --allow-unsigned 2>/dev/null
rc=$?
set -e
[ "$rc" = 2 ] || { echo "FAIL: a shard in trouble exited $rc, want 2"; exit 1; }
echo "ok   a shard in trouble exits 2"

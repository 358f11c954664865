#!/bin/sh
# A deterministic reviewer for failpass's review-fix loop: no model, same
# answer for the same tree. It runs in a read-only snapshot of the head,
# reads a review packet (schema_version "1.0") on stdin and writes a review
# result (schema_version "1.4") on stdout.
#
# Rule: every line of a file in the snapshot that holds the marker FIXME
# is a blocking correctness finding; no marker means clean. A failed
# validation in the packet is a blocking reason, never clean.
#
#   failpass loop start --reviewer cmd:examples/adapters/reviewer.sh ...
set -eu
LC_ALL=C
export LC_ALL
packet=$(cat)
field() {
	printf '%s' "$packet" | grep -o "\"$1\": *\"[0-9a-f]*\"" | head -n 1 | sed 's/.*"\([0-9a-f]*\)"$/\1/'
}
head=$(field head_sha)
base=$(field comparison_base_sha)
if [ -z "$head" ] || [ -z "$base" ]; then
	echo "reviewer.sh: the packet names no head_sha or comparison_base_sha" >&2
	exit 2
fi

# JSON string escaping for paths and lines taken from the tree.
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/	/\\t/g' | tr -d '\000-\010\013-\037'; }

findings=""
n=0
hits=$(grep -rnI --exclude-dir=.git 'FIXME' . 2>/dev/null | sed 's|^\./||' | sort || true)
if [ -n "$hits" ]; then
	while IFS= read -r hit; do
		file=${hit%%:*}
		rest=${hit#*:}
		line=${rest%%:*}
		n=$((n + 1))
		loc=$(esc "$file:$line")
		f=$(printf '{"id":"fixme-%d","lens":"correctness","severity":"blocking","confidence":"high","rule":"no-fixme-markers","evidence":[{"location":"%s","detail":"the line holds a FIXME marker"}],"concern":"unfinished work is marked FIXME","impact":"the change ships a known gap","proposed_change":"resolve the marked work and remove the FIXME marker","expected_effect":"no FIXME marker remains","location":"%s"}' "$n" "$loc" "$loc")
		findings="${findings:+$findings,}$f"
	done <<HITS
$hits
HITS
fi

reasons=""
if printf '%s' "$packet" | grep -q '"status": *"failed"'; then
	reasons='"a validation command failed at this head"'
fi
verdict=clean
if [ -n "$findings" ] || [ -n "$reasons" ]; then
	verdict=changes_required
fi
lenses=""
for l in correctness solution_simplicity code_simplicity; do
	lv=clean
	[ "$l" = correctness ] && lv=$verdict
	e=$(printf '{"lens":"%s","head_sha":"%s","comparison_base_sha":"%s","verdict":"%s","freshly_executed":true}' "$l" "$head" "$base" "$lv")
	lenses="${lenses:+$lenses,}$e"
done
printf '{"schema_version":"1.4","lens":"aggregate","candidate":{"head_sha":"%s","comparison_base_sha":"%s"},"verdict":"%s","findings":[%s],"blocking_reasons":[%s],"lens_executions":[%s]}\n' \
	"$head" "$base" "$verdict" "$findings" "$reasons" "$lenses"

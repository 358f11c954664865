#!/bin/sh
# A deterministic fixer for failpass's review-fix loop: no model. It runs in
# the attempt's worktree, reads a fix request (schema_version "1.0") on
# stdin, and edits files in place (it never commits).
#
# Rule: for every finding whose evidence location is PATH:LINE, remove the
# word FIXME (and a colon right after it) from that line. Exit 0 when a
# file changed, 1 when there was nothing it could fix.
#
#   failpass loop start --fixer cmd:examples/adapters/fixer.sh ...
set -eu
LC_ALL=C
export LC_ALL
request=$(cat)
changed=1
locs=$(printf '%s' "$request" | grep -o '"location": *"[^"]*:[0-9][0-9]*"' | sed 's/^"location": *"//; s/"$//' | sort -u || true)
[ -n "$locs" ] || exit 1
while IFS= read -r loc; do
	file=${loc%:*}
	line=${loc##*:}
	case "$file" in
	/* | ../* | */../* | *\\*) echo "fixer.sh: skipping $file: outside the worktree" >&2; continue ;;
	esac
	[ -f "$file" ] && [ ! -L "$file" ] || continue
	if sed -n "${line}p" "$file" | grep -q 'FIXME'; then
		tmp="$file.fixer.$$"
		sed "${line}s/ *FIXME:\{0,1\}//g" "$file" >"$tmp" && cat "$tmp" >"$file" && rm -f "$tmp"
		changed=0
	fi
done <<LOCS
$locs
LOCS
exit $changed

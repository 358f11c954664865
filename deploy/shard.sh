#!/bin/sh
# Run one shard of a failpass batch, as a CI matrix job or a Kubernetes
# Indexed Job pod runs it. The engine gives the index; nothing here
# schedules anything.
#
#   index   JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or FAILPASS_SHARD_INDEX (CI matrix)
#   count   FAILPASS_SHARDS      (the Job's completions, the matrix's size)
#   input   FAILPASS_MANIFEST    (JSON lines of {"card": ..., "diff": ...})
#   output  FAILPASS_RESULTS     (folder; default ./results): shard-<index>.ndjson and .xml
#   binary  FAILPASS             (default: failpass on PATH)
#   repo    FAILPASS_REPO        (default: .)
# Extra arguments go to `failpass gate` (--allowed-signers FILE, --repeat N, ...).
#
# Exit: 0 when the shard ran, whatever its verdicts (`failpass results merge`
# of every shard's output gives the run's exit code); 2 on trouble, so the
# engine retries or fails the shard.
set -u
index=${JOB_COMPLETION_INDEX:-${FAILPASS_SHARD_INDEX:-}}
if [ -z "$index" ]; then
	echo "shard.sh: no shard index: set JOB_COMPLETION_INDEX or FAILPASS_SHARD_INDEX" >&2
	exit 2
fi
if [ -z "${FAILPASS_SHARDS:-}" ] || [ -z "${FAILPASS_MANIFEST:-}" ]; then
	echo "shard.sh: set FAILPASS_SHARDS (number of shards) and FAILPASS_MANIFEST" >&2
	exit 2
fi
out=${FAILPASS_RESULTS:-results}
mkdir -p "$out" || exit 2
"${FAILPASS:-failpass}" gate --manifest "$FAILPASS_MANIFEST" --repo "${FAILPASS_REPO:-.}" \
	--shard "$index/$FAILPASS_SHARDS" --json --junit "$out/shard-$index.xml" "$@" \
	>"$out/shard-$index.ndjson.tmp"
rc=$?
if [ "$rc" -gt 1 ]; then
	# Keep what the shard printed (its {"verdict":"error"} line) for the log.
	cat "$out/shard-$index.ndjson.tmp" >&2
	rm -f "$out/shard-$index.ndjson.tmp"
	exit 2
fi
mv "$out/shard-$index.ndjson.tmp" "$out/shard-$index.ndjson"

#!/bin/sh
# The steps of failpass's GitHub Action (action.yml at the repository
# root). Each step of the action runs this script with the name of its
# phase; action.yml holds no logic of its own, so the offline test
# (cmd/failpass/testdata/action) runs exactly what a runner runs.
#
#   gate.sh go       is Go on PATH? (output found=true|false; setup-go runs if not)
#   gate.sh install  go install failpass from the action's own checkout
#   gate.sh userns   let the sandbox create user namespaces on Ubuntu 24.04
#   gate.sh gate     gate the pull request's commits against the card
#
# Inputs arrive in the environment (FAILPASS_*), never spliced into the
# script's text. The runner gives GITHUB_ACTION_PATH, GITHUB_WORKSPACE,
# GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY and RUNNER_TEMP.
#
# Exit codes of `gate`: failpass gate's own. 0 pass, 1 a rule was broken,
# 2 trouble (no pull request in the event, a card missing on the base
# branch, a commit not fetched, usage).
set -u

say() { printf '%s\n' "$*"; }
# trouble MESSAGE: an error annotation without a file, then exit 2. The
# message is the script's own text plus names the workflow chose (the
# card input), escaped as workflow commands need.
trouble() {
	say "::error title=failpass::$(escape "$1")"
	exit 2
}
escape() { printf '%s' "$1" | sed -e 's/%/%25/g' | tr '\n\r' '  '; }
output() { printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"; }

# A Go from 1.21 on fetches the toolchain go.mod asks for by itself
# (GOTOOLCHAIN=auto); an older one, or none, gets actions/setup-go.
phase_go() {
	v=$(go env GOVERSION 2>/dev/null)
	minor=$(printf '%s\n' "$v" | sed -n 's/^go1\.\([0-9][0-9]*\).*/\1/p')
	if [ -n "$minor" ] && [ "$minor" -ge 21 ]; then
		say "Go on PATH: $v"
		output found true
	else
		say "no Go 1.21 or later on PATH${v:+ ($v)}: actions/setup-go installs the version go.mod names"
		output found false
	fi
}

phase_install() {
	action=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}
	bin=${RUNNER_TEMP:?RUNNER_TEMP is not set}/failpass-action/bin
	mkdir -p "$bin" || exit 2
	# Built from this checkout of the action, at the ref the workflow
	# names: no prebuilt binary is downloaded. The workflow's own Go
	# settings (a go.work, -mod=vendor) are not the action's.
	(cd "$action" && GOBIN=$bin GOWORK=off GOFLAGS=-mod=readonly go install ./cmd/failpass) ||
		trouble "go install of failpass from $action failed (see the log above)"
	say "$bin" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
	"$bin/failpass" --version || exit 2
	output failpass "$bin/failpass"
}

# GitHub's Ubuntu 24.04 images set kernel.apparmor_restrict_unprivileged_userns=1:
# an unprivileged process may create a user namespace but gets no
# capability in it, so the sandbox cannot mount /proc or a private /tmp
# and reports network, filesystem and processes missing. The runner's
# passwordless sudo can lift that for the job's machine (a fresh VM per
# job on GitHub-hosted runners). Nothing else is changed.
phase_userns() {
	knob=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
	if [ ! -r "$knob" ] || [ "$(cat "$knob")" = 0 ]; then
		say "unprivileged user namespaces are not restricted here: nothing to change"
		return 0
	fi
	if [ "$(id -u)" = 0 ]; then
		say "running as root: the sandbox needs no user namespace"
		return 0
	fi
	case ${FAILPASS_ALLOW_USERNS_SYSCTL:-true} in
	true) ;;
	*)
		say "::warning title=failpass sandbox::$knob is 1 and allow-userns-sysctl is false: the sandbox will report the layers it cannot apply (network, filesystem, processes)"
		return 0
		;;
	esac
	if ! sudo -n true 2>/dev/null; then
		say "::warning title=failpass sandbox::$knob is 1 and sudo needs a password: the sandbox will report the layers it cannot apply (network, filesystem, processes)"
		return 0
	fi
	sudo -n sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 ||
		trouble "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 failed"
	say "set kernel.apparmor_restrict_unprivileged_userns=0 with sudo, so the sandbox can use user namespaces"
}

# hexsha S: S is a full commit id.
hexsha() {
	case $1 in
	*[!0-9a-f]* | "") return 1 ;;
	esac
	[ ${#1} -eq 40 ] || [ ${#1} -eq 64 ]
}

# from_base NAME PATH: set $trusted to where the gate reads a trusted
# file (the card, the allowed signers) from. A relative PATH is read at
# the pull request's base commit, from a worktree of it, so a pull
# request can neither bring nor edit the contract it is gated by; an
# absolute PATH is a file an earlier step of the workflow put there.
from_base() {
	case $2 in
	/*)
		[ -f "$2" ] || trouble "$1 $2: no such file"
		trusted=$2
		;;
	*)
		git -C "$base_wt" cat-file -e "HEAD:$2" 2>/dev/null ||
			trouble "$1 $2 is not on the base branch (commit $base): a pull request is gated by the contract its base holds; commit the $1 there first, or give an absolute path an earlier step wrote"
		trusted=$base_wt/$2
		;;
	esac
}

phase_gate() {
	workspace=${GITHUB_WORKSPACE:?GITHUB_WORKSPACE is not set}
	tmp=${RUNNER_TEMP:?RUNNER_TEMP is not set}/failpass-action
	: "${GITHUB_STEP_SUMMARY:?GITHUB_STEP_SUMMARY is not set}"
	base=${FAILPASS_BASE:-}
	head=${FAILPASS_HEAD:-}
	card=${FAILPASS_CARD:-}
	[ -n "$card" ] || trouble "the card input is empty: name the contract card, e.g. card: .github/failpass/ISSUE-12.yml"
	if ! hexsha "$base" || ! hexsha "$head"; then
		trouble "no pull request in this event (${GITHUB_EVENT_NAME:-unknown}): base and head come from pull_request.base.sha and pull_request.head.sha; on other events set the action's base and head inputs to commit ids"
	fi
	cd "$workspace" || exit 2
	if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
		say "::warning title=failpass::the checkout is shallow: the card's base and the merge base may be missing; use actions/checkout with fetch-depth: 0"
	fi
	for c in "$base" "$head"; do
		git cat-file -e "$c^{commit}" 2>/dev/null ||
			trouble "commit $c is not in the checkout at $workspace; use actions/checkout with fetch-depth: 0"
	done

	mkdir -p "$tmp" || exit 2
	run=$(mktemp -d "$tmp/run.XXXXXX") || exit 2
	base_wt=$run/base
	keyfile=
	cleanup() {
		git -C "$workspace" worktree remove --force "$base_wt" >/dev/null 2>&1
		[ -z "$keyfile" ] || rm -f "$keyfile"
		rm -rf "$run"
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	git -C "$workspace" worktree add --quiet --detach "$base_wt" "$base" ||
		trouble "cannot check out the base commit $base"

	from_base card "$card"
	card_file=$trusted
	set -- --repo "$base_wt" --card "$card_file" --commits "$base..$head" --json
	if [ -n "${FAILPASS_ALLOWED_SIGNERS:-}" ]; then
		from_base allowed-signers "$FAILPASS_ALLOWED_SIGNERS"
		set -- "$@" --allowed-signers "$trusted"
	fi
	runners=
	if [ -n "${FAILPASS_RUNNERS:-}" ]; then
		from_base runners "$FAILPASS_RUNNERS"
		runners=$trusted
	fi
	case ${FAILPASS_SANDBOX:-on} in
	on) ;;
	off) set -- "$@" --sandbox=off ;;
	*) trouble "sandbox: want on or off, got ${FAILPASS_SANDBOX}" ;;
	esac
	record=
	if [ -n "${FAILPASS_RECORD_KEY:-}" ]; then
		case $FAILPASS_RECORD_KEY in
		*"-----BEGIN "*)
			# The key itself (a secret): to a file only this user reads,
			# removed when the step ends.
			keyfile=$run/record-key
			(umask 077 && printf '%s\n' "$FAILPASS_RECORD_KEY" >"$keyfile") || exit 2
			key=$keyfile
			;;
		/*) key=$FAILPASS_RECORD_KEY ;;
		*) key=$workspace/$FAILPASS_RECORD_KEY ;;
		esac
		[ -f "$key" ] || trouble "record-key: no key file at $key"
		mkdir -p "$tmp/record" || exit 2
		record=$tmp/record/failpass-record.json
		rm -f "$record" "$record.sig"
		set -- "$@" --record "$record" --record-key "$key"
	fi
	# Nothing started from here on needs the key's text in its environment.
	unset FAILPASS_RECORD_KEY
	# Extra arguments are the workflow's, split on blanks, never globbed.
	set -f
	# shellcheck disable=SC2086
	set -- "$@" ${FAILPASS_EXTRA_ARGS:-}
	set +f

	say "failpass: $(command -v failpass)"
	verdict=$tmp/verdict.json
	rm -f "$verdict"
	say "failpass gate $*"
	# What the gate prints comes partly from the pull request (paths,
	# reasons): no line of it may act as a workflow command.
	token=failpass-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	say "::stop-commands::$token"
	failpass gate "$@" >"$verdict"
	rc=$?
	say "::$token::"
	output json "$verdict"
	case $rc in
	0) output verdict pass ;;
	1) output verdict fail ;;
	*) output verdict error ;;
	esac

	failpass results annotate --summary "$GITHUB_STEP_SUMMARY" "$verdict" ||
		say "::error title=failpass::failpass gate exited $rc without a verdict (see the log above)"

	# The note names the card as the repository does (run from the base
	# worktree), so its replay command works in any checkout.
	note_dir=$base_wt
	case $card in /*) note_dir=$workspace ;; esac
	set -- --card "$card"
	if [ -n "$record" ] && [ -f "$record" ]; then
		output record "$record"
		output record-dir "$tmp/record"
		if [ -n "$runners" ]; then
			set -- "$@" --record "$record" --runners "$runners"
		else
			set -- "$@" --record "$record" --unverified
		fi
	fi
	{
		(cd "$note_dir" && failpass note "$@") || say "(failpass note failed; see the log)"
		say
	} >>"$GITHUB_STEP_SUMMARY"
	exit "$rc"
}

case ${1:-} in
go) phase_go ;;
install) phase_install ;;
userns) phase_userns ;;
gate) phase_gate ;;
*)
	say "usage: gate.sh go|install|userns|gate" >&2
	exit 2
	;;
esac

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/heldout"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/report"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/shard"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/verdict"
)

const gateUsage = `failpass gate --card FILE --diff FILE|- [--diff FILE ...] [--manifest FILE] [--repo DIR] [--json] [--quiet]
    [--allow-unsigned | --allowed-signers FILE] [--repeat N] [--jobs N] [--no-cache] [--shard K/N]
    [--junit FILE] [--sandbox=off] [--keep-worktree] [--log-dir DIR] [--record FILE [--record-key KEY]]
    [--held-out DIR | --skip-held-out]
failpass gate --card FILE --commits BASE..HEAD [...]`

// gateRulesHelp lists the rule ids, in gate order, for `gate -h`.
func gateRulesHelp() string {
	var b strings.Builder
	b.WriteString("rules, in gate order (the first broken one is the verdict's rule):\n")
	line := " "
	for _, r := range append(append([]string(nil), verdict.Rules...), verdict.RulePatchFlaky) {
		if len(line)+len(r)+1 > 78 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + r
	}
	b.WriteString(line + "\n")
	b.WriteString("patch.canary: the oracle test, with an assertion that must fail put first in it, must\n" +
		"  fail under the pass command (every other patched run has the assertion made to hold);\n" +
		"  not run (runner not recognized) for a runner or selection it cannot follow,\n" +
		"  not run (canary: \"off\" in the card) when the card turns it off.\n" +
		"A run that timed out, died by a signal, exited 125-127, or (for go test, pytest and\n" +
		"  unittest) failed for its environment, such as a package that did not build, is\n" +
		"  inconclusive and never satisfies a rule.\n")
	return b.String()
}

type gateFlags struct {
	card           string
	diffs          stringList
	repo           string
	json           bool
	allowUnsigned  bool
	allowedSigners string
	repeat         int
	keepWorktree   bool
	logDir         string
	record         string
	recordKey      string
	sandbox        string
	manifest       string
	jobs           int
	noCache        bool
	shard          string
	junit          string
	commits        string
	heldOut        string
	skipHeldOut    bool
	quiet          bool
}

// batch says whether the candidates are gated as a batch (shared base
// side, pooled worktrees, cache, summary) rather than alone.
func (f *gateFlags) batch() bool {
	return len(f.diffs) > 1 || f.manifest != "" || f.shard != "" || f.junit != ""
}

func runGate(ctx context.Context, env *Env, args []string) error {
	var f gateFlags
	fs := newFlags(env, "gate", gateUsage)
	fs.trailer = gateRulesHelp()
	fs.StringVar(&f.card, "card", "", "the contract card `FILE`")
	fs.Var(&f.diffs, "diff", "a candidate diff `FILE` (- for stdin); repeatable")
	fs.StringVar(&f.repo, "repo", ".", "the repository `DIR`")
	fs.BoolVar(&f.json, "json", false, "print the verdict as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "print no progress on stderr")
	fs.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "run an unsigned card (its commands are not verified)")
	fs.StringVar(&f.allowedSigners, "allowed-signers", "", "SSH allowed_signers `FILE` to verify the card against")
	fs.IntVar(&f.repeat, "repeat", 1, "run every card command `N` times; disagreeing runs break the rule")
	fs.StringVar(&f.sandbox, "sandbox", "on", "contain card commands (`on` or off)")
	fs.BoolVar(&f.keepWorktree, "keep-worktree", false, "leave the worktree in place for inspection")
	fs.StringVar(&f.logDir, "log-dir", "", "write command logs under `DIR`")
	fs.StringVar(&f.record, "record", "", "write a signed record of the run to `FILE` (signature in FILE.sig)")
	fs.StringVar(&f.recordKey, "record-key", "", "SSH `KEY` that signs the record (default: the ssh-agent's key)")
	fs.StringVar(&f.manifest, "manifest", "", "JSON lines `FILE` of {\"card\": ..., \"diff\": ...} candidates, paths relative to its folder")
	fs.IntVar(&f.jobs, "jobs", runtime.NumCPU(), "gate `N` candidates at a time")
	fs.BoolVar(&f.noCache, "no-cache", false, "neither use nor keep base results and prebuilt packages from earlier gates, nor, in a batch, verdicts (a single gate never caches its verdict)")
	fs.StringVar(&f.shard, "shard", "", "gate only the `K/N` slice of the candidates (K from 0 to N-1)")
	fs.StringVar(&f.junit, "junit", "", "also write the verdicts as JUnit XML to `FILE`")
	fs.StringVar(&f.commits, "commits", "", "gate the change from merge-base(BASE, HEAD) to HEAD, read from git (`BASE..HEAD`)")
	fs.StringVar(&f.heldOut, "held-out", "", "the card's held-out tests: a `DIR` checked against held_out.digest, copied into every patched tree (rule patch.held_out)")
	fs.BoolVar(&f.skipHeldOut, "skip-held-out", false, "pass patch.held_out without the card's held-out tests, loudly (\"held_out\": \"skipped\")")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	err = checkGateFlags(&f, pos)
	if err == nil {
		err = gateCandidates(ctx, env, &f)
	}
	if err != nil && f.json && !isExit(err) {
		report.JSONError(env.Stdout, asInterrupted(ctx, err))
	}
	return err
}

func isExit(err error) bool {
	var ex exitErr
	return errors.As(err, &ex)
}

// usageOf makes a range's bad spelling a usage error (gitpatch.ParseRange
// names the flag and the fix; the command line is at fault).
func usageOf(err error) error {
	var re *gitpatch.RangeError
	if errors.As(err, &re) && re.Usage {
		u := &UsageError{Msg: re.Msg}
		if len(re.Hint) > 0 {
			u.Hint = re.Hint[0]
		}
		return u
	}
	return err
}

// checkGateFlags refuses bad combinations before any side effect.
func checkGateFlags(f *gateFlags, pos []string) error {
	switch {
	case len(pos) > 0:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "pass candidates with --diff FILE"}
	case f.commits != "" && (len(f.diffs) > 0 || f.manifest != ""):
		return &UsageError{Msg: "--commits excludes --diff and --manifest", Hint: "gate either the commits BASE..HEAD or diff files"}
	case f.commits != "" && f.card == "":
		return &UsageError{Msg: "--card is required", Hint: "failpass gate --card issue-contract.yml --commits origin/main..HEAD"}
	case f.commits != "":
		if _, err := gitpatch.ParseRange(f.commits); err != nil {
			return usageOf(err)
		}
		if f.shard != "" || f.junit != "" {
			return &UsageError{Msg: "--commits gates one candidate", Hint: "--shard and --junit go with --manifest or several --diff"}
		}
	case f.card == "" && (f.manifest == "" || len(f.diffs) > 0):
		return &UsageError{Msg: "--card is required", Hint: "failpass gate --card issue-contract.yml --diff fix.diff"}
	case len(f.diffs) == 0 && f.manifest == "":
		return &UsageError{Msg: "--diff is required", Hint: "failpass gate --card issue-contract.yml --diff fix.diff"}
	case f.card != "" && len(f.diffs) == 0:
		return &UsageError{Msg: "--card without --diff", Hint: "a manifest names each candidate's card; --card goes with --diff"}
	case f.jobs < 1 || f.jobs > 256:
		return &UsageError{Msg: fmt.Sprintf("--jobs %d: want 1 to 256", f.jobs)}
	case f.batch() && f.record != "":
		return &UsageError{Msg: "--record takes one candidate", Hint: "gate candidates one at a time to record each"}
	case f.batch() && f.keepWorktree:
		return &UsageError{Msg: "--keep-worktree takes one candidate", Hint: "a batch reuses its worktrees; gate the candidate alone to inspect its worktree"}
	case f.repeat < 1 || f.repeat > 100:
		return &UsageError{Msg: fmt.Sprintf("--repeat %d: want 1 to 100", f.repeat)}
	case f.allowUnsigned && f.allowedSigners != "":
		return &UsageError{Msg: "--allow-unsigned and --allowed-signers exclude each other"}
	case f.sandbox != "on" && f.sandbox != "off":
		return &UsageError{Msg: fmt.Sprintf("--sandbox=%s: want on or off", f.sandbox)}
	case f.record != "" && len(f.diffs) > 1:
		return &UsageError{Msg: "--record takes one candidate", Hint: "gate candidates one at a time to record each"}
	case f.recordKey != "" && f.record == "":
		return &UsageError{Msg: "--record-key needs --record FILE"}
	case f.heldOut != "" && f.skipHeldOut:
		return &UsageError{Msg: "--held-out and --skip-held-out exclude each other", Hint: "give the held-out tests with --held-out DIR, or skip them with --skip-held-out"}
	}
	stdin := 0
	for _, d := range f.diffs {
		if d == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return &UsageError{Msg: "only one --diff may read standard input"}
	}
	if f.shard != "" {
		if _, err := shard.Parse(f.shard); err != nil {
			return &UsageError{Msg: err.Error(), Hint: "in a Kubernetes Indexed Job: --shard $(JOB_COMPLETION_INDEX)/<completions>"}
		}
	}
	return nil
}

// gateCandidates is the one gate path: the candidates, one or many, each
// card bound once, checked together (setUpGate); then one candidate is
// gated alone (gateOne) and many as a batch (gateBatch).
func gateCandidates(ctx context.Context, env *Env, f *gateFlags) error {
	repo, err := gitx.Open(ctx, f.repo)
	if err != nil {
		return err
	}
	cands, err := gateInputs(ctx, env, f, repo)
	if err != nil {
		return err
	}
	if !f.batch() && cands[0].err != nil {
		return cands[0].err // one candidate's unreadable input is the command's trouble
	}
	s, err := setUpGate(ctx, env, f, repo, cands)
	if err != nil {
		return err
	}
	if f.batch() {
		return gateBatch(ctx, env, f, s, cands)
	}
	return gateOne(ctx, env, f, s, cands[0])
}

// gateOne gates one candidate (the commits' change or one --diff) with
// what only a lone gate does: a record, a kept worktree, a log folder of
// the user's, the step-by-step report.
func gateOne(ctx context.Context, env *Env, f *gateFlags, s *gateSetup, cand *batchCandidate) error {
	repo, c := s.repo, cand.card
	if f.record != "" {
		// A key that cannot sign, or a folder that cannot hold the record,
		// must stop the gate before its commands run, not after.
		if err := gateRecordPreflight(env, f.record, f.recordKey); err != nil {
			return err
		}
	}
	o := s.options(env, f, cand)
	o.LogDir, o.KeepWorktree, o.PatchedTree = f.logDir, f.keepWorktree, f.record != ""
	if !f.noCache {
		o.Cache = gate.OpenCache(repo) // base results and kept prebuilds; never the verdict
	}
	d := cand.diff
	prog := newStepProgress(env, "gate", f.quiet)
	if prog != nil {
		o.Starting, o.Progress = prog.starting, prog.finished
	}
	v, err := gate.Run(ctx, o)
	prog.close()
	if err != nil {
		return err
	}
	if v.Failed() == verdict.RuleCardSignature && len(c.Signatures) == 0 {
		fmt.Fprintf(env.Stderr, "hint: sign the card first (failpass card sign --card %s --key KEY), then gate with --allowed-signers FILE; or try it unverified with --allow-unsigned\n", Sanitize(f.card))
	}
	if _, fetch, ok := strings.Cut(v.Reason, "fetch it: "); ok && v.Failed() == verdict.RuleCardBase {
		fmt.Fprintf(env.Stderr, "hint: the card's base is not in this repository; fetch it, then gate again: %s\n", Sanitize(fetch))
	}
	if f.record != "" {
		if err := gateRecord(ctx, env, repo, c, d, v, f.record, f.recordKey); err != nil {
			return err
		}
	}
	if f.json {
		if err := report.JSON(env.Stdout, v); err != nil {
			return err
		}
	} else {
		report.Text(env.Stdout, v)
		if v.LogDir != "" {
			fmt.Fprintf(env.Stdout, "logs: %s\n", v.LogDir)
		}
	}
	if v.Verdict != verdict.Pass {
		return Exit(ExitFail)
	}
	return nil
}

// readDiff reads one candidate, bounded by patch.MaxSize.
func readDiff(env *Env, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = env.Stdin
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return nil, Errorf("cannot read diff: %v", err).Hint("--diff takes the path of a unified diff, or - for standard input")
		}
		defer fh.Close()
		r = fh
	}
	b, err := io.ReadAll(io.LimitReader(r, patch.MaxSize+1))
	if err != nil {
		return nil, Errorf("cannot read diff %s: %v", name, err)
	}
	if len(b) > patch.MaxSize {
		return nil, Errorf("diff %s is larger than %d bytes", name, patch.MaxSize).Hint("a candidate fix this large is not a fix the budget can hold; split it")
	}
	return b, nil
}

// needSigners refuses, as setup trouble, a signed card the gate has no
// allowed signers for: that is a missing flag or config, not a bad
// candidate, and every candidate would fail card.signature for it.
func needSigners(f *gateFlags, c *card.Card, cardPath string, trust sign.Trust) error {
	if trust != nil || f.allowUnsigned || len(c.Signatures) == 0 {
		return nil
	}
	return Errorf("%s is signed, but no allowed signers were given or configured to check it against", cardPath).
		Hint("pass the maintainers' allowed_signers file: --allowed-signers FILE").
		Hint("or configure it once for the repository: git config gpg.ssh.allowedSignersFile /path/to/allowed_signers").
		Hint("to run its commands without checking who signed it: --allow-unsigned")
}

// gateTrust returns the card.signature check, or nil when the card will be
// treated as unsigned. Trust roots come from the flag or git config, never
// from the candidate or its worktree.
func gateTrust(ctx context.Context, env *Env, repo *gitx.Repo, f *gateFlags) (sign.Trust, error) {
	if f.allowUnsigned {
		return nil, nil
	}
	return gate.TrustIn(ctx, repo, f.allowedSigners)
}

// gateSandbox is whether the gate contains a card's commands: on by
// default (the gate then keeps the card's build caches itself); off is
// the user's explicit choice and is said loudly.
func gateSandbox(env *Env, off bool) gate.SandboxMode {
	if off {
		fmt.Fprintln(env.Stderr, "failpass: warning: --sandbox=off: card commands run UNCONTAINED, with your network, files and processes")
		return gate.SandboxOff
	}
	return gate.SandboxOn
}

// gateSetup is what every candidate of one gate command shares, one
// candidate or many: the repository, the card.signature check, the
// held-out tests, whether commands are contained.
type gateSetup struct {
	repo  *gitx.Repo
	trust sign.Trust
	held  *heldout.Folder
	mode  gate.SandboxMode
}

// setUpGate checks what the candidates need before any command runs: the
// allowed signers of every signed card, the held-out tests; and says
// loudly what weakens the gate (--allow-unsigned, --sandbox=off).
func setUpGate(ctx context.Context, env *Env, f *gateFlags, repo *gitx.Repo, cands []*batchCandidate) (*gateSetup, error) {
	trust, err := gateTrust(ctx, env, repo, f)
	if err != nil {
		return nil, err
	}
	var cards []heldOutCard
	for _, c := range cands {
		if c.err != nil || c.card == nil {
			continue // an unreadable candidate is an error verdict of its own
		}
		if err := needSigners(f, c.card, c.cardPath, trust); err != nil {
			return nil, err
		}
		cards = append(cards, heldOutCard{c.card, c.cardPath})
	}
	held, err := gateHeldOut(env, f, cards)
	if err != nil {
		return nil, err
	}
	if f.allowUnsigned {
		fmt.Fprintln(env.Stderr, "failpass: warning: --allow-unsigned: the card's commands were not verified by any signer")
	}
	return &gateSetup{repo: repo, trust: trust, held: held, mode: gateSandbox(env, f.sandbox == "off")}, nil
}

// options is the one gate.Options of candidate c, as the flags ask.
func (s *gateSetup) options(env *Env, f *gateFlags, c *batchCandidate) gate.Options {
	return gate.Options{
		Bound: c.bound, Diff: c.diff, DiffName: c.name,
		Trust: s.trust, AllowUnsigned: f.allowUnsigned, Sandbox: s.mode,
		HeldOut: s.held, SkipHeldOut: f.skipHeldOut, CanaryPlace: canaryPlace(env),
		Repeat: f.repeat,
	}
}

// batchCandidate is one candidate of a batch, in input order.
type batchCandidate struct {
	name     string // as given: the --diff argument or the manifest's diff field
	cardPath string
	diffPath string
	commits  string // --commits BASE..HEAD: the diff is the range's change
	where    string // for messages: "--diff X", "--commits R" or "manifest.jsonl:3"
	card     *card.Card
	bound    *gate.Bound // card bound to the repository
	diff     []byte
	// err is why the candidate cannot be gated (its card or diff is
	// unreadable, malformed or oversize): an error verdict, not trouble
	// for the whole batch.
	err error
}

// maxManifest bounds the manifest file.
const maxManifest = 64 << 20

// gateInputs lists the candidates (the --commits change, or the --diff
// ones first, then the manifest's), takes the shard's slice, and loads
// every card and diff, binding each card to repo once, before anything
// runs: in a batch, a bad input is an error verdict of its own.
func gateInputs(ctx context.Context, env *Env, f *gateFlags, repo *gitx.Repo) ([]*batchCandidate, error) {
	var all []*batchCandidate
	if f.commits != "" {
		all = append(all, &batchCandidate{name: f.commits, cardPath: f.card, commits: f.commits, where: "--commits " + f.commits})
	}
	for _, d := range f.diffs {
		all = append(all, &batchCandidate{name: d, cardPath: f.card, diffPath: d, where: "--diff " + d})
	}
	if f.manifest != "" {
		fh, err := os.Open(f.manifest)
		if err != nil {
			return nil, Errorf("cannot read the manifest: %v", err).Hint("--manifest takes a file of JSON lines {\"card\": ..., \"diff\": ...}")
		}
		data, err := io.ReadAll(io.LimitReader(fh, maxManifest+1))
		fh.Close()
		if err != nil {
			return nil, Errorf("cannot read the manifest: %v", err)
		}
		if len(data) > maxManifest {
			return nil, Errorf("manifest %s is larger than %d bytes", f.manifest, maxManifest).Hint("split it, or shard it with --shard K/N")
		}
		entries, err := gate.ParseManifest(f.manifest, data)
		if err != nil {
			return nil, err
		}
		dir := filepath.Dir(f.manifest)
		for _, e := range entries {
			r := e.Resolve(dir)
			all = append(all, &batchCandidate{name: e.Diff, cardPath: r.Card, diffPath: r.Diff, where: fmt.Sprintf("%s:%d", f.manifest, e.Line)})
		}
	}
	mine := shard.Shard{N: 1}
	if f.shard != "" {
		mine, _ = shard.Parse(f.shard)
	}
	var out []*batchCandidate
	type loaded struct {
		c   *card.Card
		b   *gate.Bound
		err error
	}
	cards := map[string]loaded{}
	for i, c := range all {
		if !mine.Has(i) {
			continue
		}
		out = append(out, c)
		key := filepath.Clean(c.cardPath)
		l, ok := cards[key]
		if !ok {
			if l.c, l.err = card.Load(c.cardPath); l.err == nil {
				l.b, l.err = gate.Bind(ctx, repo, l.c, c.cardPath, env.Getenv)
			}
			cards[key] = l
		}
		if c.card, c.bound = l.c, l.b; l.err != nil {
			c.err = l.err
			continue
		}
		if c.commits != "" {
			var r gitpatch.Range
			if r, c.err = gitpatch.ParseRange(c.commits); c.err == nil {
				c.diff, c.err = gitpatch.RangeDiff(ctx, repo, r)
			}
			continue
		}
		if c.diff, c.err = readDiff(env, c.diffPath); c.err != nil {
			var ue *Error
			if errors.As(c.err, &ue) && c.where != "--diff "+c.diffPath {
				ue.Msg = c.where + ": " + ue.Msg
			}
		}
	}
	return out, nil
}

// errorVerdict is the verdict of a batch candidate that could not be
// gated: the others still run, and the batch exits 2.
func errorVerdict(c *batchCandidate) *verdict.Verdict {
	msg, _, ok := userError(c.err)
	if !ok {
		msg = c.err.Error()
	}
	return &verdict.Verdict{Verdict: verdict.Errored, Candidate: c.name, Reason: "could not be gated", Error: Sanitize(msg),
		Steps: []verdict.Step{}, Sandbox: sandbox.Report{Applied: []string{}, Missing: []string{}, Features: []string{}}}
}

// gateBatch gates many candidates: static rules first, the base side once
// per card, patched sides in parallel pooled worktrees, results cached.
// Output: one line (or JSON object) per candidate as it finishes, then a
// summary.
func gateBatch(ctx context.Context, env *Env, f *gateFlags, s *gateSetup, cands []*batchCandidate) error {
	repo := s.repo
	var cache *gate.Cache
	if !f.noCache {
		cache = gate.OpenCache(repo)
	}
	b := gate.NewBatch(gate.BatchConfig{Repo: repo, Cache: cache, Jobs: f.jobs, LogDir: f.logDir})
	defer b.Close(context.WithoutCancel(ctx))

	var runnable []int // the index in cands of each option value
	var opts []gate.Options
	for i, c := range cands {
		if c.err != nil {
			continue
		}
		runnable = append(runnable, i)
		opts = append(opts, s.options(env, f, c))
	}
	verdicts := make([]*verdict.Verdict, len(cands))
	var sum report.Summary
	emit := func(v *verdict.Verdict) error {
		if f.json {
			return report.JSON(env.Stdout, v)
		}
		_, err := fmt.Fprintln(env.Stdout, report.BatchLine(v))
		return err
	}
	// Candidates that cannot be gated are answered first, before any
	// command runs.
	for i, c := range cands {
		if c.err == nil {
			continue
		}
		verdicts[i] = errorVerdict(c)
		sum.Add(verdicts[i])
		if err := emit(verdicts[i]); err != nil && f.json {
			return err
		}
	}
	prog := newProgress(env, len(cands))
	err := b.Run(ctx, opts, func(j int, v *verdict.Verdict) error {
		verdicts[runnable[j]] = v
		sum.Add(v)
		prog.clear()
		if err := emit(v); err != nil && f.json {
			return err
		}
		prog.update(sum)
		return nil
	})
	var ce *gate.CandidateError
	if errors.As(err, &ce) {
		err = fmt.Errorf("%s: %w", cands[runnable[ce.Index]].where, ce.Err)
	}
	prog.finish()
	if err != nil {
		return err
	}
	if f.junit != "" {
		if err := writeJUnit(f.junit, verdicts); err != nil {
			return err
		}
	}
	if f.shard != "" {
		sh, _ := shard.Parse(f.shard)
		sum.Shard = sh.String()
	}
	if f.json {
		if err := report.SummaryJSON(env.Stdout, sum); err != nil {
			return err
		}
	} else {
		if len(verdicts) > 0 {
			fmt.Fprintln(env.Stdout)
		}
		report.Table(env.Stdout, verdicts)
		for _, v := range verdicts {
			if v.LogDir != "" {
				fmt.Fprintf(env.Stdout, "logs: %s\n", filepath.Dir(v.LogDir))
				break
			}
		}
	}
	if sum.Errors > 0 {
		// Not an *Error: under --json the summary must stay the last line.
		printError(env.Stderr, "failpass: error: ", fmt.Sprintf("%d candidate(s) could not be gated (verdict error)", sum.Errors),
			[]string{"fix or remove the candidates named on the ERROR lines and gate them again"})
		return Exit(ExitTrouble)
	}
	if sum.Failed > 0 {
		return Exit(ExitFail)
	}
	return nil
}

// writeJUnit writes the JUnit XML report with the one atomic writer: a
// dashboard never reads half a file, gates sharing one --junit path each
// write their own uniquely named temporary file (the last rename wins),
// and a write that fails (a full disk) leaves no temporary file behind.
func writeJUnit(path string, vs []*verdict.Verdict) error {
	var buf bytes.Buffer
	if err := report.JUnit(&buf, vs); err != nil {
		return err
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return Errorf("cannot write the JUnit report: %v", err).Hint("--junit names a file in a writable folder")
	}
	return nil
}

// progress shows done/total, passing so far, elapsed time and an
// estimate: redrawn in place on a terminal, plain lines when CI is set,
// nothing otherwise (stdout already has a line per candidate).
type progress struct {
	w     io.Writer
	tty   bool
	plain bool
	total int
	start time.Time
	last  time.Time
	drawn bool
}

func newProgress(env *Env, total int) *progress {
	p := &progress{w: env.Stderr, total: total, start: time.Now()}
	if fh, ok := env.Stderr.(*os.File); ok && isTerminal(fh) {
		p.tty = true
	} else if env.Getenv("CI") != "" {
		p.plain = true
	}
	return p
}

func (p *progress) line(s report.Summary) string {
	el := time.Since(p.start)
	eta := "?"
	if s.Total > 0 && s.Total < p.total {
		eta = (el / time.Duration(s.Total) * time.Duration(p.total-s.Total)).Round(time.Second).String()
	} else if s.Total == p.total {
		eta = "0s"
	}
	return fmt.Sprintf("%d/%d done, %d passing, %s elapsed, ~%s left", s.Total, p.total, s.Passed, el.Round(time.Second), eta)
}

func (p *progress) update(s report.Summary) {
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K[%s]", p.line(s))
		p.drawn = true
	case p.plain:
		// At most one line every 10 s, and the last one, so a CI log of
		// a thousand candidates stays readable.
		if time.Since(p.last) >= 10*time.Second || s.Total == p.total {
			fmt.Fprintf(p.w, "progress: %s\n", p.line(s))
			p.last = time.Now()
		}
	}
}

func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) finish() { p.clear() }

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}

// canaryPlace reads FAILPASS_CANARY_PLACE, which pins where the canary
// runs among the patched runs ("first", "last" or a 0-based place)
// instead of drawing it at random: for reproducing a verdict and for
// tests that show what each run does in one order. Anything else, or
// unset, draws it.
func canaryPlace(env *Env) int {
	switch v := env.Getenv("FAILPASS_CANARY_PLACE"); v {
	case "":
		return gate.CanaryPlaceRandom
	case "first":
		return 1
	case "last":
		return gate.CanaryPlaceLast
	default:
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n + 1
		}
	}
	return gate.CanaryPlaceRandom
}

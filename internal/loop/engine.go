// Package loop owns the review-fix loop: locks, checkpoints, isolated review passes, decisions, transactional fix attempts, promotion, publication and the terminal result.
package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/logdir"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/sandbox"
)

// Config is how one invocation runs: the adapters of its roles and
// failpass's own options. Identity and authority live in the invocation
// document, never here.
type Config struct {
	Reviewer   model.Adapter
	ReviewerID string // the spec, for review records
	// ReviewerErr is why the reviewer spec cannot run at all (program
	// missing, endpoint not configured); Reviewer is nil then.
	ReviewerErr error
	Fixer       model.Adapter
	FixerID     string
	// ReviewerEndpoint and FixerEndpoint say the adapter is a remote
	// endpoint (openai/) with no access to this machine's files: its tool
	// surface cannot write, so a review by it is write-isolated even where
	// no private read-only mount can be built.
	ReviewerEndpoint, FixerEndpoint bool
	Decider                         model.Adapter // nil: the built-in policy
	Lenses                          []string
	Card                            *CardPolicy // nil without --card
	// Remote is the git remote name that reaches the update_pr target.
	Remote string
	// Log receives one progress line per phase (stderr in the CLI).
	Log io.Writer
	// Env is the environment of validation commands (nil: run's minimal
	// default), and of the card's commands when CardEnv is nil.
	Env []string
	// CardEnv, when set, is the environment of the card's own validation
	// commands (pass, invariant), its signed env included: the CLI gives
	// gate.DefaultEnv, as the gate and the build cache's key have it.
	CardEnv func(card.Command) []string
	// Record, when set, keeps a signed gate record per attempt (needs Card).
	Record *Recorder
	// Sandbox, when set, contains every validation command (run.Spec's
	// sandbox): the CLI sets it; nil runs validation uncontained.
	Sandbox *sandbox.Policy
	// ValidationTimeout bounds one validation command without a card
	// (default 10m).
	ValidationTimeout time.Duration
	// hook is a test seam: called at named points; a non-nil error stops
	// the engine on the spot, as kill -9 would, without another write.
	hook func(point string) error
	// Grants are what the loop's settings grant the role programs
	// beyond their sandbox (docs/loop.md, "What the roles can reach").
	Grants Grants
	// unconfinedFixer is a test seam: run the fixer without its read-only
	// view, to exercise the detection of writes outside the worktree.
	unconfinedFixer bool
	// noMounts is a test seam: behave as on a machine where no private
	// view of the file system can be made (sandbox.ViewSupport fails).
	noMounts bool
}

// Outcome is what Start and Resume return: the terminal result (validated
// against the checkpoint) and its canonical bytes. Persisted is false when
// nothing could be written (candidate_busy, checkpoint_mismatch).
type Outcome struct {
	Result    *loopdoc.TerminalResult
	JSON      []byte
	Persisted bool
	Dir       string // the loop's folder
	// Containment says, one line per role, each sandbox layer its
	// program ran without (and why), or that it ran uncontained: what
	// the human summary prints, not only the log.
	Containment []string
}

// InterruptedError is a loop stopped by a signal before it returned.
type InterruptedError struct{ ID, Phase string }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("loop %s interrupted in phase %s; nothing was returned", e.ID, e.Phase)
}

// Hints says how to go on.
func (e *InterruptedError) Hints() []string {
	return []string{"continue it with: failpass loop resume --id " + e.ID}
}

// errCrash is what a test hook returns to simulate kill -9.
var errCrash = errors.New("loop: simulated crash")

// engine is one running invocation.
type engine struct {
	ctx    context.Context
	repo   *gitx.Repo
	cfg    Config
	store  *Store
	inv    *loopdoc.Invocation
	invDoc map[string]any
	cp     *loopdoc.Checkpoint
	cpDoc  map[string]any

	branchRef     string
	attemptPrefix string
	resumed       bool
	// passes feed the early-stop policy; decisions of the newest pass.
	passes    []Pass
	decisions []Decision
	// evidenceHead is the head (and base) the validation outcomes are about.
	evidenceHead, evidenceBase string
	validationLogs             map[string]string
	// validatedTrees maps each commit validation ran on to the tree it
	// ran on; nothing else is ever published (checkValidated).
	validatedTrees map[string]string
	// claimed are the finding keys the newest commit claimed to fix.
	claimed []string
	// remote bookkeeping (update_pr)
	expectedRemote string
	remoteBefore   string
	remoteAfter    string
	published      bool
	baseDrifts     int
	candidateFiles map[string]bool
	lastPassSeq    int
	// roles are the records of the role processes running now.
	roles roleRecords
	// hist is the candidate's history the roles see (rolegit.go), made
	// at the first role's run.
	hist *history
	// containment is Outcome.Containment, one line per role at most.
	containment []string
}

func (e *engine) logf(format string, args ...any) {
	if e.cfg.Log != nil {
		fmt.Fprintf(e.cfg.Log, "loop: "+format+"\n", args...)
	}
}

func (e *engine) hook(point string) error {
	if e.cfg.hook != nil {
		return e.cfg.hook(point)
	}
	return nil
}

// stop is a terminal decision made inside the engine.
type stop struct {
	state, reason, detail string
}

func (s *stop) Error() string { return s.state + "/" + s.reason + ": " + s.detail }

func blocked(reason, format string, args ...any) *stop {
	return &stop{state: "blocked", reason: reason, detail: fmt.Sprintf(format, args...)}
}

func remaining(reason, format string, args ...any) *stop {
	return &stop{state: "changes_remaining", reason: reason, detail: fmt.Sprintf(format, args...)}
}

// Start runs a new invocation to its terminal result. inv must already be
// valid (BuildInvocation or a document given with --invocation). The
// invocation, settings and first checkpoint are written before any lock
// or mutation; a busy candidate is reported without writing anything.
func Start(ctx context.Context, repo *gitx.Repo, inv *loopdoc.Invocation, settings *Settings, cfg Config) (*Outcome, error) {
	invData, invDoc, err := checkInvocation(inv)
	var de *DocumentError
	if errors.As(err, &de) && authorityOnly(de.Violations) {
		return refuseAuthority(ctx, repo, inv, cfg, de)
	}
	if err != nil {
		return nil, err
	}
	e := newEngine(ctx, repo, inv, invDoc, cfg)
	e.cp = initialCheckpoint(inv)
	if _, e.cpDoc, err = checkCheckpoint(invDoc, e.cp); err != nil {
		return nil, err
	}
	locks, lerr := e.lock()
	if errors.Is(lerr, ErrBusy) {
		// Nothing is written: the documents of the holder (which may have
		// this very id) stay as they are.
		return e.finish(blocked("candidate_busy", "%v", lerr), false)
	}
	if lerr != nil {
		return nil, lerr
	}
	defer locks.Release()
	e.reapRoles()
	if e.store.Exists() {
		return nil, &InputError{Msg: fmt.Sprintf("a loop with id %q already exists in %s", inv.InvocationID, e.store.Dir),
			Hint: "resume it with 'failpass loop resume --id " + inv.InvocationID + "', or start with a new --id"}
	}
	if err := e.store.write(invocationFile, invData); err != nil {
		return nil, err
	}
	if settings != nil {
		if err := e.store.SaveSettings(settings); err != nil {
			return nil, err
		}
	}
	if err := e.save("resolve", "check authority, reviewer capability and evidence"); err != nil {
		return nil, err
	}
	return e.run()
}

// authorityRules are the contract rules about publication authority: an
// invocation that breaks only these is a well-formed request without the
// authority it claims, answered with blocked/missing_authority.
var authorityRules = map[string]bool{
	"strict.grant_matches_pull_request_target":         true,
	"strict.expected_old_head_matches_source_binding":  true,
	"strict.pull_request_base_matches_comparison_base": true,
	"invocation.local_commit_forbids_grants":           true,
}

func authorityOnly(vs []loopdoc.Violation) bool {
	for _, v := range vs {
		if !authorityRules[v.Rule] {
			return false
		}
	}
	return len(vs) > 0
}

// refuseAuthority answers an invocation whose publication authority does
// not hold, before any lock and without writing anything: its documents
// would not validate, so none are kept.
func refuseAuthority(ctx context.Context, repo *gitx.Repo, inv *loopdoc.Invocation, cfg Config, de *DocumentError) (*Outcome, error) {
	e := newEngine(ctx, repo, inv, nil, cfg)
	e.cp = initialCheckpoint(inv)
	_, doc, err := toDoc(e.cp)
	if err != nil {
		return nil, err
	}
	if vs, err := loopdoc.ValidateDocument(loopdoc.KindCheckpoint, doc); err != nil || len(vs) > 0 {
		return nil, de
	}
	e.cpDoc = doc
	var msgs []string
	for _, v := range de.Violations {
		msgs = append(msgs, v.Msg)
	}
	return e.finishUnpersisted(blocked("missing_authority", "%s", strings.Join(msgs, "; ")))
}

func newEngine(ctx context.Context, repo *gitx.Repo, inv *loopdoc.Invocation, invDoc map[string]any, cfg Config) *engine {
	return &engine{
		ctx: ctx, repo: repo, cfg: cfg, inv: inv, invDoc: invDoc,
		store:          StoreFor(repo.CommonDir, inv.InvocationID),
		branchRef:      "refs/heads/" + inv.Candidate.Branch,
		attemptPrefix:  "refs/failpass/attempts/" + inv.InvocationID + "/",
		validationLogs: map[string]string{},
		validatedTrees: map[string]string{},
	}
}

// lock takes the local candidate lock and, under update_pr, the remote
// target lock.
func (e *engine) lock() (*Locks, error) {
	remoteKey := ""
	if pr := e.inv.Publication.PullRequest; e.inv.Publication.Policy == "update_pr" && pr != nil {
		remoteKey = pr.HeadRepository + "\x00" + pr.HeadRef
	}
	return LockCandidate(e.repo.CommonDir, e.branchRef, remoteKey)
}

func initialCheckpoint(inv *loopdoc.Invocation) *loopdoc.Checkpoint {
	c := inv.Candidate
	cp := &loopdoc.Checkpoint{
		SchemaVersion:       loopdoc.SchemaVersion,
		InvocationID:        inv.InvocationID,
		Repository:          inv.Repository,
		Branch:              c.Branch,
		Worktree:            c.Worktree,
		InitialHead:         c.HeadSHA,
		CurrentHead:         c.HeadSHA,
		ComparisonBase:      c.ComparisonBase,
		PullRequest:         c.PullRequest,
		Publication:         loopdoc.CheckpointPublication{Policy: inv.Publication.Policy},
		OriginalCycleBudget: inv.FixCycleBudget.MaxFixCycles,
		HeadHistory:         []string{c.HeadSHA},
		BaseRevisionHistory: []loopdoc.BaseRef{c.ComparisonBase},
		ValidationOutcomes:  notYetRun(inv.Validation),
		CurrentPhase:        "resolve",
		ExpectedNextAction:  "check authority, reviewer capability and evidence",
	}
	if pr := inv.Publication.PullRequest; pr != nil {
		cp.Publication.PullRequest = &loopdoc.CheckpointPushTarget{HeadRepository: pr.HeadRepository, HeadRef: pr.HeadRef, BaseRef: pr.BaseRef}
	}
	if c.SourceBinding != nil {
		zero := 0
		cp.Source = loopdoc.CheckpointSource{Status: "bound", LastVerifiedHead: c.SourceBinding.ObservedObjectID, AheadBy: &zero, BehindBy: &zero}
	} else {
		cp.Source = loopdoc.CheckpointSource{Status: "unavailable", UnavailableReason: c.SourceUnavailableReason}
	}
	return cp
}

// notYetRun is the validation evidence of a head nobody validated yet:
// every command unavailable, with that reason (a checkpoint always
// carries both scopes).
func notYetRun(cmds []loopdoc.ValidationCommand) []loopdoc.ValidationOutcome {
	out := make([]loopdoc.ValidationOutcome, len(cmds))
	for i, c := range cmds {
		out[i] = loopdoc.ValidationOutcome{Name: c.Name, Command: c.Command, Scope: c.Scope, Status: "unavailable",
			Reason: "not yet run at this head"}
	}
	return out
}

// save validates the checkpoint (alone and against the invocation) and
// writes it atomically.
func (e *engine) save(phase, next string) error {
	e.cp.CurrentPhase = phase
	e.cp.ExpectedNextAction = next
	data, doc, err := checkCheckpoint(e.invDoc, e.cp)
	if err != nil {
		return err
	}
	if err := e.store.write(checkpointFile, data); err != nil {
		return err
	}
	e.cpDoc = doc
	return nil
}

// run is the loop proper, from resolve to return.
func (e *engine) run() (*Outcome, error) {
	defer func() { e.hist.close() }()
	s := e.loop()
	if e.ctx.Err() != nil && !errors.Is(s, errCrash) {
		// SIGINT or SIGTERM: whatever failed on the way out failed because
		// of it, so no terminal result is made up; the checkpoint stays as
		// the last phase wrote it, for resume.
		return nil, &InterruptedError{ID: e.inv.InvocationID, Phase: e.cp.CurrentPhase}
	}
	var st *stop
	if errors.As(s, &st) {
		return e.finish(st, true)
	}
	if errors.Is(s, errCrash) {
		return nil, s
	}
	if s != nil {
		// An internal error mid-loop: the checkpoint stays as the last
		// phase wrote it, for resume.
		return nil, s
	}
	return e.finish(&stop{state: "converged"}, true)
}

func (e *engine) loop() error {
	if err := e.checkAuthority(); err != nil {
		return err
	}
	if e.cfg.Reviewer == nil {
		if e.inv.ReviewExecution.Mode != "in_agent_override" {
			return blocked("missing_capability", "no fresh reviewer can run: %v", e.cfg.ReviewerErr)
		}
	}
	for {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		if err := e.checkDrift("review"); err != nil {
			return err
		}
		if err := e.establishEvidence(); err != nil {
			return err
		}
		res, err := e.review()
		if err != nil {
			return err
		}
		if res.Verdict == model.VerdictClean {
			if err := e.hook("before-publish"); err != nil {
				return err
			}
			return e.publish()
		}
		if res.Verdict == model.VerdictBlocked {
			return blocked("operator_input_required", "the reviewer's verdict is blocked: %s", strings.Join(res.BlockingReasons, "; "))
		}
		if err := e.decideAndFix(res); err != nil {
			return err
		}
	}
}

// decideAndFix handles one changes_required review: decide, check the
// early stops, and run attempts until one commits (then the caller reviews
// the new head) or a stop fires.
func (e *engine) decideAndFix(res *model.ReviewResult) error {
	accepted := e.acceptedFindings()
	failures := e.validationFailures()
	for _, d := range e.decisions {
		if d.ScopeStop {
			return blocked("scope_decision_required", "finding %s: %s", d.Finding.ID, d.Rationale)
		}
	}
	if reason := EarlyStop(e.passes); reason != "" {
		return e.remainingStop(reason, failures, "")
	}
	if len(accepted) == 0 && len(failures) == 0 {
		return blocked("operator_input_required", "the review is %s but every finding was declined", res.Verdict)
	}
	for {
		if e.remainingCycles() == 0 {
			return e.remainingStop(ReasonBudget, failures, "all %d cycles are spent", e.cp.OriginalCycleBudget)
		}
		if RepeatedFailure(e.attemptFacts()) {
			return e.remainingStop(ReasonRepeatedFail, failures, "two attempts from %s failed", short(e.cp.CurrentHead))
		}
		if err := e.checkDrift("attempt"); err != nil {
			return err
		}
		if e.evidenceBase != e.cp.ComparisonBase.SHA {
			// The base moved: rebuild evidence and review again, free.
			return nil
		}
		out, err := e.attempt(accepted, failures)
		if err != nil {
			return err
		}
		if out.committed || out.rebuild {
			return nil
		}
		if out.noChange && len(accepted) == 0 {
			return remaining(ReasonValidationFail, "validation fails and the fixer found no change to make")
		}
	}
}

// remainingStop stops with changes_remaining; when validation fails on the
// current candidate that is the reason that matters.
func (e *engine) remainingStop(reason string, failures []model.ValidationFailure, format string, args ...any) error {
	if len(failures) > 0 && (reason == ReasonBudget || reason == ReasonRepeatedFail) {
		return remaining(ReasonValidationFail, "validation still fails at %s (%s)", short(e.cp.CurrentHead), reason)
	}
	if format == "" {
		format = "early stop"
	}
	return remaining(reason, format, args...)
}

func (e *engine) remainingCycles() int {
	return e.cp.OriginalCycleBudget - len(e.cp.CycleAttempts)
}

func (e *engine) attemptFacts() []AttemptFacts {
	out := make([]AttemptFacts, len(e.cp.CycleAttempts))
	for i, a := range e.cp.CycleAttempts {
		out[i] = AttemptFacts{From: a.StartedFromHead, Outcome: a.Outcome}
	}
	return out
}

func (e *engine) acceptedFindings() []model.Finding {
	var out []model.Finding
	for _, d := range e.decisions {
		if d.Disposition == Accepted {
			out = append(out, d.Finding)
		}
	}
	return out
}

// checkAuthority is the update_pr target and grant check (section 2.11):
// the target must be the bound source, the expected old head must be what
// the source observed, and every grant must name a known mechanism on the
// exact repository and ref, with evidence. Anything else fails closed.
func (e *engine) checkAuthority() error {
	pub := e.inv.Publication
	if pub.Policy != "update_pr" {
		if len(pub.RemoteIterationGrants) > 0 {
			return blocked("missing_authority", "local_commit allows no remote-iteration grants")
		}
		return nil
	}
	pr, sb := pub.PullRequest, e.inv.Candidate.SourceBinding
	if pr == nil || sb == nil {
		return blocked("missing_authority", "update_pr needs a publication target and a source binding")
	}
	if pr.HeadRepository != sb.Repository || pr.HeadRef != sb.Ref {
		return blocked("missing_authority", "the publication target %s %s is not the bound source %s %s",
			pr.HeadRepository, pr.HeadRef, sb.Repository, sb.Ref)
	}
	if pr.ExpectedOldHeadSHA != sb.ObservedObjectID {
		return blocked("missing_authority", "expected_old_head_sha %s is not the source's observed head %s",
			pr.ExpectedOldHeadSHA, sb.ObservedObjectID)
	}
	if pr.BaseSHA != e.inv.Candidate.ComparisonBase.SHA {
		return blocked("missing_authority", "the target's base_sha %s is not the comparison base %s", pr.BaseSHA, e.inv.Candidate.ComparisonBase.SHA)
	}
	if !strings.HasPrefix(pr.HeadRef, "refs/heads/") {
		return blocked("missing_authority", "head_ref %q is not a fully qualified branch ref", pr.HeadRef)
	}
	if e.cfg.Remote == "" {
		return blocked("missing_authority", "no git remote reaches %s", pr.HeadRepository)
	}
	url, err := e.remoteURL()
	if err != nil || url != pr.HeadRepository {
		return blocked("missing_authority", "remote %q is %q, not the target %s", e.cfg.Remote, url, pr.HeadRepository)
	}
	for i, g := range pub.RemoteIterationGrants {
		if !knownGrantKinds[g.Kind] {
			return blocked("missing_authority", "grant %d (%s): unknown mechanism kind %q", i, g.MechanismID, g.Kind)
		}
		if g.Repository != pr.HeadRepository || g.Ref != pr.HeadRef {
			return blocked("missing_authority", "grant %d (%s) is for %s %s, not the target %s %s", i, g.MechanismID, g.Repository, g.Ref, pr.HeadRepository, pr.HeadRef)
		}
		if strings.TrimSpace(g.OriginOnlyEvidence) == "" {
			return blocked("missing_authority", "grant %d (%s) has no origin-only evidence", i, g.MechanismID)
		}
	}
	e.expectedRemote = pr.ExpectedOldHeadSHA
	e.remoteBefore = pr.ExpectedOldHeadSHA
	return nil
}

// knownGrantKinds are the origin-only mechanisms failpass knows. It runs
// none of them itself (every reviewer, validation and gate of the loop
// sees the local candidate), so a valid grant is recorded and never used.
var knownGrantKinds = map[string]bool{"ci_check": true, "hosted_review": true}

func (e *engine) remoteURL() (string, error) {
	return e.repo.RemoteURL(e.ctx, e.cfg.Remote)
}

// checkDrift rereads the base and (under update_pr) the remote head at a
// phase boundary. A moved base is recorded and the evidence bound to the
// old one dropped; a moved remote head blocks.
func (e *engine) checkDrift(where string) error {
	sha, err := e.repo.Commit(e.ctx, e.cp.ComparisonBase.Ref)
	if err != nil {
		return blocked("base_drift", "the comparison base %s cannot be read before %s: %v", e.cp.ComparisonBase.Ref, where, err)
	}
	if sha != e.cp.ComparisonBase.SHA {
		e.baseDrifts++
		e.logf("base %s moved %s -> %s before %s; evidence is rebuilt", e.cp.ComparisonBase.Ref, short(e.cp.ComparisonBase.SHA), short(sha), where)
		nb := loopdoc.BaseRef{Ref: e.cp.ComparisonBase.Ref, SHA: sha}
		e.cp.ComparisonBase = nb
		e.cp.BaseRevisionHistory = append(e.cp.BaseRevisionHistory, nb)
		e.cp.ValidationOutcomes = notYetRun(e.inv.Validation)
		e.evidenceHead = ""
		if err := e.save("establish_evidence", "rebuild evidence against the new base"); err != nil {
			return err
		}
		if e.baseDrifts > maxBaseDrifts {
			return blocked("base_drift", "the base moved %d times during the invocation", e.baseDrifts)
		}
		if _, err := e.repo.Git(e.ctx, "merge-base", sha, e.cp.CurrentHead); err != nil {
			return blocked("base_drift", "the new base %s shares no history with the head", short(sha))
		}
	}
	if e.inv.Publication.Policy == "update_pr" {
		observed, err := e.readRemote()
		if err != nil {
			return blocked("remote_advanced", "the remote head %s cannot be read before %s: %v", e.inv.Publication.PullRequest.HeadRef, where, err)
		}
		if observed != e.expectedRemote && observed == e.cp.CurrentHead && e.cp.CurrentHead != e.cp.InitialHead {
			// Our own head is already there: a publication that was cut off
			// after its push (kill -9) and is being resumed. The push is not
			// repeated; the readback is what counts.
			e.logf("the remote head %s is already this loop's head %s", e.inv.Publication.PullRequest.HeadRef, short(observed))
			e.expectedRemote = observed
		}
		if observed != e.expectedRemote {
			e.remoteAfter = observed
			return blocked("remote_advanced", "the remote head %s is %s, expected %s (read before %s)",
				e.inv.Publication.PullRequest.HeadRef, short(observed), short(e.expectedRemote), where)
		}
	}
	return nil
}

// maxBaseDrifts bounds how often evidence is rebuilt for a moving base.
const maxBaseDrifts = 3

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// jsonOf marshals v for a request's change_contract.
func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// logDir is where the loop keeps validation and attempt logs.
func (e *engine) logDir() string {
	d := filepath.Join(e.store.Dir, "logs")
	os.MkdirAll(d, logdir.Mode) // private, as every log folder is
	return d
}

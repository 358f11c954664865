package loop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/worktree"
)

// attemptOutcome is how one attempt ended when it did not stop the loop.
type attemptOutcome struct {
	committed bool // the candidate moved to a new commit
	noChange  bool // the fixer made no change
	rebuild   bool // the base moved before promotion: rebuild evidence
}

func (e *engine) attemptRef(seq int) string { return e.attemptPrefix + strconv.Itoa(seq) }

// attempt reserves one cycle and runs one transactional fix: a worktree
// from the exact current head, the fixer, the integrity check of
// everything outside the worktree, the card budget, validation, one
// commit whose parent is the head, then a verified fast-forward of the
// candidate. The cycle stays spent whatever happens.
func (e *engine) attempt(accepted []model.Finding, failures []model.ValidationFailure) (attemptOutcome, error) {
	head := e.cp.CurrentHead
	seq := len(e.cp.CycleAttempts) + 1
	ref := e.attemptRef(seq)
	var ids []string
	for _, f := range accepted {
		ids = append(ids, f.ID)
	}
	// Reserve: the preserved ref first, so the checkpoint never names a
	// ref that does not exist, then the interrupted attempt.
	if err := e.repo.UpdateRef(e.ctx, "failpass loop: reserve attempt", ref, head); err != nil {
		return attemptOutcome{}, err
	}
	a := loopdoc.CycleAttempt{Sequence: seq, StartedFromHead: head, Outcome: "interrupted", FindingID: strings.Join(ids, ",")}
	e.cp.CycleAttempts = append(e.cp.CycleAttempts, a)
	e.cp.PreservedFailedAttempts = append(e.cp.PreservedFailedAttempts, loopdoc.PreservedAttempt{AttemptRef: ref,
		Reason: "interrupted: attempt " + strconv.Itoa(seq) + " had not finished"})
	if err := e.save("fix", fmt.Sprintf("run the fixer for attempt %d from %s", seq, short(head))); err != nil {
		return attemptOutcome{}, err
	}
	if err := e.hook("attempt-reserved"); err != nil {
		return attemptOutcome{}, err
	}
	e.logf("attempt %d from %s (%d finding(s), %d validation failure(s))", seq, short(head), len(accepted), len(failures))

	w, err := worktree.Add(e.ctx, e.repo, head)
	if err != nil {
		return attemptOutcome{}, err
	}
	// Removed once: ids are reused, so a second removal could take
	// another run's worktree.
	wGone := false
	removeW := func() {
		if !wGone {
			w.Remove(e.ctx)
			wGone = true
		}
	}
	defer removeW()
	before, err := captureState(e.ctx, e.repo, w.Dir)
	if err != nil {
		return attemptOutcome{}, err
	}
	// The commit's identity is read before the fixer runs, from the
	// repository's configuration as the user left it.
	ident := e.identity()
	req := &model.FixRequest{SchemaVersion: model.RequestSchemaVersion, InvocationID: e.inv.InvocationID, Cycle: seq,
		HeadSHA: head, ComparisonBaseSHA: e.cp.ComparisonBase.SHA, Findings: accepted, ValidationFailures: failures,
		ChangeContract: jsonOf(e.inv.ChangeContract), Budget: e.fixBudget()}
	// The fixer runs contained as a card command is (rolePolicy): it
	// writes its worktree's files and its own private git repository
	// (roleGit: the candidate's history alone), reads nothing of the
	// user's but what the loop's settings grant, and has no network
	// unless granted. Where no containment can be built it runs without,
	// and the before/after capture below is what catches a write outside.
	_, dropGit, err := e.roleGit(w, head)
	if err != nil {
		return attemptOutcome{}, err
	}
	defer dropGit()
	view := e.rolePolicy(true, e.hist.objects())
	if e.cfg.unconfinedFixer {
		view = nil
	}
	fixer, done, ierr := e.confine(e.cfg.Fixer, "fixer", view)
	if ierr != nil {
		e.logf("attempt %d: MISSING LAYER: the fixer runs uncontained (%v); writes outside are detected, not prevented", seq, ierr)
	}
	// What the fixer left is read by failpass alone (attemptTree), never
	// by git through the worktree's git folder, which the fixer could
	// write: its tree is made only once the fixer returned.
	var tree *attemptTree
	defer func() {
		if tree != nil {
			tree.Close()
		}
	}()
	fix, ferr := model.FixIn(e.ctx, fixer, req, w.Dir, func() (model.FixTree, error) {
		t, err := newAttemptTree(e.ctx, e.repo, w, head)
		tree = t
		return t, err
	})
	done()
	if tree == nil {
		if tree, err = newAttemptTree(e.ctx, e.repo, w, head); err != nil {
			return attemptOutcome{}, err
		}
	}
	after, err := captureState(e.ctx, e.repo, w.Dir)
	if err != nil {
		return attemptOutcome{}, err
	}
	change := compareStates(before, after, e.branchRef, e.attemptPrefix)
	if len(change.candidate) > 0 || len(change.tree) > 0 {
		e.preserve(tree, ident, seq, "the fixer wrote outside its worktree")
		return attemptOutcome{}, blocked("candidate_integrity_failure", "attempt %d: the fixer changed %s",
			seq, strings.Join(append(change.candidate, change.tree...), "; "))
	}
	if err := e.ctx.Err(); err != nil {
		return attemptOutcome{}, err
	}
	var fe *filterError
	var fle *fileError
	switch {
	case errors.As(ferr, &fe):
		e.markFailed(seq, "fixer: "+ferr.Error())
		e.save("fix", "a person commits the change to "+fe.path)
		return attemptOutcome{}, blocked("operator_input_required", "attempt %d: %v", seq, fe)
	case errors.As(ferr, &fle):
		return attemptOutcome{}, e.fail(tree, ident, seq, "fixer: "+ferr.Error())
	case ferr != nil:
		var re *model.RefusedError
		if !errors.As(ferr, &re) {
			var ae *model.AdapterError
			if !errors.As(ferr, &ae) {
				return attemptOutcome{}, ferr
			}
		}
		return attemptOutcome{}, e.fail(tree, ident, seq, "fixer: "+ferr.Error())
	case !fix.Changed:
		return attemptOutcome{noChange: true}, e.fail(tree, ident, seq, fix.Reason)
	}
	// The tree to commit, validate and publish: failpass's own reading of
	// the worktree, fixed from here on.
	validated, err := tree.Build(e.ctx)
	if err != nil {
		if errors.As(err, &fe) {
			e.markFailed(seq, err.Error())
			e.save("fix", "a person commits the change to "+fe.path)
			return attemptOutcome{}, blocked("operator_input_required", "attempt %d: %v", seq, fe)
		}
		if errors.As(err, &fle) {
			return attemptOutcome{}, e.fail(tree, ident, seq, err.Error())
		}
		return attemptOutcome{}, err
	}
	if e.cfg.Card != nil {
		f, err := e.cfg.Card.CheckTree(e.ctx, e.repo, validated)
		if err != nil {
			return attemptOutcome{}, err
		}
		if f != nil {
			e.fail(tree, ident, seq, fmt.Sprintf("%s: %s", f.Rule, f.Reason))
			return attemptOutcome{}, blocked("scope_decision_required", "attempt %d would break the card's budget: %s: %s", seq, f.Rule, f.Reason)
		}
	}
	commit, err := tree.Commit(e.ctx, validated, ident, e.subject(seq, ""), e.body(ids, ""))
	if err != nil {
		return attemptOutcome{}, err
	}
	// The fixer's worktree is done with: validation runs in a fresh
	// checkout of the commit, so what it runs on is the commit's tree and
	// nothing the fixer left beside it (an ignored file, a process).
	removeW()
	if err := e.save("validate_and_commit", fmt.Sprintf("validate attempt %d", seq)); err != nil {
		return attemptOutcome{}, err
	}
	vw, err := worktree.Add(e.ctx, e.repo, commit)
	if err != nil {
		return attemptOutcome{}, err
	}
	outs, logs := e.runValidation(vw.Dir, "attempt-"+strconv.Itoa(seq), false)
	vw.Remove(e.ctx)
	for _, o := range outs {
		if o.Status == "unavailable" {
			e.failCommit(seq, commit, "validation unavailable: "+o.Name+": "+o.Reason)
			return attemptOutcome{}, blocked("validation_unavailable", "validation %q could not run in attempt %d: %s", o.Name, seq, o.Reason)
		}
	}
	for _, o := range outs {
		if o.Status == "failed" {
			return attemptOutcome{}, e.failCommit(seq, commit, "validation failed: "+o.Name+": "+o.Result)
		}
	}
	if err := e.verifyParent(commit, head); err != nil {
		return attemptOutcome{}, blocked("candidate_integrity_failure", "attempt %d: %v", seq, err)
	}
	e.validatedTrees[commit] = validated
	e.recordAttempt(seq, commit)
	if err := e.repo.UpdateRef(e.ctx, "failpass loop: attempt commit", ref, commit, head); err != nil {
		return attemptOutcome{}, err
	}
	if err := e.save("validate_and_commit", fmt.Sprintf("promote %s (attempt %d) to %s", short(commit), seq, e.inv.Candidate.Branch)); err != nil {
		return attemptOutcome{}, err
	}
	if err := e.hook("attempt-committed"); err != nil {
		return attemptOutcome{}, err
	}
	// Reread the base and the remote before touching the candidate.
	oldBase := e.cp.ComparisonBase.SHA
	if err := e.checkDrift("promotion"); err != nil {
		return attemptOutcome{}, err
	}
	if e.cp.ComparisonBase.SHA != oldBase {
		e.markFailed(seq, "stale base: the base moved before promotion; kept as an artifact")
		if err := e.save("establish_evidence", "rebuild evidence against the new base"); err != nil {
			return attemptOutcome{}, err
		}
		return attemptOutcome{rebuild: true}, nil
	}
	if err := e.checkValidated(commit); err != nil {
		return attemptOutcome{}, err
	}
	if err := promote(e.ctx, e.repo, e.inv.Candidate.Branch, head, commit, e.hook); errors.Is(err, errCrash) {
		return attemptOutcome{}, err
	} else if err != nil {
		return attemptOutcome{}, blocked("candidate_integrity_failure", "attempt %d could not be promoted: %v", seq, err)
	}
	if err := e.hook("attempt-promoted"); err != nil {
		return attemptOutcome{}, err
	}
	e.markCommitted(seq, commit)
	e.cp.ValidationOutcomes = outs
	e.validationLogs = logs
	e.evidenceHead, e.evidenceBase = commit, e.cp.ComparisonBase.SHA
	for _, f := range accepted {
		e.claimed = append(e.claimed, FindingKey(f))
	}
	if err := e.store.savePolicy(policyMemory{Passes: e.passes, Claimed: e.claimed}); err != nil {
		return attemptOutcome{}, err
	}
	e.logf("attempt %d committed %s", seq, short(commit))
	if err := e.save("invalidate_and_repeat", "review the new head "+short(commit)); err != nil {
		return attemptOutcome{}, err
	}
	return attemptOutcome{committed: true}, nil
}

// markCommitted turns attempt seq into a committed one: the head moves,
// and its preserved entry goes (it is no longer a failed attempt).
func (e *engine) markCommitted(seq int, commit string) {
	a := &e.cp.CycleAttempts[seq-1]
	a.Outcome, a.ResultingHead = "committed", commit
	ref := e.attemptRef(seq)
	kept := e.cp.PreservedFailedAttempts[:0]
	for _, p := range e.cp.PreservedFailedAttempts {
		if p.AttemptRef != ref {
			kept = append(kept, p)
		}
	}
	e.cp.PreservedFailedAttempts = kept
	e.cp.CurrentHead = commit
	e.cp.HeadHistory = append(e.cp.HeadHistory, commit)
}

// markFailed records attempt seq as failed with reason.
func (e *engine) markFailed(seq int, reason string) {
	e.cp.CycleAttempts[seq-1].Outcome = "failed"
	ref := e.attemptRef(seq)
	for i := range e.cp.PreservedFailedAttempts {
		if e.cp.PreservedFailedAttempts[i].AttemptRef == ref {
			e.cp.PreservedFailedAttempts[i].Reason = reason
		}
	}
}

// fail preserves the attempt's work on its ref, marks it failed and
// checkpoints; the candidate is untouched. It returns nil (the loop goes
// on) unless the checkpoint cannot be written.
func (e *engine) fail(t *attemptTree, ident []string, seq int, reason string) error {
	e.logf("attempt %d failed: %s", seq, reason)
	e.preserve(t, ident, seq, reason)
	e.markFailed(seq, reason)
	return e.save("fix", "decide whether to try again from "+short(e.cp.CurrentHead))
}

// failCommit is fail for an attempt already committed: its ref keeps the
// commit.
func (e *engine) failCommit(seq int, commit, reason string) error {
	e.logf("attempt %d failed: %s", seq, reason)
	e.repo.UpdateRef(e.ctx, "failpass loop: preserve failed attempt", e.attemptRef(seq), commit)
	e.markFailed(seq, reason)
	return e.save("fix", "decide whether to try again from "+short(e.cp.CurrentHead))
}

// preserve commits whatever the attempt's worktree holds (failpass's
// reading of it, attemptTree) onto its ref, so the failed work is never
// lost and never presented as the candidate. A tree that cannot be read
// or committed (a filtered path) is not preserved.
func (e *engine) preserve(t *attemptTree, ident []string, seq int, reason string) {
	tree, err := t.Build(e.ctx)
	if err != nil || tree == t.headTree {
		return
	}
	if c, err := t.Commit(e.ctx, tree, ident, e.subject(seq, reason), e.body(nil, reason)); err == nil {
		e.repo.UpdateRef(e.ctx, "failpass loop: preserve failed attempt", e.attemptRef(seq), c)
	}
}

// subject is an attempt commit's subject line.
func (e *engine) subject(seq int, failure string) string {
	s := fmt.Sprintf("failpass loop %s: attempt %d", e.inv.InvocationID, seq)
	if failure != "" {
		s += " (failed, preserved)"
	}
	return s
}

// body is an attempt commit's message body.
func (e *engine) body(ids []string, failure string) string {
	switch {
	case failure != "":
		return "Failed: " + failure
	case len(ids) == 0:
		return "Fixes validation failures."
	}
	return "Fixes findings: " + strings.Join(ids, ", ")
}

// identity is the environment that gives an attempt commit its author
// and committer: the repository's configured identity (git var, read
// before the fixer runs), else failpass's own, which says so.
func (e *engine) identity() []string {
	var env []string
	for _, who := range []string{"AUTHOR", "COMMITTER"} {
		out, err := e.repo.Git(e.ctx, "var", "GIT_"+who+"_IDENT")
		name, email, ok := parseIdent(string(out))
		if err != nil || !ok {
			return []string{"GIT_AUTHOR_NAME=failpass loop", "GIT_AUTHOR_EMAIL=failpass@localhost",
				"GIT_COMMITTER_NAME=failpass loop", "GIT_COMMITTER_EMAIL=failpass@localhost"}
		}
		env = append(env, "GIT_"+who+"_NAME="+name, "GIT_"+who+"_EMAIL="+email)
	}
	return env
}

// parseIdent reads `Name <email> 1700000000 +0000`.
func parseIdent(s string) (name, email string, ok bool) {
	s = strings.TrimSpace(s)
	lt, gt := strings.Index(s, "<"), strings.LastIndex(s, ">")
	if lt < 0 || gt < lt {
		return "", "", false
	}
	return strings.TrimSpace(s[:lt]), s[lt+1 : gt], true
}

// checkValidated is the last check before a commit is published (the
// candidate moved to it, or pushed): its tree must be the tree its
// validation ran on. Anything else publishes bytes nobody validated.
func (e *engine) checkValidated(commit string) error {
	want, ok := e.validatedTrees[commit]
	got, err := e.repo.Tree(e.ctx, commit)
	switch {
	case !ok:
		return blocked("candidate_integrity_failure", "%s was never validated: it is not published", short(commit))
	case err != nil || got != want:
		return blocked("candidate_integrity_failure", "the tree of %s is %s, not the tree %s its validation ran on: it is not published",
			short(commit), short(got), short(want))
	}
	return nil
}

// verifyParent checks commit has exactly one parent, head.
func (e *engine) verifyParent(commit, head string) error {
	out, err := e.repo.Git(e.ctx, "rev-list", "--parents", "-n", "1", commit)
	if err != nil {
		return err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 || f[1] != head {
		return fmt.Errorf("commit %s does not have exactly the pre-attempt head %s as its parent", short(commit), short(head))
	}
	return nil
}

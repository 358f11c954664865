package loop

import (
	"errors"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/worktree"
)

// packet builds the raw review packet for the current head and base:
// the complete base...head diff, the change contract, the validation
// evidence of this head, and nothing from earlier passes.
func (e *engine) packet() (*model.ReviewPacket, error) {
	head, base := e.cp.CurrentHead, e.cp.ComparisonBase
	diff, err := changeDiff(e.ctx, e.repo, base.SHA, head)
	if err != nil {
		return nil, err
	}
	if len(diff) == 0 {
		return nil, blocked("operator_input_required", "the candidate %s has no changes against the base %s", short(head), short(base.SHA))
	}
	tracked, err := e.trackedAt(head)
	if err != nil {
		return nil, err
	}
	cc := e.inv.ChangeContract
	p := &model.ReviewPacket{
		SchemaVersion: model.PacketSchemaVersion,
		Repository:    model.PacketRepo{Identity: e.inv.Repository.Identity, BaseBranch: base.Ref},
		Candidate: model.PacketCandidate{HeadSHA: head, ComparisonBaseSHA: base.SHA,
			Diff: model.PacketDiff{Format: "unified_diff", Complete: true, Content: string(diff)}},
		ChangeContract: model.ChangeContract{Goal: cc.Goal, AcceptanceCriteria: cc.AcceptanceCriteria,
			NonGoals: nonNil(cc.NonGoals), PreservedBehaviors: nonNil(cc.PreservedBehaviors)},
		Sources: model.Sources{
			RepositoryInstructions: sources(cc.Sources.RepositoryInstructions),
			NamedDocuments:         sources(cc.Sources.NamedDocuments),
			NearbyPatterns:         sources(cc.Sources.NearbyPatterns),
		},
		Worktree: &model.WorktreeState{Tracked: tracked, Staged: []string{}, Unstaged: []string{}, Untracked: []string{}, Ignored: []string{}},
	}
	for _, o := range e.cp.ValidationOutcomes {
		p.Validation = append(p.Validation, model.Validation{Name: o.Name, Command: o.Command, Scope: o.Scope,
			Status: o.Status, Result: o.Result, Reason: o.Reason})
	}
	return p, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sources(in []loopdoc.SourceRef) []model.Source {
	out := []model.Source{}
	for _, s := range in {
		src := model.Source{Label: s.Label, Location: s.Location}
		if s.Summary != nil {
			src.Summary = *s.Summary
		}
		out = append(out, src)
	}
	return out
}

// trackedAt lists the files of commit.
func (e *engine) trackedAt(commit string) ([]string, error) {
	return e.repo.Files(e.ctx, commit)
}

// review runs one fresh review pass on the current head and decides its
// findings. The reviewer is a new process with a new snapshot of the exact
// head as its working folder, in a sandbox.View in which the user's
// checkouts and the git common dir are read-only, the loop's documents
// and attempt refs hidden, and the snapshot an overlay whose writes are
// captured and thrown away (or, in a Landlock-only view, a throwaway
// worktree whose changes the status comparison below finds). HEAD, refs, index, config and every checkout's files are
// captured before and after as well. The pass is recorded in the
// checkpoint whatever its outcome; a pass that cannot certify anything
// stops the loop.
func (e *engine) review() (*model.ReviewResult, error) {
	p, err := e.packet()
	if err != nil {
		return nil, err
	}
	reviewer, independence, identity := e.cfg.Reviewer, "fresh_subagent", e.cfg.ReviewerID
	if e.inv.ReviewExecution.Mode == "in_agent_override" {
		// The override names who allowed the fixer's adapter to review.
		reviewer, independence, identity = e.cfg.Fixer, "in_agent_override", e.cfg.FixerID+" (in-agent override by "+e.inv.ReviewExecution.OverrideAuthorization+")"
	}
	seq := e.lastPassSeq + 1
	for _, r := range e.cp.ReviewRecords {
		if r.Sequence >= seq {
			seq = r.Sequence + 1
		}
	}
	e.lastPassSeq = seq
	rec := loopdoc.ReviewRecord{Sequence: seq, HeadSHA: p.Candidate.HeadSHA, ComparisonBaseSHA: p.Candidate.ComparisonBaseSHA,
		ReviewIndependence: independence, ReviewerIdentity: fmt.Sprintf("%s pass %d", identity, seq),
		WriteIsolation: "enforced", AggregateVerdict: model.VerdictBlocked, IntegrityEvidence: "surface_only"}
	if err := e.save("review", fmt.Sprintf("review pass %d of %s", seq, short(p.Candidate.HeadSHA))); err != nil {
		return nil, err
	}
	e.logf("review pass %d of %s by %s", seq, short(p.Candidate.HeadSHA), identity)

	w, err := worktree.Add(e.ctx, e.repo, p.Candidate.HeadSHA)
	if err != nil {
		return nil, err
	}
	defer w.Remove(e.ctx)
	// The reviewer runs contained as a card command is (rolePolicy),
	// with a private repository of the candidate's history (roleGit):
	// nothing from earlier passes (the loop's documents and logs, the
	// attempt refs), no other branch and nothing of the user's reaches
	// it. Its snapshot is a throwaway checkout; any write to it is found
	// below and voids the pass.
	_, dropGit, err := e.roleGit(w, p.Candidate.HeadSHA)
	if err != nil {
		return nil, err
	}
	defer dropGit()
	view := e.rolePolicy(false, e.hist.objects())
	before, err := captureState(e.ctx, e.repo, w.Dir)
	if err != nil {
		return nil, err
	}
	a, done, ierr := e.confine(reviewer, "reviewer", view)
	if ierr != nil {
		// The reviewer never runs: no real read-only view, no review.
		rec.AggregateVerdict = model.VerdictBlocked
		e.cp.ReviewRecords = append(e.cp.ReviewRecords, rec)
		e.save("review", "provide a read-only mount capability")
		return nil, blocked("missing_capability", "write isolation cannot be enforced: %v", ierr)
	}
	if !model.Local(a) {
		// An endpoint reviewer has no filesystem to write with: its tool
		// surface is the isolation (the design's second control). The
		// before/after capture below still runs.
		e.logf("review pass %d: %s has no files of this machine to write; it runs without a view", seq, identity)
	}
	res, rerr := model.Review(e.ctx, a, p, w.Dir, e.cfg.Lenses)
	done()
	after, err := captureState(e.ctx, e.repo, w.Dir)
	if err != nil {
		return nil, err
	}
	change := compareStates(before, after, e.branchRef, e.attemptPrefix)
	rec.ObservedRefChanges = change.otherRefs
	// What the reviewer wrote in its snapshot, found by failpass's own
	// reading of it (stat against the checkout it made), never by git
	// run there: a fifo the reviewer left where git reads ignore rules
	// would hang a git status.
	if written, err := snapshotWrites(w, p.Candidate.HeadSHA); err != nil {
		return nil, err
	} else if len(written) > 0 {
		if len(written) > 5 {
			written = append(written[:5], "...")
		}
		rec.MutationAttempts = append(rec.MutationAttempts, "changed the snapshot's files: "+strings.Join(written, ", "))
	}
	rec.MutationAttempts = append(rec.MutationAttempts, change.tree...)
	if len(change.candidate) > 0 {
		rec.MutationAttempts = append(rec.MutationAttempts, change.candidate...)
	}
	if len(rec.MutationAttempts) > 0 && len(change.candidate) == 0 {
		rec.WriteIsolation = "violated"
	}
	if res != nil {
		rec.AggregateVerdict = res.Verdict
	}
	switch {
	case len(change.candidate) > 0:
		e.cp.ReviewRecords = append(e.cp.ReviewRecords, rec)
		e.save("review", "inspect the candidate: it changed during a review")
		return nil, blocked("candidate_integrity_failure", "the candidate changed during review pass %d: %s", seq, strings.Join(change.candidate, "; "))
	case len(rec.MutationAttempts) > 0:
		rec.AggregateVerdict = model.VerdictBlocked
		e.cp.ReviewRecords = append(e.cp.ReviewRecords, rec)
		e.save("review", "inspect the reviewer's attempted writes")
		return nil, blocked("reviewer_integrity_failure", "review pass %d attempted to write: %s", seq, strings.Join(rec.MutationAttempts, "; "))
	case rerr != nil:
		rec.AggregateVerdict = model.VerdictBlocked
		e.cp.ReviewRecords = append(e.cp.ReviewRecords, rec)
		e.save("review", "provide a reviewer that returns a valid, current review")
		var re *model.RefusedError
		if errors.As(rerr, &re) {
			return nil, blocked("missing_capability", "review pass %d was refused: %v", seq, rerr)
		}
		return nil, blocked("missing_capability", "review pass %d could not run: %v", seq, rerr)
	}
	// A usable review: decide its findings.
	if err := e.decide(res, &rec); err != nil {
		return nil, err
	}
	e.cp.ReviewRecords = append(e.cp.ReviewRecords, rec)
	next := "fix the accepted findings"
	if res.Verdict == model.VerdictClean {
		next = "publish and return"
	}
	if err := e.save("decide", next); err != nil {
		return nil, err
	}
	return res, nil
}

// snapshotWrites lists the paths a reviewer changed in its snapshot w of
// head (worktree.Changed: by stat, and content where the checkout was
// racy), its .git file aside (failpass rewrote it). Where the file
// system's times are too coarse to tell, every file that is not as head
// has it is found by reading it (attemptTree's reading, which runs no
// git in the snapshot either).
func snapshotWrites(w *worktree.Worktree, head string) ([]string, error) {
	now, err := w.Snapshot()
	if err != nil {
		return []string{"the snapshot (unreadable: " + err.Error() + ")"}, nil
	}
	paths, ok, err := w.Changed(head, now)
	if err != nil {
		return nil, err
	}
	if ok {
		return paths, nil
	}
	return nil, errors.New("the reviewer's snapshot cannot be compared: file times too coarse")
}

// decide fills rec's finding dispositions, with the built-in policy or the
// external decider, and remembers the pass for the early stops.
func (e *engine) decide(res *model.ReviewResult, rec *loopdoc.ReviewRecord) error {
	e.decisions = nil
	if res.Verdict == model.VerdictClean {
		// A clean review may still carry recommendations; they are left to
		// the operator, never fixed on the way to convergence.
		for _, f := range res.Findings {
			e.decisions = append(e.decisions, Decision{Finding: f, Disposition: Deferred,
				Rationale: "the review is clean; a non-blocking " + f.Severity + " is left to the operator"})
		}
	} else if len(res.Findings) > 0 {
		tracked, err := e.trackedAt(e.cp.CurrentHead)
		if err != nil {
			return err
		}
		files := set(tracked)
		if e.cfg.Decider != nil {
			// The decider sees no files of the repository (an empty folder
			// of its own), contained as the other roles are where the
			// machine allows (it only reads findings: without containment
			// it runs as before); its process group is recorded like
			// theirs.
			decider, done, _ := e.confine(e.cfg.Decider, "decider", e.rolePolicy(false))
			ds, err := model.Decide(e.ctx, decider, &model.DecideRequest{SchemaVersion: model.RequestSchemaVersion,
				Findings: res.Findings, ChangeContract: jsonOf(e.inv.ChangeContract), Budget: e.fixBudget()})
			done()
			if err != nil {
				return blocked("missing_capability", "the decider failed: %v", err)
			}
			byID := map[string]model.Disposition{}
			for _, d := range ds {
				byID[d.FindingID] = d
			}
			// The decider may only narrow: a finding it accepts must still
			// pass the built-in evidence and scope checks.
			for _, d := range DecideBuiltin(res.Findings, files, e.scope) {
				x := byID[d.Finding.ID]
				if x.Disposition != Accepted || d.Disposition != Accepted {
					if x.Disposition == Accepted {
						x.Disposition, x.Rationale = d.Disposition, "decider accepted, but "+d.Rationale
					}
					d.Disposition, d.Rationale = x.Disposition, x.Rationale
				}
				d.Rationale = "decider: " + d.Rationale
				e.decisions = append(e.decisions, d)
			}
		} else {
			e.decisions = DecideBuiltin(res.Findings, files, e.scope)
		}
	}
	var material []string
	for _, d := range e.decisions {
		rec.FindingDispositions = append(rec.FindingDispositions, loopdoc.FindingDisposition{
			FindingID: d.Finding.ID, Disposition: d.Disposition, Rationale: d.Rationale})
		if d.Disposition == Accepted {
			material = append(material, FindingKey(d.Finding))
		}
	}
	e.passes = append(e.passes, Pass{Head: e.cp.CurrentHead, Material: material, ClaimedFixed: e.claimed})
	e.claimed = nil
	return e.store.savePolicy(policyMemory{Passes: e.passes})
}

// scope is the allowed remediation scope: the card's (not denied, not an
// oracle file) or, without a card, the files the candidate already
// changes against the initial base.
func (e *engine) scope(p string) string {
	if e.cfg.Card != nil {
		return e.cfg.Card.Outside(p)
	}
	if e.candidateFiles == nil {
		e.candidateFiles = map[string]bool{}
		base := e.cp.BaseRevisionHistory[0].SHA
		out, err := e.repo.Git(e.ctx, "diff", "--name-only", "-z", "--no-renames", base+"..."+e.cp.InitialHead, "--")
		if err == nil {
			for _, f := range strings.Split(string(out), "\x00") {
				if f != "" {
					e.candidateFiles[f] = true
				}
			}
		}
	}
	if e.candidateFiles[p] {
		return ""
	}
	return "is not among the files the candidate changes"
}

// fixBudget is what a fixer or decider is told it may spend.
func (e *engine) fixBudget() model.FixBudget {
	b := model.FixBudget{RemainingCycles: e.remainingCycles()}
	if e.cfg.Card != nil {
		eb := e.cfg.Card.Scope.Budget
		mf, ml := eb.MaxFiles, eb.MaxChangedLines
		b.MaxFiles, b.MaxChangedLines, b.DenyGlobs, b.ProtectedPaths = &mf, &ml, eb.DenyGlobs, e.cfg.Card.Scope.Oracle
	}
	return b
}

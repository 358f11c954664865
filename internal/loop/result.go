package loop

import (
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/loopdoc"
)

// finish writes the return checkpoint (when persist), builds the terminal
// result, validates it against that checkpoint, and writes it. A result
// that does not validate is an internal error, never returned.
func (e *engine) finish(s *stop, persist bool) (*Outcome, error) {
	if s.detail != "" {
		e.logf("%s/%s: %s", s.state, s.reason, s.detail)
	}
	if persist && s.state != "converged" {
		e.rereadBaseAtReturn()
	}
	e.refreshSource()
	next := "none: the invocation returned " + s.state
	if s.reason != "" {
		next += "/" + s.reason
	}
	if persist {
		if err := e.save("return", next); err != nil {
			return nil, err
		}
	} else {
		e.cp.CurrentPhase, e.cp.ExpectedNextAction = "return", next
		_, doc, err := checkCheckpoint(e.invDoc, e.cp)
		if err != nil {
			return nil, err
		}
		e.cpDoc = doc
	}
	tr := e.terminal(s)
	data, err := checkTerminal(e.cpDoc, tr)
	if err != nil {
		return nil, fmt.Errorf("loop: internal error: the terminal result does not validate: %w", err)
	}
	if persist {
		if err := e.store.write(terminalFile, data); err != nil {
			return nil, err
		}
	}
	return &Outcome{Result: tr, JSON: data, Persisted: persist, Dir: e.store.Dir, Containment: e.containment}, nil
}

// rereadBaseAtReturn rereads the base before returning: a moved base is
// recorded, and the validation evidence bound to the old one dropped, so
// the result never presents stale evidence as current. (A converged
// result reread it at publication, just before.)
func (e *engine) rereadBaseAtReturn() {
	sha, err := e.repo.Commit(e.ctx, e.cp.ComparisonBase.Ref)
	if err != nil || sha == e.cp.ComparisonBase.SHA {
		return
	}
	nb := loopdoc.BaseRef{Ref: e.cp.ComparisonBase.Ref, SHA: sha}
	e.cp.ComparisonBase = nb
	e.cp.BaseRevisionHistory = append(e.cp.BaseRevisionHistory, nb)
	e.cp.ValidationOutcomes = notYetRun(e.inv.Validation)
	e.logf("base %s moved to %s before return; its evidence is not current", nb.Ref, short(sha))
}

// refreshSource records the last verified remote head under update_pr.
func (e *engine) refreshSource() {
	if e.cp.Source.Status != "bound" {
		return
	}
	final := e.expectedRemote
	if e.remoteAfter != "" {
		final = e.remoteAfter
	}
	if final == "" {
		return
	}
	ahead, behind := e.counts(final)
	e.cp.Source.LastVerifiedHead = final
	e.cp.Source.AheadBy, e.cp.Source.BehindBy = &ahead, &behind
}

// counts are the candidate's commits ahead of and behind the remote head
// remote. The remote object is fetched into failpass's own namespace when
// it is not here yet; if it still cannot be read, the remote is counted as
// one commit ahead (behind_by 1): unknown work exists there.
func (e *engine) counts(remote string) (ahead, behind int) {
	head := e.cp.CurrentHead
	if _, err := e.repo.Git(e.ctx, "cat-file", "-e", remote+"^{commit}"); err != nil && e.cfg.Remote != "" {
		e.repo.Git(e.ctx, "fetch", "--no-tags", "--no-write-fetch-head", "--", e.cfg.Remote,
			"+"+e.inv.Publication.PullRequest.HeadRef+":refs/failpass/remotes/"+e.inv.InvocationID)
	}
	out, err := e.repo.Git(e.ctx, "rev-list", "--left-right", "--count", head+"..."+remote)
	if err != nil {
		return len(e.cp.HeadHistory) - 1, 1
	}
	fmt.Sscan(string(out), &ahead, &behind)
	return ahead, behind
}

// terminal builds the terminal result from the checkpoint: everything in
// it is derived from the checkpoint, so it validates against it.
func (e *engine) terminal(s *stop) *loopdoc.TerminalResult {
	cp := e.cp
	created := append([]string{}, cp.HeadHistory[1:]...)
	consumed := len(cp.CycleAttempts)
	tr := &loopdoc.TerminalResult{
		SchemaVersion: loopdoc.SchemaVersion,
		InvocationID:  cp.InvocationID,
		TerminalState: s.state,
		Reason:        s.reason,
		Budget: loopdoc.Budget{OriginalMaxFixCycles: cp.OriginalCycleBudget, ConsumedCycles: consumed,
			RemainingCycles: cp.OriginalCycleBudget - consumed},
		ResumeStatus:                 "not_resumed",
		Repository:                   cp.Repository,
		Branch:                       cp.Branch,
		Worktree:                     cp.Worktree,
		PullRequest:                  cp.PullRequest,
		Head:                         loopdoc.HeadPair{Initial: cp.InitialHead, Final: cp.CurrentHead},
		ComparisonBase:               loopdoc.BasePair{Initial: cp.BaseRevisionHistory[0], Final: cp.ComparisonBase},
		HeadHistory:                  cp.HeadHistory,
		BaseRevisionHistory:          cp.BaseRevisionHistory,
		ReviewRecords:                cp.ReviewRecords,
		ValidationSummary:            cp.ValidationOutcomes,
		CreatedCommits:               created,
		PreservedFailedAttempts:      cp.PreservedFailedAttempts,
		FindingDispositions:          []loopdoc.ResultDisposition{},
		UnresolvedOrDeferredFindings: []string{},
	}
	if e.resumed {
		tr.ResumeStatus = "resumed"
	}
	// The initial comparison base keeps its first ref name.
	tr.ComparisonBase.Initial = cp.BaseRevisionHistory[0]
	if cp.Source.Status == "bound" {
		tr.Source = loopdoc.ResultSource{Status: "bound", InitialHead: e.inv.Candidate.SourceBinding.ObservedObjectID,
			FinalHead: cp.Source.LastVerifiedHead, AheadBy: cp.Source.AheadBy, BehindBy: cp.Source.BehindBy}
	} else {
		tr.Source = loopdoc.ResultSource{Status: "unavailable", UnavailableReason: cp.Source.UnavailableReason +
			"; divergence from any remote and unpushed commits could not be determined against a source"}
	}
	status := PublicationStatus(cp.Publication.Policy, s.state, s.reason, e.published)
	tr.Publication = loopdoc.ResultPublication{Policy: cp.Publication.Policy, Status: status}
	if cp.Publication.Policy == "update_pr" {
		tr.Publication.RemoteHeadBefore = e.remoteBefore
		tr.Publication.RemoteHeadAfter = e.remoteAfter
	}
	if status != "published" {
		tr.UnpushedCommits = created
	} else {
		tr.UnpushedCommits = []string{}
	}
	tr.AcceptanceReconciliationRequired = cp.InitialHead != cp.CurrentHead || cp.BaseRevisionHistory[0] != cp.ComparisonBase
	tr.FindingDispositions, tr.UnresolvedOrDeferredFindings = e.resultDispositions()
	action := OperatorAction(s.state, s.reason, cp.Publication.Policy, cp.Branch, len(created))
	if s.detail != "" && s.state != "converged" {
		action += " (" + s.detail + ")"
	}
	tr.OperatorAction = action
	return tr
}

// resultDispositions derives the terminal vocabulary from the checkpoint:
// a finding a committed attempt fixed is selected with that commit;
// findings a pass rejected or deferred are declined; findings of the
// newest pass that no commit fixed are unresolved.
func (e *engine) resultDispositions() ([]loopdoc.ResultDisposition, []string) {
	out := []loopdoc.ResultDisposition{}
	unresolved := []string{}
	fixed := map[string]string{} // "<pass seq>/<finding id>" -> commit
	recs := e.cp.ReviewRecords
	// An attempt fixes findings of the newest pass before it.
	for _, a := range e.cp.CycleAttempts {
		if a.Outcome != "committed" || a.FindingID == "" {
			continue
		}
		seq := 0
		for _, r := range recs {
			if r.HeadSHA == a.StartedFromHead {
				seq = r.Sequence
			}
		}
		for _, id := range strings.Split(a.FindingID, ",") {
			fixed[fmt.Sprintf("%d/%s", seq, id)] = a.ResultingHead
			out = append(out, loopdoc.ResultDisposition{FindingID: id, Disposition: "selected",
				Rationale: fmt.Sprintf("accepted in review pass %d and fixed by attempt %d", seq, a.Sequence), FixCommitSHA: a.ResultingHead})
		}
	}
	for i, r := range recs {
		for _, d := range r.FindingDispositions {
			switch d.Disposition {
			case Rejected, Deferred:
				out = append(out, loopdoc.ResultDisposition{FindingID: d.FindingID, Disposition: "declined",
					Rationale: fmt.Sprintf("review pass %d: %s: %s", r.Sequence, d.Disposition, d.Rationale)})
			}
			if i == len(recs)-1 && fixed[fmt.Sprintf("%d/%s", r.Sequence, d.FindingID)] == "" {
				unresolved = append(unresolved, fmt.Sprintf("%s (review pass %d, %s): %s", d.FindingID, r.Sequence, d.Disposition, d.Rationale))
			}
		}
	}
	return out, unresolved
}

// Summary is the short human form of a terminal result: state, reason,
// cycles, commits and the operator's next step.
func Summary(tr *loopdoc.TerminalResult) string {
	var b strings.Builder
	state := tr.TerminalState
	if tr.Reason != "" {
		state += "/" + tr.Reason
	}
	fmt.Fprintf(&b, "LOOP: %s\n", strings.ToUpper(state[:1])+state[1:])
	fmt.Fprintf(&b, "invocation: %s (%s)\n", tr.InvocationID, tr.ResumeStatus)
	fmt.Fprintf(&b, "branch: %s %s -> %s\n", tr.Branch, short(tr.Head.Initial), short(tr.Head.Final))
	fmt.Fprintf(&b, "cycles: %d of %d used, %d left\n", tr.Budget.ConsumedCycles, tr.Budget.OriginalMaxFixCycles, tr.Budget.RemainingCycles)
	fmt.Fprintf(&b, "commits created: %d", len(tr.CreatedCommits))
	for _, c := range tr.CreatedCommits {
		fmt.Fprintf(&b, " %s", short(c))
	}
	fmt.Fprintf(&b, "\npublication: %s (%s)\n", tr.Publication.Status, tr.Publication.Policy)
	for _, p := range tr.PreservedFailedAttempts {
		fmt.Fprintf(&b, "preserved attempt: %s: %s\n", p.AttemptRef, p.Reason)
	}
	fmt.Fprintf(&b, "next: %s\n", tr.OperatorAction)
	return b.String()
}

package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/worktree"
)

// Resume continues invocation id from its checkpoint after reconciling it
// with live git (section 2.8): same id, no other lock holder, a checkpoint
// that validates against its invocation, a clean candidate, and live head
// and base that match the checkpoint. It makes two repairs. An attempt
// interrupted between promotion and checkpoint: when the live head is
// exactly that attempt's preserved commit, whose parent is the
// checkpoint's head, the commit is recorded instead of lost. And a
// promotion cut between its two steps (finishCutPromotion) is finished.
// Anything else that does not match is blocked/checkpoint_mismatch (or
// candidate_integrity_failure for an ambiguous interrupted attempt), with
// every document and the candidate left as they are. Role processes a
// dead run left behind are killed first (reapRoles).
func Resume(ctx context.Context, repo *gitx.Repo, id string, cfg Config) (*Outcome, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	st := StoreFor(repo.CommonDir, id)
	if !st.Exists() {
		return nil, &InputError{Msg: fmt.Sprintf("no loop %q in %s", id, repo.CommonDir), Hint: "'failpass loop status' lists the loops of this repository"}
	}
	inv, _, err := st.LoadInvocation()
	if err != nil {
		return nil, err
	}
	_, invDoc, err := checkInvocation(inv)
	if err != nil {
		return nil, err
	}
	e := newEngine(ctx, repo, inv, invDoc, cfg)
	e.resumed = true
	if tr, data, err := st.LoadTerminal(); err == nil {
		// Already returned: the result stands; nothing runs again.
		return &Outcome{Result: tr, JSON: data, Persisted: true, Dir: st.Dir}, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	cp, _, err := st.LoadCheckpoint()
	if err != nil {
		return nil, err
	}
	e.cp = cp
	_, cpDoc, cerr := checkCheckpoint(invDoc, cp)
	if cerr != nil {
		// The checkpoint does not belong to this invocation: report, touch
		// nothing. The result must still validate against a checkpoint,
		// so it is built against this one as read.
		data, doc, err := toDoc(cp)
		if err != nil {
			return nil, err
		}
		_ = data
		e.cpDoc = doc
		return e.finishUnpersisted(blocked("checkpoint_mismatch", "the checkpoint does not match its invocation: %v", cerr))
	}
	e.cpDoc = cpDoc
	locks, lerr := e.lock()
	if errors.Is(lerr, ErrBusy) {
		return e.finishUnpersisted(blocked("candidate_busy", "%v", lerr))
	}
	if lerr != nil {
		return nil, lerr
	}
	defer locks.Release()
	e.reapRoles()
	mem := st.loadPolicy()
	e.passes, e.claimed = mem.Passes, mem.Claimed
	if s := e.reconcile(); s != nil {
		return e.finishUnpersisted(s)
	}
	// Leftover worktrees of the dead run go (ours only, dead owners only).
	worktree.GC(ctx, repo)
	e.logf("resumed %s at %s, %d of %d cycles used", id, short(e.cp.CurrentHead), len(e.cp.CycleAttempts), e.cp.OriginalCycleBudget)
	return e.run()
}

// finishUnpersisted returns a result without writing anything.
func (e *engine) finishUnpersisted(s *stop) (*Outcome, error) {
	// The result describes the checkpoint as held in memory (reconcile may
	// have recorded a recovered commit before a later check failed).
	if _, doc, err := toDoc(e.cp); err == nil {
		if vs, err := loopdoc.ValidateDocument(loopdoc.KindCheckpoint, doc); err == nil && len(vs) == 0 {
			e.cpDoc = doc
		}
	}
	tr := e.terminal(s)
	if e.resumed {
		tr.ResumeStatus = "resume_unavailable"
	}
	data, err := checkTerminal(e.cpDoc, tr)
	if err != nil {
		return nil, fmt.Errorf("loop: internal error: the terminal result does not validate: %w", err)
	}
	e.logf("%s/%s: %s", s.state, s.reason, s.detail)
	return &Outcome{Result: tr, JSON: data, Persisted: false, Dir: e.store.Dir}, nil
}

// reconcile compares the checkpoint with live git.
func (e *engine) reconcile() *stop {
	cp := e.cp
	live, err := branchHead(e.ctx, e.repo, cp.Branch)
	if err != nil {
		return blocked("checkpoint_mismatch", "the candidate branch %s cannot be read: %v", cp.Branch, err)
	}
	if base, err := e.repo.Commit(e.ctx, cp.ComparisonBase.Ref); err != nil || base != cp.ComparisonBase.SHA {
		return blocked("checkpoint_mismatch", "the base %s is %s live, %s in the checkpoint", cp.ComparisonBase.Ref, short(base), short(cp.ComparisonBase.SHA))
	}
	n := len(cp.CycleAttempts)
	if live != cp.CurrentHead {
		if n == 0 || cp.CycleAttempts[n-1].Outcome != "interrupted" {
			return blocked("checkpoint_mismatch", "the branch %s is at %s, the checkpoint says %s", cp.Branch, short(live), short(cp.CurrentHead))
		}
		// An attempt was interrupted. Accept only its own commit, uniquely
		// identified: the attempt ref points at the live head and its one
		// parent is the checkpoint's head.
		ref := e.attemptRef(n)
		out, err := e.repo.Git(e.ctx, "rev-parse", "--verify", "--end-of-options", ref)
		if err != nil || strings.TrimSpace(string(out)) != live || e.verifyParent(live, cp.CurrentHead) != nil {
			return blocked("candidate_integrity_failure", "the branch %s is at %s, which is not the interrupted attempt %d's commit on %s", cp.Branch, short(live), n, short(cp.CurrentHead))
		}
		e.markCommitted(n, live)
		// The recovered attempt fixed the newest pass's accepted findings.
		if len(e.passes) > 0 {
			e.claimed = e.passes[len(e.passes)-1].Material
		}
		e.logf("recovered attempt %d's commit %s", n, short(live))
	} else if n > 0 && cp.CycleAttempts[n-1].Outcome == "interrupted" {
		c, err := e.finishCutPromotion(n)
		if err != nil {
			return blocked("candidate_integrity_failure", "attempt %d's promotion cannot be finished: %v", n, err)
		}
		if c != "" {
			live = c
			e.markCommitted(n, c)
			if len(e.passes) > 0 {
				e.claimed = e.passes[len(e.passes)-1].Material
			}
			e.logf("finished attempt %d's promotion to %s", n, short(c))
		} else {
			cp.PreservedFailedAttempts[len(cp.PreservedFailedAttempts)-1].Reason = fmt.Sprintf("interrupted: attempt %d did not finish; the cycle stays spent", n)
		}
	}
	if err := e.checkClean(); err != nil {
		return blocked("checkpoint_mismatch", "%v", err)
	}
	if err := e.checkRemoteOnResume(); err != nil {
		return err
	}
	if live != e.cp.CurrentHead {
		return blocked("candidate_integrity_failure", "the recovered head does not match")
	}
	// Evidence from before the interruption is not trusted.
	e.cp.ValidationOutcomes = notYetRun(e.inv.Validation)
	if err := e.save("establish_evidence", "re-establish evidence for "+short(e.cp.CurrentHead)); err != nil {
		return blocked("checkpoint_mismatch", "the reconciled checkpoint does not validate: %v", err)
	}
	return nil
}

// finishCutPromotion finishes attempt n's promotion when the loop was cut
// between the checkout's update and the branch's move. It acts only on
// what the checkpoint and git both prove: the checkpoint's next action is
// the promotion of the commit on attempt n's ref, that commit's one parent
// is the checkpoint's head, and the checkout is exactly that promotion's
// first step done (finishPromotion). It returns the commit the branch was
// moved to, or "" when the state is not that one (nothing changed).
func (e *engine) finishCutPromotion(n int) (string, error) {
	cp := e.cp
	c, err := e.repo.Commit(e.ctx, e.attemptRef(n))
	if err != nil {
		return "", nil
	}
	if c == cp.CurrentHead || cp.CurrentPhase != "validate_and_commit" ||
		!strings.HasPrefix(cp.ExpectedNextAction, "promote "+short(c)+" ") || e.verifyParent(c, cp.CurrentHead) != nil {
		return "", nil
	}
	ok, err := finishPromotion(e.ctx, e.repo, cp.Branch, cp.CurrentHead, c)
	if err != nil || !ok {
		return "", err
	}
	return c, nil
}

// checkClean requires the candidate's checkout, if any, to be clean and at
// the head.
func (e *engine) checkClean() error {
	wts, err := listWorktrees(e.ctx, e.repo)
	if err != nil {
		return err
	}
	for _, w := range wts {
		if w.branch == e.branchRef {
			if err := verifyCheckout(e.ctx, w.path, e.cp.CurrentHead); err != nil {
				return fmt.Errorf("the checkout %s: %v", w.path, err)
			}
		}
	}
	return nil
}

func (e *engine) checkRemoteOnResume() *stop {
	if e.inv.Publication.Policy != "update_pr" {
		return nil
	}
	if err := e.checkAuthority(); err != nil {
		var s *stop
		if errors.As(err, &s) {
			return s
		}
		return blocked("missing_authority", "%v", err)
	}
	return nil
}

// Status is what `loop status` shows of one loop.
type Status struct {
	ID         string                  `json:"invocation_id"`
	Dir        string                  `json:"dir"`
	Checkpoint *loopdoc.Checkpoint     `json:"checkpoint,omitempty"`
	Terminal   *loopdoc.TerminalResult `json:"terminal_result,omitempty"`
	Err        string                  `json:"error,omitempty"`
}

// List returns the status of every loop of the repository, by id.
func List(repo *gitx.Repo) ([]Status, error) {
	ents, err := os.ReadDir(repo.StateDir("loops"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, ent := range ents {
		if !ent.IsDir() || CheckID(ent.Name()) != nil {
			continue
		}
		out = append(out, Load(repo, ent.Name()))
	}
	return out, nil
}

// Load reads one loop's documents for status.
func Load(repo *gitx.Repo, id string) Status {
	st := StoreFor(repo.CommonDir, id)
	s := Status{ID: id, Dir: st.Dir}
	if tr, _, err := st.LoadTerminal(); err == nil {
		s.Terminal = tr
	}
	cp, _, err := st.LoadCheckpoint()
	if err != nil {
		s.Err = err.Error()
	}
	s.Checkpoint = cp
	return s
}

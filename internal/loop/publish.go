package loop

// readRemote reads the update_pr target's head from the remote.
func (e *engine) readRemote() (string, error) {
	return e.repo.RemoteHead(e.ctx, e.cfg.Remote, e.inv.Publication.PullRequest.HeadRef)
}

// publish ends a converged loop. local_commit writes nothing anywhere.
// update_pr rereads the base and the remote head, proves the local head
// descends from the expected old head, pushes once with an expected-old
// lease (fast-forward only: the refspec is not forced), and reads the ref
// back. A lost race is blocked/remote_advanced; nothing is overwritten.
func (e *engine) publish() error {
	if err := e.save("publish", "publish the converged head"); err != nil {
		return err
	}
	oldBase := e.cp.ComparisonBase.SHA
	if err := e.checkDrift("publication"); err != nil {
		return err
	}
	if e.cp.ComparisonBase.SHA != oldBase {
		// Convergence is revoked: the caller's loop reviews again.
		return e.loop()
	}
	if e.inv.Publication.Policy != "update_pr" {
		return nil
	}
	pr := e.inv.Publication.PullRequest
	head := e.cp.CurrentHead
	if head == e.expectedRemote {
		e.published, e.remoteAfter = true, head
		return nil
	}
	if _, err := e.repo.Git(e.ctx, "merge-base", "--is-ancestor", e.expectedRemote, head); err != nil {
		return blocked("publication_failed", "the local head %s does not descend from the remote head %s", short(head), short(e.expectedRemote))
	}
	if err := e.checkValidated(head); err != nil {
		return err
	}
	if err := e.hook("before-push"); err != nil {
		return err
	}
	_, perr := e.repo.Git(e.ctx, "push", "--porcelain", "--no-verify",
		"--force-with-lease="+pr.HeadRef+":"+e.expectedRemote, "--", e.cfg.Remote, head+":"+pr.HeadRef)
	observed, rerr := e.readRemote()
	if perr != nil {
		if rerr == nil && observed != e.expectedRemote && observed != head {
			e.remoteAfter = observed
			return blocked("remote_advanced", "the push lost a race: the remote head %s is %s, expected %s", pr.HeadRef, short(observed), short(e.expectedRemote))
		}
		return blocked("publication_failed", "the push of %s to %s %s failed: %v", short(head), e.cfg.Remote, pr.HeadRef, perr)
	}
	if rerr != nil || observed != head {
		e.remoteAfter = observed
		return blocked("publication_failed", "after the push the remote head %s reads %s, not %s", pr.HeadRef, short(observed), short(head))
	}
	e.published, e.remoteAfter = true, observed
	e.expectedRemote = observed
	e.logf("published %s to %s %s", short(head), e.cfg.Remote, pr.HeadRef)
	return nil
}

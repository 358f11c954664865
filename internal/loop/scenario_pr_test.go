package loop

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/loopdoc"
)

// prScen adds a bare remote holding main and the pull request's head
// branch pr-7 at the candidate's head.
func prScen(t *testing.T, candidate string) (*scen, string) {
	s := newScen(t, candidate)
	remote := filepath.Join(filepath.Dir(s.dir), "remote.git")
	git(t, s.dir, "init", "-q", "--bare", remote)
	git(t, s.dir, "remote", "add", "origin", remote)
	git(t, s.dir, "push", "-q", "origin", "main", "cand:refs/heads/pr-7")
	return s, remote
}

func (s *scen) prInvocation(id string) *loopdoc.Invocation {
	inv := s.invocation(id, 3)
	inv.Candidate.SourceUnavailableReason = ""
	if err := updatePR(context.Background(), s.repo, inv, Request{Remote: "origin", PR: 7, PRHeadRef: "pr-7", ExpectedOld: s.head}, "main", s.base); err != nil {
		s.t.Fatal(err)
	}
	return inv
}

func remoteHead(t *testing.T, remote string) string {
	return git(t, remote, "rev-parse", "refs/heads/pr-7")
}

// pushOther makes a commit in a second clone and pushes it to pr-7.
func pushOther(t *testing.T, remote string) string {
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", "-b", "pr-7", remote, other)
	writeFile(t, filepath.Join(other, "other.txt"), "someone else\n", 0o644)
	git(t, other, "commit", "-q", "-am", "someone else's commit")
	git(t, other, "push", "-q", "origin", "HEAD:refs/heads/pr-7")
	return git(t, other, "rev-parse", "HEAD")
}

func TestUpdatePRPublished(t *testing.T) {
	s, remote := prScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.Remote = "origin"
	out := s.start(s.prInvocation("pr1"), cfg)
	want(t, out, "converged", "")
	if remoteHead(t, remote) != s.branchHead() || s.commitsSinceHead() != 1 {
		t.Fatalf("remote %s, local %s", remoteHead(t, remote), s.branchHead())
	}
	if p := out.Result.Publication; p.Status != "published" || p.RemoteHeadAfter != s.branchHead() || len(out.Result.UnpushedCommits) != 0 {
		t.Fatalf("publication %+v", p)
	}
}

func TestRemoteAdvancedBeforePublication(t *testing.T) {
	s, remote := prScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.Remote = "origin"
	var theirs string
	cfg.hook = func(p string) error {
		if p == "before-publish" {
			theirs = pushOther(t, remote)
		}
		return nil
	}
	out := s.start(s.prInvocation("pr2"), cfg)
	want(t, out, "blocked", "remote_advanced")
	if remoteHead(t, remote) != theirs {
		t.Fatal("the other clone's commit was overwritten")
	}
	if out.Result.Publication.Status != "failed" || len(out.Result.UnpushedCommits) != 1 || out.Result.Publication.RemoteHeadAfter != theirs {
		t.Fatalf("publication %+v unpushed %v", out.Result.Publication, out.Result.UnpushedCommits)
	}
}

func TestTwoClonesRaceToPublish(t *testing.T) {
	a, remote := prScen(t, "hello BUG1\n")
	a.script("reviewer", bugReviewer)
	a.script("fixer", fixFirstBug)
	// Clone b: same remote, same pull request, its own fix.
	bdir := filepath.Join(t.TempDir(), "b")
	git(t, filepath.Dir(bdir), "clone", "-q", remote, bdir)
	git(t, bdir, "checkout", "-q", "-b", "cand", "origin/pr-7")
	git(t, bdir, "branch", "-f", "main", "origin/main")
	b := &scen{t: t, dir: bdir, bin: a.bin, base: a.base, head: a.head}
	var err error
	if b.repo, err = openRepo(bdir); err != nil {
		t.Fatal(err)
	}
	cfgA, cfgB := a.config("reviewer", "fixer"), b.config("reviewer", "fixer")
	cfgA.Remote, cfgB.Remote = "origin", "origin"
	writeFile(t, filepath.Join(b.bin, "fixer-b"), "#!/bin/sh\nsed -i 's/BUG1/fine/' app.txt\n", 0o755)
	cfgB = b.config("reviewer", "fixer-b")
	cfgB.Remote = "origin"
	var outA *Outcome
	// b's publication waits until a has published: a wins the race.
	cfgB.hook = func(p string) error {
		if p == "before-push" {
			outA = a.start(a.prInvocation("race-a"), cfgA)
		}
		return nil
	}
	outB := b.start(b.prInvocation("race-b"), cfgB)
	want(t, outB, "blocked", "remote_advanced") // first: had b stopped before its push, a never ran
	want(t, outA, "converged", "")
	if remoteHead(t, remote) != a.branchHead() || a.fileAt(remoteHead(t, remote), "app.txt") != "hello ok" {
		t.Fatal("the winner's head is not on the remote")
	}
	if b.fileAt("cand", "app.txt") != "hello fine" || len(outB.Result.UnpushedCommits) != 1 {
		t.Fatal("the loser's commit is not kept locally")
	}
}

func TestPublicationTargetMismatch(t *testing.T) {
	s, remote := prScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.Remote = "origin"
	inv := s.prInvocation("target")
	inv.Publication.PullRequest.HeadRef = "refs/heads/main"
	out, err := Start(context.Background(), s.repo, inv, nil, cfg)
	var de *DocumentError
	if errors.As(err, &de) {
		t.Logf("the contract itself refuses the invocation: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "blocked", "missing_authority")
	if remoteHead(t, remote) != s.head || s.branchHead() != s.head {
		t.Fatal("something was touched")
	}
}

func TestGrantForWrongRef(t *testing.T) {
	s, remote := prScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.Remote = "origin"
	inv := s.prInvocation("grant")
	inv.Publication.RemoteIterationGrants = []loopdoc.RemoteIterationGrant{{MechanismID: "ci", Kind: "ci_check",
		Repository: inv.Publication.PullRequest.HeadRepository, Ref: "refs/heads/main", OriginOnlyEvidence: "CI runs on pushes only"}}
	out, err := Start(context.Background(), s.repo, inv, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "blocked", "missing_authority")
	if out.Persisted {
		t.Fatal("an invocation without authority must not be written")
	}
	if !strings.Contains(out.Result.OperatorAction, "grant") || remoteHead(t, remote) != s.head || s.branchHead() != s.head {
		t.Fatalf("result %s", Summary(out.Result))
	}
}

func TestKilledAfterPushDoesNotPushAgain(t *testing.T) {
	s, remote := prScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.Remote = "origin"
	// The push lands, then failpass dies before it writes anything more.
	cfg.hook = func(p string) error {
		if p == "before-push" {
			git(t, s.dir, "push", "-q", "origin", "cand:refs/heads/pr-7")
			return errCrash
		}
		return nil
	}
	if _, err := Start(context.Background(), s.repo, s.prInvocation("pushed"), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	cfg.hook = func(p string) error {
		if p == "before-push" {
			t.Error("resume pushed again")
		}
		return nil
	}
	out, err := Resume(context.Background(), s.repo, "pushed", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "converged", "")
	if remoteHead(t, remote) != s.branchHead() || out.Result.Publication.Status != "published" {
		t.Fatalf("publication %+v", out.Result.Publication)
	}
}

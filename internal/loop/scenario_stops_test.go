package loop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/loopdoc"
)

func TestRepeatedFailedAttempt(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	// The "fix" breaks validation every time.
	s.script("fixer", "sed -i 's/BUG1/BROKEN/' app.txt\n")
	out := s.start(s.invocation("twofail", 3), s.config("reviewer", "fixer"))
	want(t, out, "changes_remaining", ReasonRepeatedFail)
	if s.branchHead() != s.head || out.Result.Budget.ConsumedCycles != 2 || len(out.Result.PreservedFailedAttempts) != 2 {
		t.Fatalf("head moved or attempts not preserved: %s", Summary(out.Result))
	}
	for _, p := range out.Result.PreservedFailedAttempts {
		if got := s.fileAt(p.AttemptRef, "app.txt"); got != "hello BROKEN" || !strings.Contains(p.Reason, "validation failed") {
			t.Fatalf("preserved %s holds %q (%s)", p.AttemptRef, got, p.Reason)
		}
	}
}

func TestExpandingFindings(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "sed -i 's/BUG1/BUG2 BUG3 BUG4/' app.txt\n")
	out := s.start(s.invocation("expand", 3), s.config("reviewer", "fixer"))
	want(t, out, "changes_remaining", ReasonExpanding)
	if s.commitsSinceHead() != 1 {
		t.Fatal("want the one commit that expanded the findings")
	}
}

func TestOscillation(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "sed -i 's/BUG1/X/; s/BUG2/BUG1/; s/X/BUG2/' app.txt\n")
	out := s.start(s.invocation("osc", 5), s.config("reviewer", "fixer"))
	want(t, out, "changes_remaining", ReasonOscillation)
	if s.commitsSinceHead() != 2 || out.Result.Budget.RemainingCycles != 3 {
		t.Fatalf("%d commits, %+v", s.commitsSinceHead(), out.Result.Budget)
	}
}

func TestFixerWritesOutsideItsWorktree(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	// (Role programs get a minimal environment: the path is written in.)
	s.script("fixer", `sed -i 's/BUG1/ok/' app.txt
echo tampered >> '`+s.dir+`/other.txt'
`)
	cfg := s.config("reviewer", "fixer")
	cfg.unconfinedFixer = true // the detection path: nothing prevents the write
	out := s.start(s.invocation("outside", 3), cfg)
	want(t, out, "blocked", "candidate_integrity_failure")
	if s.branchHead() != s.head {
		t.Fatal("the candidate moved after an integrity failure")
	}
	// The unexpected state is left for the operator, not repaired.
	if got, _ := os.ReadFile(s.dir + "/other.txt"); string(got) != "other\ntampered\n" {
		t.Fatalf("other.txt = %q", got)
	}
}

func TestFixerChangesRepositoryConfig(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	// (Its worktree's own git folder is a private repository: the
	// user's config is named.)
	s.script("fixer", `sed -i 's/BUG1/ok/' app.txt
git -C '`+s.dir+`' config core.hooksPath /tmp/evil
`)
	cfg := s.config("reviewer", "fixer")
	cfg.unconfinedFixer = true
	out := s.start(s.invocation("config", 3), cfg)
	want(t, out, "blocked", "candidate_integrity_failure")
	if !strings.Contains(out.Result.OperatorAction, "config") || s.branchHead() != s.head {
		t.Fatalf("result %s", Summary(out.Result))
	}
}

func TestGivenInvocationMustMatchFlagsAndLiveGit(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	ctx := context.Background()
	inv := s.invocation("given", 3)
	if _, err := BuildInvocation(ctx, s.repo, Request{From: inv, Cycles: 3, Branch: "cand"}); err != nil {
		t.Fatalf("a matching invocation was refused: %v", err)
	}
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"other branch", Request{From: inv, Branch: "main"}, "--branch main disagrees"},
		{"other cycles", Request{From: inv, Cycles: 5}, "--cycles 5 disagrees"},
		{"other id", Request{From: inv, ID: "x"}, "--id x disagrees"},
		{"other policy", Request{From: inv, Publish: "update_pr"}, "--publish update_pr disagrees"},
	}
	for _, c := range cases {
		_, err := BuildInvocation(ctx, s.repo, c.req)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: BuildInvocation = %v, want an input error containing %q", c.name, err, c.want)
		}
	}
	stale := *inv
	stale.Candidate.HeadSHA = s.base
	if _, err := BuildInvocation(ctx, s.repo, Request{From: &stale}); err == nil || !strings.Contains(err.Error(), "invocation names head") {
		t.Errorf("BuildInvocation(stale head) = %v, want an error about the head", err)
	}
	shell := *inv
	shell.Validation = append([]loopdoc.ValidationCommand(nil), inv.Validation...)
	shell.Validation[0].Command = "sh check.sh && rm -rf /"
	if _, err := BuildInvocation(ctx, s.repo, Request{From: &shell}); err == nil || !strings.Contains(err.Error(), "shell syntax") {
		t.Errorf("BuildInvocation(shell syntax) = %v, want a refusal", err)
	}
}

func TestDirtyCandidateIsRefused(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	writeFile(t, s.dir+"/untracked.txt", "x\n", 0o644)
	_, err := candidateOf(context.Background(), s.repo, "cand", s.head, loopdoc.BaseRef{Ref: "main", SHA: s.base})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "uncommitted") {
		t.Fatalf("candidateOf(dirty) = %v, want an input error", err)
	}
}

func TestConfinedFixerCannotWriteOutside(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", `sed -i 's/BUG1/ok/' app.txt
echo tampered >> '`+s.dir+`/other.txt'
git config core.hooksPath /tmp/evil
git update-ref refs/heads/cand HEAD
exit 0
`)
	out := s.start(s.invocation("confined", 3), s.config("reviewer", "fixer"))
	want(t, out, "converged", "")
	if got, _ := os.ReadFile(s.dir + "/other.txt"); string(got) != "other\n" {
		t.Fatalf("the fixer wrote the user's checkout: %q", got)
	}
	cmd := exec.Command("git", "config", "--get", "core.hooksPath")
	cmd.Dir = s.dir
	if out, _ := cmd.Output(); len(out) != 0 {
		t.Fatalf("the fixer changed the config: %s", out)
	}
	if s.commitsSinceHead() != 1 || s.fileAt("cand", "app.txt") != "hello ok" {
		t.Fatal("the fix in the worktree did not land")
	}
}

package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResumeRefusesACheckpointOfAnotherBudget(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "exit 1\n")
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt("before-publish")
	if _, err := Start(context.Background(), s.repo, s.invocation("budget-edit", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	p := filepath.Join(s.repo.CommonDir, "failpass", "loops", "budget-edit", "checkpoint.json")
	data, _ := os.ReadFile(p)
	edited := strings.Replace(string(data), `"original_cycle_budget": 3`, `"original_cycle_budget": 9`, 1)
	if edited == string(data) {
		t.Fatal("the checkpoint has no budget to edit")
	}
	os.WriteFile(p, []byte(edited), 0o644)
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "budget-edit", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "blocked", "checkpoint_mismatch")
	if after, _ := os.ReadFile(p); string(after) != edited || out.Persisted {
		t.Fatal("resume rewrote the checkpoint")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), "terminal-result.json")); err == nil {
		t.Fatal("a mismatch wrote a terminal result")
	}
}

func TestResumeOfAReturnedLoopRunsNothing(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "exit 1\n")
	first := s.start(s.invocation("done", 3), s.config("reviewer", "fixer"))
	want(t, first, "converged", "")
	// A reviewer that would now refuse everything is never asked.
	s.script("reviewer", "exit 9\n")
	out, err := Resume(context.Background(), s.repo, "done", s.config("reviewer", "fixer"))
	if err != nil {
		t.Fatal(err)
	}
	if string(out.JSON) != string(first.JSON) {
		t.Fatal("resume of a returned loop changed its result")
	}
}

func TestInterruptedLoopReturnsNothingAndResumes(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := s.config("reviewer", "fixer")
	cfg.hook = func(p string) error {
		if p == "attempt-reserved" {
			cancel() // SIGINT arrives as the fixer is about to start
		}
		return nil
	}
	_, err := Start(ctx, s.repo, s.invocation("sigint", 3), nil, cfg)
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("Start = %v, want an interruption", err)
	}
	if _, err := os.Stat(filepath.Join(s.repo.CommonDir, "failpass", "loops", "sigint", "terminal-result.json")); err == nil {
		t.Fatal("an interrupted loop wrote a terminal result")
	}
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "sigint", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "converged", "")
	if s.commitsSinceHead() != 1 {
		t.Fatal("want one commit")
	}
}

func TestRepeatedFindingSurvivesAResume(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", appendLine)
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt("attempt-promoted")
	if _, err := Start(context.Background(), s.repo, s.invocation("rep-resume", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "rep-resume", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "changes_remaining", ReasonRepeated)
	if s.commitsSinceHead() != 1 || out.Result.Budget.ConsumedCycles != 1 {
		t.Fatalf("%d commits, %+v", s.commitsSinceHead(), out.Result.Budget)
	}
}

// A loop cut between a promotion's two steps (the checkout's index and
// files updated by read-tree -m -u, the branch not yet moved by
// update-ref) is finished by resume: it converges, the checkout is clean,
// HEAD is the branch, and exactly one commit was added.
func TestResumeFinishesACutPromotion(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt(hookCheckoutUpdated)
	if _, err := Start(context.Background(), s.repo, s.invocation("cut", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	// The cut state: HEAD and the branch old, the index and files new.
	if s.branchHead() != s.head || s.status() != "M  app.txt" {
		t.Fatalf("not cut between the steps: branch %s, status %q", s.branchHead(), s.status())
	}
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "cut", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "converged", "")
	if n := s.commitsSinceHead(); n != 1 {
		t.Fatalf("%d commits on the candidate, want 1", n)
	}
	if sym := git(t, s.dir, "symbolic-ref", "HEAD"); sym != "refs/heads/cand" {
		t.Fatalf("HEAD is %s, want the branch", sym)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "app.txt")); string(got) != "hello ok\n" || s.status() != "" {
		t.Fatalf("checkout after resume: %q, status %q", got, s.status())
	}
	if out.Result.Budget.ConsumedCycles != 1 {
		t.Fatalf("%+v", out.Result.Budget)
	}
}

// A checkout that differs from the cut promotion's first step (here a
// stray unstaged edit on top of it) is not finished: resume refuses and
// changes nothing.
func TestResumeLeavesAnAlteredCutPromotion(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt(hookCheckoutUpdated)
	if _, err := Start(context.Background(), s.repo, s.invocation("cut2", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	writeFile(t, filepath.Join(s.dir, "app.txt"), "hello mine\n", 0o644)
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "cut2", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "blocked", "checkpoint_mismatch")
	if s.branchHead() != s.head || s.status() != "MM app.txt" {
		t.Fatalf("resume changed the checkout: branch %s, status %q", s.branchHead(), s.status())
	}
}

package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/loopdoc"
)

// finding-producing reviewer bodies.
const (
	// A fixer that turns BUGn into BUG(n+1): every review finds a new,
	// fixable finding.
	bumpBug = `n=$(grep -o 'BUG[0-9]*' app.txt | head -n1 | tr -dc 0-9); sed -i "s/BUG$n/BUG$((n+1))/" app.txt
`
	// A fixer that commits to nothing useful: it appends a line, the bug stays.
	appendLine = `echo more >> app.txt
`
)

func TestBudgetExhausted(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", bumpBug)
	out := s.start(s.invocation("budget", 2), s.config("reviewer", "fixer"))
	want(t, out, "changes_remaining", ReasonBudget)
	if n := s.commitsSinceHead(); n != 2 {
		t.Fatalf("%d commits, want 2", n)
	}
	if got := s.fileAt("cand", "app.txt"); got != "hello BUG3" {
		t.Fatalf("app.txt = %q", got)
	}
	if out.Result.Budget.RemainingCycles != 0 || len(out.Result.UnpushedCommits) != 2 {
		t.Fatalf("budget %+v unpushed %v", out.Result.Budget, out.Result.UnpushedCommits)
	}
}

func TestRepeatedFinding(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", appendLine)
	out := s.start(s.invocation("repeat", 3), s.config("reviewer", "fixer"))
	want(t, out, "changes_remaining", ReasonRepeated)
	if n := s.commitsSinceHead(); n != 1 {
		t.Fatalf("%d commits, want 1", n)
	}
}

func TestDeclinedFinding(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", reviewerPrelude+`result changes_required "$(finding f1 style app.txt:1 strong_recommendation low)"
`)
	s.script("fixer", "touch should-not-run\n")
	out := s.start(s.invocation("declined", 3), s.config("reviewer", "fixer"))
	want(t, out, "blocked", "operator_input_required")
	if s.branchHead() != s.head || out.Result.Budget.ConsumedCycles != 0 {
		t.Fatal("a declined finding must not spend a cycle or move the candidate")
	}
	if d := out.Result.FindingDispositions; len(d) != 1 || d[0].Disposition != "declined" || !strings.Contains(d[0].Rationale, "confidence") {
		t.Fatalf("dispositions %+v", d)
	}
}

func TestScopeExpandingFinding(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", reviewerPrelude+`result changes_required "$(finding f1 other-file other.txt:1 blocking high)"
`)
	s.script("fixer", "echo x >> other.txt\n")
	out := s.start(s.invocation("scope", 3), s.config("reviewer", "fixer"))
	want(t, out, "blocked", "scope_decision_required")
	if s.branchHead() != s.head || out.Result.Budget.ConsumedCycles != 0 {
		t.Fatal("candidate moved")
	}
}

func TestValidationUnavailable(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	inv := s.invocation("unavail", 3)
	inv.Validation[1].Command = "no-such-program-anywhere --all"
	out := s.start(inv, s.config("reviewer", "fixer"))
	want(t, out, "blocked", "validation_unavailable")
	if s.branchHead() != s.head {
		t.Fatal("candidate moved")
	}
}

// validationReviewer never says clean over failed validation.
const validationReviewer = reviewerPrelude + `if printf '%s' "$packet" | grep -q '"status":"failed"'; then
  printf '{"schema_version":"1.4","lens":"aggregate","candidate":{"head_sha":"%s","comparison_base_sha":"%s"},"verdict":"changes_required","findings":[],"blocking_reasons":["validation fails"]}\n' "$head" "$base"
else result clean ""; fi
`

func TestValidationFailingNoTractableFix(t *testing.T) {
	s := newScen(t, "hello BROKEN\n")
	s.script("reviewer", validationReviewer)
	s.script("fixer", "exit 1\n")
	out := s.start(s.invocation("vfail", 3), s.config("reviewer", "fixer"))
	want(t, out, "changes_remaining", ReasonValidationFail)
	if s.branchHead() != s.head {
		t.Fatal("candidate moved")
	}
	if git(t, s.dir, "for-each-ref", "refs/failpass/attempts/vfail/") == "" {
		t.Fatal("the failed attempt is not preserved")
	}
}

func TestValidationFailingTractableFix(t *testing.T) {
	s := newScen(t, "hello BROKEN\n")
	s.script("reviewer", validationReviewer)
	s.script("fixer", "sed -i 's/BROKEN/fine/' app.txt\n")
	out := s.start(s.invocation("vfix", 3), s.config("reviewer", "fixer"))
	want(t, out, "converged", "")
	if s.commitsSinceHead() != 1 || s.fileAt("cand", "app.txt") != "hello fine" {
		t.Fatal("the fix was not committed")
	}
}

func TestReviewerMutatesTree(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", reviewerPrelude+`echo hacked > app.txt
result clean ""
`)
	s.script("fixer", "exit 1\n")
	before := git(t, s.dir, "status", "--porcelain", "--ignored")
	out := s.start(s.invocation("mutate", 3), s.config("reviewer", "fixer"))
	want(t, out, "blocked", "reviewer_integrity_failure")
	rec := out.Result.ReviewRecords[len(out.Result.ReviewRecords)-1]
	if rec.WriteIsolation != "violated" || len(rec.MutationAttempts) == 0 {
		t.Fatalf("record %+v", rec)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "app.txt")); string(got) != "hello world\n" {
		t.Fatalf("the user's checkout was written: %q", got)
	}
	if git(t, s.dir, "status", "--porcelain", "--ignored") != before || s.branchHead() != s.head {
		t.Fatal("the user's checkout changed")
	}
}

func TestReviewerCannotWriteTheRepository(t *testing.T) {
	// The user's checkout and the git dir are out of the reviewer's
	// reach: the write fails (or lands in the sandbox's private /tmp,
	// where this test's repository lives), the repository cannot even be
	// read, and the reviewer's exit says how far it got.
	s := newScen(t, "hello world\n")
	// (Role programs get a minimal environment: the path is written in.)
	s.script("reviewer", reviewerPrelude+`echo x > '`+s.dir+`/app.txt'
git -C '`+s.dir+`' update-ref refs/heads/cand HEAD~1 && exit 3
cat '`+s.dir+`/.git/HEAD' && exit 3
exit 4
`)
	s.script("fixer", "exit 1\n")
	cfg := s.config("reviewer", "fixer")
	out := s.start(s.invocation("rofs", 3), cfg)
	want(t, out, "blocked", "missing_capability")
	if !strings.Contains(out.Result.OperatorAction, "exit 4") {
		t.Fatalf("the reviewer reached the repository: %s", out.Result.OperatorAction)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "app.txt")); string(got) != "hello world\n" || s.branchHead() != s.head {
		t.Fatalf("the repository was written: %q", got)
	}
}

func TestUnattributedRefAdvanceConverges(t *testing.T) {
	s := newScen(t, "hello world\n")
	marker := filepath.Join(t.TempDir(), "reviewing")
	// The reviewer sees nothing of this test's folders: the ref moves
	// while its process (its command line holds the marker) runs.
	s.script("reviewer", reviewerPrelude+`sh -c 'sleep 1.5' `+marker+`
result clean ""
`)
	s.script("fixer", "exit 1\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 400; i++ {
			if len(running(marker)) > 0 {
				git(t, s.dir, "update-ref", "refs/heads/elsewhere", s.base)
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
	}()
	out := s.start(s.invocation("refadv", 3), s.config("reviewer", "fixer"))
	<-done
	want(t, out, "converged", "")
	rec := out.Result.ReviewRecords[0]
	if len(rec.ObservedRefChanges) != 1 || !strings.Contains(rec.ObservedRefChanges[0], "refs/heads/elsewhere") {
		t.Fatalf("observed ref changes %v", rec.ObservedRefChanges)
	}
}

func TestIncompleteReviewResult(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", reviewerPrelude+`printf '{"schema_version":"1.4","lens":"aggregate","candidate":{"head_sha":"%s"' "$head"
`)
	s.script("fixer", "exit 1\n")
	out := s.start(s.invocation("partial", 3), s.config("reviewer", "fixer"))
	want(t, out, "blocked", "missing_capability")
	if out.Result.ReviewRecords[0].AggregateVerdict == "clean" {
		t.Fatal("a partial result certified clean")
	}
}

func TestStaleReviewResult(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", reviewerPrelude+`head=`+strings.Repeat("ab", 20)+`
result clean ""
`)
	s.script("fixer", "exit 1\n")
	out := s.start(s.invocation("stale", 3), s.config("reviewer", "fixer"))
	want(t, out, "blocked", "missing_capability")
	if !strings.Contains(out.Result.OperatorAction, "bound to head") {
		t.Fatalf("operator action %q", out.Result.OperatorAction)
	}
}

func TestNoFreshReviewerNoOverride(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("fixer", "exit 1\n")
	cfg := s.config("fixer", "fixer")
	cfg.Reviewer, cfg.ReviewerErr = nil, errors.New("cmd: program ./missing-reviewer: no such file")
	out := s.start(s.invocation("noreview", 3), cfg)
	want(t, out, "blocked", "missing_capability")
	if len(out.Result.ReviewRecords) != 0 {
		t.Fatal("a review ran without a reviewer")
	}
}

func TestInAgentOverride(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	// One program for both roles: it reviews when FAILPASS_ROLE says so.
	s.script("agent", `if [ "$FAILPASS_ROLE" = reviewer ]; then
`+strings.Replace(bugReviewer, "packet=$(cat)", "packet=$(cat)", 1)+`
else
`+fixFirstBug+`fi
`)
	cfg := s.config("agent", "agent")
	cfg.Reviewer, cfg.ReviewerErr = nil, errors.New("no fresh reviewer")
	inv := s.invocation("override", 3)
	inv.ReviewExecution = loopdoc.ReviewExecution{Mode: "in_agent_override", OverrideAuthorization: "maintainer@example.org"}
	out := s.start(inv, cfg)
	want(t, out, "converged", "")
	for _, r := range out.Result.ReviewRecords {
		if r.ReviewIndependence != "in_agent_override" || !strings.Contains(r.ReviewerIdentity, "maintainer@example.org") {
			t.Fatalf("record %+v", r)
		}
	}
	if s.commitsSinceHead() != 1 {
		t.Fatal("want one commit")
	}
}

func TestBusyCandidate(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	held, err := LockCandidate(s.repo.CommonDir, "refs/heads/cand", "")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	out := s.start(s.invocation("busy", 3), s.config("reviewer", "fixer"))
	want(t, out, "blocked", "candidate_busy")
	if out.Persisted {
		t.Fatal("a busy candidate must not write documents")
	}
	if _, err := os.Stat(filepath.Join(s.repo.CommonDir, "failpass", "loops", "busy")); err == nil {
		t.Fatal("documents written for a busy candidate")
	}
	if s.branchHead() != s.head || git(t, s.dir, "for-each-ref", "refs/failpass/") != "" {
		t.Fatal("a busy candidate was touched")
	}
}

// crashAt makes the engine stop dead at point, as kill -9 would.
func crashAt(point string) func(string) error {
	return func(p string) error {
		if p == point {
			return errCrash
		}
		return nil
	}
}

func TestKilledAfterPromotionLosesNoCommit(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt("attempt-promoted")
	if _, err := Start(context.Background(), s.repo, s.invocation("kill1", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	promoted := s.branchHead()
	if promoted == s.head {
		t.Fatal("the crash point is after promotion")
	}
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "kill1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "converged", "")
	if out.Result.ResumeStatus != "resumed" || s.branchHead() != promoted || s.commitsSinceHead() != 1 {
		t.Fatalf("resume lost or repeated a commit: head %s, %d commits", s.branchHead(), s.commitsSinceHead())
	}
	if out.Result.Budget.ConsumedCycles != 1 || len(out.Result.CreatedCommits) != 1 {
		t.Fatalf("budget %+v", out.Result.Budget)
	}
}

func TestKilledDuringAttemptSpendsTheCycle(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt("attempt-reserved")
	if _, err := Start(context.Background(), s.repo, s.invocation("kill2", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "kill2", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "converged", "")
	if out.Result.Budget.ConsumedCycles != 2 || s.commitsSinceHead() != 1 || len(out.Result.PreservedFailedAttempts) != 1 {
		t.Fatalf("budget %+v, %d commits, preserved %v", out.Result.Budget, s.commitsSinceHead(), out.Result.PreservedFailedAttempts)
	}
}

func TestCheckpointMismatchOnResume(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "exit 1\n")
	cfg := s.config("reviewer", "fixer")
	cfg.hook = crashAt("before-publish")
	if _, err := Start(context.Background(), s.repo, s.invocation("mism", 3), nil, cfg); !errors.Is(err, errCrash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	// Someone commits on the candidate meanwhile.
	writeFile(t, filepath.Join(s.dir, "app.txt"), "hello there\n", 0o644)
	git(t, s.dir, "commit", "-q", "-am", "by hand")
	moved := s.branchHead()
	cpBefore, _ := os.ReadFile(filepath.Join(s.repo.CommonDir, "failpass", "loops", "mism", "checkpoint.json"))
	cfg.hook = nil
	out, err := Resume(context.Background(), s.repo, "mism", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want(t, out, "blocked", "checkpoint_mismatch")
	cpAfter, _ := os.ReadFile(filepath.Join(s.repo.CommonDir, "failpass", "loops", "mism", "checkpoint.json"))
	if string(cpBefore) != string(cpAfter) || s.branchHead() != moved {
		t.Fatal("resume touched the checkpoint or the candidate")
	}
}

func TestCardBudgetExceeded(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "sed -i 's/BUG1/ok/' app.txt; for i in 1 2 3 4 5 6; do echo $i >> app.txt; done\n")
	c, err := card.Parse("card.yml", []byte(`id: "C-1"
base_ref: "main"
fail: {cmd: ["sh", "check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "check.sh"], expect_exit: 0}
budget: {max_files: 1, max_changed_lines: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := newCardPolicy(t, s.repo, c, filepath.Join(t.TempDir(), "card.yml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := BuildInvocation(context.Background(), s.repo, Request{Branch: "cand", Card: pol, ID: "cardb"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.config("reviewer", "fixer")
	cfg.Card = pol
	out := s.start(inv, cfg)
	want(t, out, "blocked", "scope_decision_required")
	if s.branchHead() != s.head || len(out.Result.PreservedFailedAttempts) != 1 {
		t.Fatal("an over-budget fix reached the candidate or was not preserved")
	}
	ref := out.Result.PreservedFailedAttempts[0].AttemptRef
	if !strings.Contains(s.fileAt(ref, "app.txt"), "hello ok") {
		t.Fatal("the preserved attempt does not hold the fixer's work")
	}
}

func TestReviewerSeesNothingOfEarlierPasses(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	common := filepath.Join(s.dir, ".git")
	s.script("reviewer", `if [ -n "$(ls -A '`+common+`/failpass/loops' 2>/dev/null)" ]; then echo "sees loop documents" >&2; exit 7; fi
if [ -n "$(git for-each-ref refs/failpass/)" ]; then echo "sees attempt refs" >&2; exit 8; fi
`+bugReviewer)
	s.script("fixer", fixFirstBug)
	out := s.start(s.invocation("fresh", 3), s.config("reviewer", "fixer"))
	want(t, out, "converged", "")
	// They do exist outside the reviewer's view.
	if git(t, s.dir, "for-each-ref", "refs/failpass/") == "" {
		t.Fatal("the attempt ref is missing")
	}
}

// The loop's budget check on the cumulative diff applies budget.harness as
// the gate does: a fixer that adds a module shadowing the runner is out
// of scope, a library edit is not.
func TestCardPolicyHarness(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	c, err := card.Parse("card.yml", []byte(`id: "C-2"
base_ref: "main"
fail: {cmd: ["python3", "-m", "unittest", "tests.test_app"], expect_exit: 1}
pass: {cmd: ["python3", "-m", "unittest", "tests.test_app"], expect_exit: 0}
invariant: {cmd: ["sh", "check.sh"], expect_exit: 0}
budget: {max_files: 5, max_changed_lines: 50}
`))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := newCardPolicy(t, s.repo, c, filepath.Join(t.TempDir(), "card.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// The trees are the test's own (the loop builds its from what the
	// fixer left, attemptTree).
	tree := func() string {
		git(t, s.dir, "add", "-A")
		return git(t, s.dir, "write-tree")
	}
	writeFile(t, filepath.Join(s.dir, "app.txt"), "hello ok\n", 0o644)
	if f, err := pol.CheckTree(context.Background(), s.repo, tree()); err != nil || f != nil {
		t.Fatalf("Check(library edit) = %+v, %v, want nil", f, err)
	}
	writeFile(t, filepath.Join(s.dir, "unittest.py"), "import sys\nsys.exit(0)\n", 0o644)
	f, err := pol.CheckTree(context.Background(), s.repo, tree())
	if err != nil || f == nil || f.Rule != "budget.harness" || f.Path != "unittest.py" {
		t.Fatalf("Check(unittest.py added) = %+v, %v, want budget.harness on unittest.py", f, err)
	}
}

package loop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
)

// Scenario tests drive the engine on real repositories with scripted
// reviewer and fixer programs, and grade from git evidence: commits on the
// branch, file contents at commits, refs, the user's checkout.

func TestMain(m *testing.M) {
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		if err := sandboxtest.DenyNamespaces(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	// A private git identity and no user or system config.
	home, _ := os.MkdirTemp("", "loop-home-")
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": home,
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.org",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.org",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

type scen struct {
	t    *testing.T
	dir  string // the user's checkout, on branch cand
	bin  string // scripts folder
	repo *gitx.Repo
	base string
	head string
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// newScen makes a repository: main has app.txt and check.sh; branch cand
// (checked out) changes app.txt to candidate content.
func newScen(t *testing.T, candidate string) *scen {
	t.Helper()
	root := t.TempDir()
	s := &scen{t: t, dir: filepath.Join(root, "repo"), bin: filepath.Join(root, "bin")}
	os.MkdirAll(s.bin, 0o755)
	git(t, root, "init", "-q", "-b", "main", s.dir)
	writeFile(t, filepath.Join(s.dir, "app.txt"), "hello\n", 0o644)
	writeFile(t, filepath.Join(s.dir, "other.txt"), "other\n", 0o644)
	// Validation fails when app.txt holds BROKEN.
	writeFile(t, filepath.Join(s.dir, "check.sh"), "if grep -q BROKEN app.txt; then echo broken; exit 1; fi\nexit 0\n", 0o755)
	git(t, s.dir, "add", "-A")
	git(t, s.dir, "commit", "-q", "-m", "base")
	s.base = git(t, s.dir, "rev-parse", "HEAD")
	git(t, s.dir, "checkout", "-q", "-b", "cand")
	writeFile(t, filepath.Join(s.dir, "app.txt"), candidate, 0o644)
	git(t, s.dir, "commit", "-q", "-am", "candidate")
	s.head = git(t, s.dir, "rev-parse", "HEAD")
	repo, err := gitx.Open(context.Background(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	s.repo = repo
	return s
}

// script writes an executable shell script into the scripts folder.
func (s *scen) script(name, body string) string {
	p := filepath.Join(s.bin, name)
	writeFile(s.t, p, "#!/bin/sh\n"+body, 0o755)
	return p
}

// Reviewer bodies. They read the packet on stdin, take the head and base
// from it, and report a finding for every line of app.txt holding BUG.
const reviewerPrelude = `packet=$(cat)
head=$(printf '%s' "$packet" | grep -o '"head_sha":"[0-9a-f]*"' | head -n1 | cut -d'"' -f4)
base=$(printf '%s' "$packet" | grep -o '"comparison_base_sha":"[0-9a-f]*"' | head -n1 | cut -d'"' -f4)
finding() { # id rule location severity confidence
  printf '{"id":"%s","lens":"correctness","severity":"%s","confidence":"%s","rule":"%s","evidence":[{"location":"%s","detail":"d"}],"concern":"c","impact":"i","proposed_change":"p","expected_effect":"e"}' "$1" "$4" "$5" "$2" "$3"
}
result() { # verdict findings-json
  printf '{"schema_version":"1.4","lens":"aggregate","candidate":{"head_sha":"%s","comparison_base_sha":"%s"},"verdict":"%s","findings":[%s],"blocking_reasons":[]}\n' "$head" "$base" "$1" "$2"
}
`

// bugReviewer reports one blocking finding per BUG word in app.txt,
// keyed by the word after it (BUG1, BUG2...), or clean.
const bugReviewer = reviewerPrelude + `fs=""
for w in $(grep -o 'BUG[0-9]*' app.txt 2>/dev/null); do
  f=$(finding "f-$(printf '%s' "$w" | tr 'A-Z' 'a-z')" "no-$w" "app.txt:1" blocking high)
  if [ -n "$fs" ]; then fs="$fs,$f"; else fs="$f"; fi
done
if [ -n "$fs" ]; then result changes_required "$fs"; else result clean ""; fi
`

// fixFirstBug removes the first BUGn word from app.txt.
const fixFirstBug = `sed -i '0,/BUG[0-9]*/s/BUG[0-9]*/ok/' app.txt
`

// invocation builds a local_commit invocation with check.sh as both
// validations.
func (s *scen) invocation(id string, cycles int) *loopdoc.Invocation {
	ctx := context.Background()
	repoID, err := repositoryOf(ctx, s.repo, "")
	if err != nil {
		s.t.Fatal(err)
	}
	cand, err := candidateOf(ctx, s.repo, "cand", s.head, loopdoc.BaseRef{Ref: "main", SHA: s.base})
	if err != nil {
		s.t.Fatal(err)
	}
	cand.SourceUnavailableReason = "local_commit: no pushable source is bound"
	return &loopdoc.Invocation{
		SchemaVersion: loopdoc.SchemaVersion, InvocationID: id, Repository: repoID, Candidate: *cand,
		ChangeContract: loopdoc.ChangeContract{Goal: "greet", AcceptanceCriteria: []string{"app.txt greets"},
			NonGoals: []string{}, PreservedBehaviors: []string{}, AllowedRemediationScope: "app.txt",
			Sources: loopdoc.Sources{RepositoryInstructions: []loopdoc.SourceRef{}, NamedDocuments: []loopdoc.SourceRef{}, NearbyPatterns: []loopdoc.SourceRef{}}},
		ReviewExecution: loopdoc.ReviewExecution{Mode: "fresh_subagent"},
		FixCycleBudget:  loopdoc.FixCycleBudget{MaxFixCycles: cycles},
		Validation: []loopdoc.ValidationCommand{{Name: "check", Command: "sh check.sh", Scope: "focused"},
			{Name: "check all", Command: "sh check.sh", Scope: "full"}},
		Publication: loopdoc.InvocationPublication{Policy: "local_commit"},
	}
}

func (s *scen) adapter(spec string) model.Adapter {
	sp, err := model.ParseSpec(spec)
	if err != nil {
		s.t.Fatal(err)
	}
	a, err := model.New(sp, model.Options{Dir: s.bin, Getenv: os.Getenv})
	if err != nil {
		s.t.Fatal(err)
	}
	return a
}

func (s *scen) config(reviewer, fixer string) Config {
	cfg := Config{ReviewerID: "cmd:" + reviewer, FixerID: "cmd:" + fixer, Log: testLog{s.t}}
	cfg.Reviewer = s.adapter("cmd:" + reviewer)
	cfg.Fixer = s.adapter("cmd:" + fixer)
	return cfg
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (s *scen) start(inv *loopdoc.Invocation, cfg Config) *Outcome {
	s.t.Helper()
	out, err := Start(context.Background(), s.repo, inv, nil, cfg)
	if err != nil {
		s.t.Fatalf("Start: %v", err)
	}
	return out
}

// Git evidence.

func (s *scen) branchHead() string { return git(s.t, s.dir, "rev-parse", "refs/heads/cand") }
func (s *scen) commitsSinceHead() int {
	n := git(s.t, s.dir, "rev-list", "--count", s.head+"..refs/heads/cand")
	return atoi(n)
}
func (s *scen) fileAt(rev, path string) string { return git(s.t, s.dir, "show", rev+":"+path) }
func (s *scen) status() string {
	return git(s.t, s.dir, "status", "--porcelain", "--untracked-files=all")
}
func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func want(t *testing.T, out *Outcome, state, reason string) {
	t.Helper()
	if out == nil {
		t.Fatalf("no outcome, want %s/%s", state, reason)
	}
	if out.Result.TerminalState != state || out.Result.Reason != reason {
		t.Fatalf("terminal %s/%s, want %s/%s\n%s", out.Result.TerminalState, out.Result.Reason, state, reason, Summary(out.Result))
	}
}

func TestConvergedOnCleanFirstReview(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", "exit 1\n")
	out := s.start(s.invocation("clean1", 3), s.config("reviewer", "fixer"))
	want(t, out, "converged", "")
	if s.branchHead() != s.head || s.status() != "" {
		t.Fatalf("candidate moved or checkout dirty: %s %q", s.branchHead(), s.status())
	}
}

func TestConvergedAfterOneFix(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	out := s.start(s.invocation("fix1", 3), s.config("reviewer", "fixer"))
	want(t, out, "converged", "")
	if n := s.commitsSinceHead(); n != 1 {
		t.Fatalf("%d commits on the candidate, want 1", n)
	}
	h := s.branchHead()
	if got := s.fileAt(h, "app.txt"); got != "hello ok" {
		t.Fatalf("app.txt at the new head = %q", got)
	}
	if p := git(t, s.dir, "rev-parse", h+"^"); p != s.head {
		t.Fatalf("parent %s, want %s", p, s.head)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "app.txt")); string(got) != "hello ok\n" || s.status() != "" {
		t.Fatalf("checkout not fast-forwarded: %q %q", got, s.status())
	}
}

func openRepo(dir string) (*gitx.Repo, error) { return gitx.Open(context.Background(), dir) }

// TestRolesWithoutNamespaces runs the loop's isolation scenarios again
// where namespace creation is denied (a seccomp filter, as AppArmor denies
// user namespaces on Ubuntu 23.10 and later): the roles then run in a
// Landlock view, and every scenario must hold all the same.
func TestRolesWithoutNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the loop again with namespaces denied: the full suite runs it")
	}
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		t.Skip("already denied")
	}
	sandboxtest.RunDenied(t, "^(TestConvergedAfterOneFix|TestReviewerMutatesTree|TestReviewerCannotWriteTheRepository|"+
		"TestReviewerSeesNothingOfEarlierPasses|TestConfinedFixerCannotWriteOutside|TestResumeFinishesACutPromotion)$")
}

package loop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/sandbox/sandboxtest"
	"github.com/failpass/failpass/internal/worktree"
)

// hostileGitFixer fixes app.txt, then points its worktree's git admin
// folder at a common dir of its own whose config defines a clean filter
// for every path: a git run through that folder (status, add) would run
// the filter as failpass, outside any sandbox, and commit "EVIL" where
// validation ran on "ok". It also rewrites the worktree's .git file to a
// second fake git folder with the same filter, and installs hooks in
// both. The marker file says whether anything of it ever ran.
const hostileGitFixer = `cat >/dev/null
sed -i 's/BUG1/ok/' app.txt
gd=$(sed -n 's/^gitdir: //p' .git)
real=$(cd "$gd" && cd "$(cat commondir)" && pwd)
fake() { # dir
  mkdir -p "$1/info" "$1/hooks"
  ln -s "$real/objects" "$1/objects"
  ln -s "$real/refs" "$1/refs"
  cp "$real/HEAD" "$1/HEAD"
  cat > "$1/config" <<EOF
[core]
	repositoryformatversion = 0
	hooksPath = $1/hooks
[filter "evil"]
	clean = "sh -c 'echo ran >> @MARKER@; sed s/ok/EVIL/'"
	smudge = cat
	required = true
EOF
  echo '* filter=evil' > "$1/info/attributes"
  for h in pre-commit post-commit post-index-change reference-transaction; do
    printf '#!/bin/sh\necho hook >> @MARKER@\n' > "$1/hooks/$h"; chmod +x "$1/hooks/$h"
  done
}
fake "$gd/fake-common"
echo "$gd/fake-common" > "$gd/commondir" || echo "admin folder read-only" >> @TRIED@
mkdir -p "$gd/fake-gitdir"
fake "$gd/fake-gitdir"
cp "$gd/index" "$gd/fake-gitdir/index" 2>/dev/null
printf 'gitdir: %s\n' "$gd/fake-gitdir" > .git
# Touch the index's idea of app.txt so git must rehash it (through the filter).
touch -d '2001-01-01' app.txt
exit 0
`

// TestHostileFixerGitFolderNeverRuns: failpass's own git never runs what
// the fixer wrote into its worktree's git folder or .git file, and the
// commit published is the tree validation ran on.
func TestHostileFixerGitFolderNeverRuns(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	marker := filepath.Join(t.TempDir(), "ran")
	s.script("reviewer", bugReviewer)
	body := strings.ReplaceAll(hostileGitFixer, "@MARKER@", marker)
	body = strings.ReplaceAll(body, "@TRIED@", filepath.Join(t.TempDir(), "tried"))
	s.script("fixer", body)
	out := s.start(s.invocation("hostile-git", 3), s.config("reviewer", "fixer"))
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the fixer's filter or hook ran outside the sandbox: %q", b)
	}
	want(t, out, "converged", "")
	if got := s.fileAt("cand", "app.txt"); got != "hello ok" {
		t.Fatalf("published app.txt = %q, want the validated %q", got, "hello ok")
	}
	if s.commitsSinceHead() != 1 {
		t.Fatalf("%d commits on the candidate, want 1", s.commitsSinceHead())
	}
	// The checkout holds exactly the commit, and its config is untouched.
	if st := s.status(); st != "" {
		t.Fatalf("the user's checkout is not clean: %q", st)
	}
	if b, _ := os.ReadFile(filepath.Join(s.dir, ".git", "config")); strings.Contains(string(b), "evil") {
		t.Fatalf("the repository config holds the fixer's filter:\n%s", b)
	}
}

// TestFilteredPathBlocks: a changed path with a filter attribute in the
// head's .gitattributes blocks the loop with a reason; the filter (here
// defined in the user's own config) never runs on the fixer's bytes.
func TestFilteredPathBlocks(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	marker := filepath.Join(t.TempDir(), "ran")
	writeFile(t, filepath.Join(s.dir, ".gitattributes"), "app.txt filter=lfs\n", 0o644)
	git(t, s.dir, "add", ".gitattributes")
	git(t, s.dir, "commit", "-q", "-m", "attributes")
	s.head = git(t, s.dir, "rev-parse", "HEAD")
	git(t, s.dir, "config", "filter.lfs.clean", "sh -c 'echo ran >> "+marker+"; cat'")
	git(t, s.dir, "config", "filter.lfs.smudge", "cat")
	os.Remove(marker) // git add above ran the user's own filter, as the user
	s.script("reviewer", bugReviewer)
	s.script("fixer", "cat >/dev/null\nsed -i 's/BUG1/ok/' app.txt\n")
	out := s.start(s.invocation("filtered", 3), s.config("reviewer", "fixer"))
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a filter ran on the fixer's bytes: %q", b)
	}
	want(t, out, "blocked", "operator_input_required")
	if !strings.Contains(Summary(out.Result), "filter=lfs") {
		t.Fatalf("the reason does not name the filter: %s", Summary(out.Result))
	}
	if s.branchHead() != s.head {
		t.Fatal("the candidate moved")
	}
}

// TestAttemptTreeReadsFilesAlone: the tree failpass builds from a
// worktree holds every kind of change git add --all would stage (a
// modified, a new, a deleted, an executable file, a symlink, a file made
// a folder), leaves out ignored files and anything in a .git folder, and
// stores a symlink as its target, never what it points at.
func TestAttemptTreeReadsFilesAlone(t *testing.T) {
	s := newScen(t, "hello there\n")
	writeFile(t, filepath.Join(s.dir, ".gitignore"), "*.log\n", 0o644)
	writeFile(t, filepath.Join(s.dir, "dir", "f.txt"), "f\n", 0o644)
	git(t, s.dir, "add", "-A")
	git(t, s.dir, "commit", "-q", "-m", "more")
	head := git(t, s.dir, "rev-parse", "HEAD")
	ctx := context.Background()
	w, err := worktree.Add(ctx, s.repo, head)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove(ctx)
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "SECRET\n", 0o600)
	writeFile(t, filepath.Join(w.Dir, "app.txt"), "changed\n", 0o644)
	writeFile(t, filepath.Join(w.Dir, "new.sh"), "echo\n", 0o755)
	writeFile(t, filepath.Join(w.Dir, "build.log"), "ignored\n", 0o644)
	writeFile(t, filepath.Join(w.Dir, "sub", ".git", "config"), "[core]\n", 0o644)
	writeFile(t, filepath.Join(w.Dir, "sub", "kept.txt"), "kept\n", 0o644)
	os.Remove(filepath.Join(w.Dir, "other.txt"))
	os.Symlink(secret, filepath.Join(w.Dir, "link"))
	os.RemoveAll(filepath.Join(w.Dir, "dir"))
	writeFile(t, filepath.Join(w.Dir, "dir"), "now a file\n", 0o644)
	at, err := newAttemptTree(ctx, s.repo, w, head)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	tree, err := at.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls := git(t, s.dir, "ls-tree", "-r", tree)
	for _, wantLine := range []string{"100644 blob", "100755 blob", "120000 blob"} {
		if !strings.Contains(ls, wantLine) {
			t.Errorf("tree lacks a %s entry:\n%s", wantLine, ls)
		}
	}
	files := git(t, s.dir, "ls-tree", "-r", "--name-only", tree)
	wantFiles := ".gitignore\napp.txt\ncheck.sh\ndir\nlink\nnew.sh\nsub/kept.txt"
	if files != wantFiles {
		t.Fatalf("tree files:\n%s\nwant:\n%s", files, wantFiles)
	}
	if got := git(t, s.dir, "cat-file", "-p", tree+":link"); got != secret {
		t.Fatalf("symlink stored as %q, want its target", got)
	}
	if got := git(t, s.dir, "cat-file", "-p", tree+":app.txt"); got != "changed" {
		t.Fatalf("app.txt = %q", got)
	}
	if ch, err := at.Changed(ctx); err != nil || !ch {
		t.Fatalf("Changed = %v, %v", ch, err)
	}
}

// TestRolesReachNothingButTheirAttempt: a hostile fixer and reviewer try
// to read the user's keys, the card and allowed_signers, a token in
// failpass's environment, another branch (a "future fix"), an
// unreachable object, the loop's documents and the user's repository;
// and to write allowed_signers, the user's git config and checkout. The
// fixer records what it got in a file of its attempt, which is
// committed: nothing of it may be there. Its forbidden attempts fail,
// its fix lands, and the loop converges; the reviewer's fail too (its
// own exit would say otherwise). The fixer also commits in its own
// private repository, which changes nothing of the user's.
func TestRolesReachNothingButTheirAttempt(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	home := os.Getenv("HOME")
	writeFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "PRIVATE-KEY\n", 0o600)
	writeFile(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = T\n", 0o644)
	secrets := t.TempDir()
	card := filepath.Join(secrets, "card.yml")
	signers := filepath.Join(secrets, "allowed_signers")
	writeFile(t, card, "CARD-SECRET\n", 0o644)
	writeFile(t, signers, "SIGNERS-SECRET\n", 0o644)
	t.Setenv("FAILPASS_TEST_TOKEN", "TOKEN-SECRET")
	// A future fix on another branch, and an object nothing reaches.
	git(t, s.dir, "checkout", "-q", "-b", "future")
	writeFile(t, filepath.Join(s.dir, "app.txt"), "FUTURE-FIX\n", 0o644)
	git(t, s.dir, "commit", "-q", "-am", "future fix")
	git(t, s.dir, "checkout", "-q", "cand")
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir, cmd.Stdin = s.dir, strings.NewReader("UNREACHABLE-SECRET\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	unreachable := strings.TrimSpace(string(out))
	probe := `{
echo "key: $(cat '` + home + `/.ssh/id_ed25519' 2>&1)"
echo "card: $(cat '` + card + `' 2>&1)"
echo "signers: $(cat '` + signers + `' 2>&1)"
echo "env: $(env | grep -v '^PWD=' 2>&1)"
echo "log-all: $(git log --all --format=%s 2>&1)"
echo "future: $(git show future:app.txt 2>&1)"
echo "unreachable: $(git cat-file -p ` + unreachable + ` 2>&1)"
echo "refs: $(git for-each-ref 2>&1)"
echo "loops: $(ls '` + s.dir + `/.git/failpass/loops' 2>&1)"
echo "repo: $(cat '` + s.dir + `/.git/config' 2>&1)"
}`
	writes := `echo pwned >> '` + signers + `' 2>/dev/null
echo pwned >> '` + home + `/.gitconfig' 2>/dev/null
echo pwned >> '` + s.dir + `/other.txt' 2>/dev/null
echo pwned >> '` + card + `' 2>/dev/null
`
	// The reviewer exits 7 (no review: the loop blocks) if it reached
	// any of it.
	s.script("reviewer", reviewerPrelude+probe+` | grep -q 'PRIVATE-KEY\|CARD-SECRET\|SIGNERS-SECRET\|TOKEN-SECRET\|FUTURE-FIX\|UNREACHABLE-SECRET\|refs/heads/future\|refs/failpass\|loops: hostile\|\[core\]' && exit 7
`+writes+strings.TrimPrefix(bugReviewer, reviewerPrelude))
	s.script("fixer", `cat >/dev/null
sed -i 's/BUG1/ok/' app.txt
`+probe+` > probe.txt
`+writes+`git add -A >/dev/null 2>&1 && git -c user.name=f -c user.email=f@f commit -qm wip >/dev/null 2>&1
exit 0
`)
	res := s.start(s.invocation("hostile-roles", 3), s.config("reviewer", "fixer"))
	want(t, res, "converged", "")
	got := s.fileAt("cand", "probe.txt")
	t.Logf("what the fixer reached:\n%s", got)
	for _, secret := range []string{"PRIVATE-KEY", "CARD-SECRET", "SIGNERS-SECRET", "TOKEN-SECRET", "FUTURE-FIX",
		"future fix", "UNREACHABLE-SECRET", "refs/heads/future", "refs/heads/main", "refs/failpass", "hostile-roles", "[core]"} {
		if strings.Contains(got, secret) {
			t.Errorf("the fixer reached %q", secret)
		}
	}
	if !strings.Contains(got, "log-all: candidate\nbase") {
		t.Errorf("the fixer's history is not the candidate's:\n%s", got)
	}
	for p, want := range map[string]string{signers: "SIGNERS-SECRET\n", card: "CARD-SECRET\n",
		filepath.Join(home, ".gitconfig"): "[user]\n\tname = T\n", filepath.Join(s.dir, "other.txt"): "other\n"} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("a role wrote %s: %q", p, b)
		}
	}
	if s.fileAt("cand", "app.txt") != "hello ok" || s.commitsSinceHead() != 1 {
		t.Errorf("the fix did not land as one commit")
	}
	// Where namespaces are denied, the outcome names the missing layers
	// for the human summary.
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		if len(res.Containment) == 0 || !strings.Contains(strings.Join(res.Containment, "\n"), "network") {
			t.Errorf("the missing layers are not named: %q", res.Containment)
		}
	}
	t.Logf("containment: %q", res.Containment)
}

// The same where user namespaces are denied: Landlock alone holds the
// roles (this test's folders are then outside any private /tmp).
func TestRolesReachNothingLandlockOnly(t *testing.T) {
	if os.Getenv(sandboxtest.DenyEnv) == "1" {
		t.Skip("the child itself")
	}
	sandboxtest.RunDenied(t, "^(TestRolesReachNothingButTheirAttempt|TestHostileFixerGitFolderNeverRuns|TestDeciderContained)$")
}

// TestRoleGrantsRead: a path the loop's settings grant is readable to
// the roles (a model tool's credentials); the rest stays out of reach.
func TestRoleGrantsRead(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	dir := t.TempDir()
	creds, other := filepath.Join(dir, "creds"), filepath.Join(dir, "other")
	writeFile(t, creds, "GRANTED\n", 0o600)
	writeFile(t, other, "NOT-GRANTED\n", 0o600)
	s.script("reviewer", bugReviewer)
	s.script("fixer", `cat >/dev/null
sed -i 's/BUG1/ok/' app.txt
cat '`+creds+`' > creds.txt 2>&1
cat '`+other+`' > other-read.txt 2>&1
exit 0
`)
	cfg := s.config("reviewer", "fixer")
	cfg.Grants = Grants{Read: []string{creds}}
	out := s.start(s.invocation("grants", 3), cfg)
	want(t, out, "converged", "")
	if got := s.fileAt("cand", "creds.txt"); got != "GRANTED" {
		t.Errorf("the granted file read %q", got)
	}
	if got := s.fileAt("cand", "other-read.txt"); strings.Contains(got, "NOT-GRANTED") {
		t.Errorf("a file beside the granted one was readable: %q", got)
	}
}

// TestDeciderContained: a decider that reaches the user's repository or
// a file beside it refuses to decide (the loop would block); contained,
// it cannot, and the loop converges.
func TestDeciderContained(t *testing.T) {
	s := newScen(t, "hello BUG1\n")
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "S\n", 0o600)
	s.script("reviewer", bugReviewer)
	s.script("fixer", fixFirstBug)
	s.script("decider", `cat >/dev/null
cat '`+secret+`' >/dev/null 2>&1 && exit 9
cat '`+s.dir+`/.git/HEAD' >/dev/null 2>&1 && exit 9
echo x >> '`+secret+`' 2>/dev/null
printf '{"dispositions":[{"finding_id":"f-bug1","disposition":"accepted","rationale":"the decider says so"}]}'
`)
	cfg := s.config("reviewer", "fixer")
	cfg.Decider = s.adapter("cmd:decider")
	out := s.start(s.invocation("decider-contained", 3), cfg)
	want(t, out, "converged", "")
	if b, _ := os.ReadFile(secret); string(b) != "S\n" {
		t.Fatalf("the decider wrote %q", b)
	}
}

// A fifo where git reads ignore rules fails the attempt's tree at once
// rather than hang failpass's check-ignore.
func TestAttemptTreeRefusesAFifoGitignore(t *testing.T) {
	s := newScen(t, "hello there\n")
	ctx := context.Background()
	w, err := worktree.Add(ctx, s.repo, s.head)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Remove(ctx)
	writeFile(t, filepath.Join(w.Dir, "sub", "new.txt"), "new\n", 0o644)
	if err := syscall.Mkfifo(filepath.Join(w.Dir, "sub", ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	at, err := newAttemptTree(ctx, s.repo, w, s.head)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = at.Build(tctx)
	var fe *fileError
	if !errors.As(err, &fe) {
		t.Fatalf("Build = %v, want a fileError", err)
	}
}

// A reviewer that leaves a fifo where git reads ignore rules in its
// snapshot voids its pass; failpass never runs git there, so nothing
// hangs on it.
func TestReviewerFifoInSnapshot(t *testing.T) {
	s := newScen(t, "hello world\n")
	s.script("reviewer", reviewerPrelude+`mkfifo .gitignore sub.fifo 2>/dev/null
result clean ""
`)
	s.script("fixer", "exit 1\n")
	done := make(chan *Outcome, 1)
	go func() { done <- s.start(s.invocation("fifo", 3), s.config("reviewer", "fixer")) }()
	select {
	case out := <-done:
		want(t, out, "blocked", "reviewer_integrity_failure")
		if rec := out.Result.ReviewRecords[0]; !strings.Contains(strings.Join(rec.MutationAttempts, " "), ".gitignore") {
			t.Fatalf("the write is not named: %+v", rec.MutationAttempts)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the loop hangs on the reviewer's fifo")
	}
}

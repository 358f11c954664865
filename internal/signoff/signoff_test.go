package signoff

import (
	"bytes"
	"context"
	"errors"
	"github.com/failpass/failpass/internal/gittest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/heldout"
)

func TestMain(m *testing.M) { gittest.Main(m, "signoff") }

// The test repository's git and files, as every package drives them.
var (
	git    = gittest.Git
	write  = gittest.Write
	mkdiff = gittest.Diff
)

// The repository: a bug (answer=41) and a check that wants 42. The fail
// run leaves a marker behind; the invariant fails if it sees it, so a
// table that does not reset between runs says dirty.
const (
	checkSh = ". src/lib.sh\n: > tests/marker\n[ \"$answer\" = 42 ]\n"
	cardFmt = `id: "T-1"
base_ref: "main"
fail: {cmd: ["sh", "tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "-c", "%s"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 20, deny_globs: ["ci/**"]}
held_out: {dest: "ho", cmd: ["sh", "{held_out}"], expect_exit: 0}
`
	cleanInvariant = "test ! -e tests/marker"
)

func newRepo(t testing.TB) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "src/lib.sh", "answer=41\n")
	write(t, dir, "tests/check.sh", checkSh)
	write(t, dir, "ci/x.yml", "x: 1\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, base
}

// steps records what a Progress heard.
type steps []string

func (s *steps) Starting(step string)    { *s = append(*s, "start "+step) }
func (s *steps) Ended(step, line string) { *s = append(*s, "end "+line) }

// TestRun drives the whole table on a real repository, uncontained (the
// sandboxed path is the script tests'): the rows run in order, each only
// when the earlier ones let the card through, every run on a clean base,
// and nothing is left behind.
func TestRun(t *testing.T) {
	repo, base := newRepo(t)
	fixed := mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})
	wrong := mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=43\n"})
	denied := mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n", "ci/x.yml": "x: 2\n"})
	hoDir := t.TempDir()
	write(t, hoDir, "held.sh", ". src/lib.sh\n[ \"$answer\" = 42 ]\n")
	held, err := heldout.Load(hoDir)
	if err != nil {
		t.Fatal(err)
	}
	passing := t.TempDir()
	write(t, passing, "held.sh", "exit 0\n")
	heldPasses, err := heldout.Load(passing)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name      string
		invariant string
		held      *heldout.Folder
		ref       []byte
		decision  Decision
		roles     string   // the runs' roles and exits
		out       []string // regexps, one per Out line
		steps     string
	}{
		{
			name: "fail runs and invariant", invariant: cleanInvariant,
			decision: DecisionSign, roles: "fail=1 fail=1 invariant=0",
			out:   []string{`^fail run 1/2: exit 1 in \d+ms \(expect 1\)$`, `^fail run 2/2: exit 1 `, `^invariant: exit 0 in \d+ms \(expect 0\)$`},
			steps: "start fail run 1/2|end fail run 1/2: exit 1|start fail run 2/2|end fail run 2/2: exit 1|start invariant run 1|end invariant run 1: exit 0",
		},
		{
			name: "every row signs", invariant: cleanInvariant, held: held, ref: fixed,
			decision: DecisionSign, roles: "fail=1 fail=1 invariant=0 held_out=1 pass=0 invariant=0",
			out: []string{`^fail run 1/2: `, `^fail run 2/2: `, `^invariant: `,
				`^held-out: exit 1 in \d+ms \(1 file\(s\); must not exit 0 on the base\)$`,
				`^reference pass: exit 0 in \d+ms \(expect 0\)$`, `^reference invariant: exit 0 `,
				`^reference mutation: not run: the canary does not follow the pass command: `},
		},
		{
			name: "a dirty invariant stops before the other rows", invariant: "exit 3", held: held, ref: fixed,
			decision: DecisionDirty, roles: "fail=1 fail=1 invariant=3",
			out: []string{`^fail run 1/2: `, `^fail run 2/2: `, `^invariant: exit 3 `},
		},
		{
			name: "held-out tests that pass on the base", invariant: cleanInvariant, held: heldPasses, ref: fixed,
			decision: DecisionMismatch, roles: "fail=1 fail=1 invariant=0 held_out=0",
			out: []string{`^fail run 1/2: `, `^fail run 2/2: `, `^invariant: `, `^held-out: exit 0 `},
		},
		{
			name: "a reference that does not fix", invariant: cleanInvariant, ref: wrong,
			decision: DecisionUnsatisfiable, roles: "fail=1 fail=1 invariant=0 pass=1 invariant=0",
			out: []string{`^fail run 1/2: `, `^fail run 2/2: `, `^invariant: `, `^reference pass: exit 1 `, `^reference invariant: exit 0 `},
		},
		{
			name: "a reference the static rules refuse", invariant: cleanInvariant, ref: denied,
			decision: DecisionUnsatisfiable, roles: "fail=1 fail=1 invariant=0",
			out: []string{`^fail run 1/2: `, `^fail run 2/2: `, `^invariant: `, `^reference: refused by budget.deny: `},
		},
		{
			name: "a reference that does not apply", invariant: cleanInvariant, ref: []byte("--- a/src/lib.sh\n+++ b/src/lib.sh\n@@ -1 +1 @@\n-answer=40\n+answer=42\n"),
			decision: DecisionUnsatisfiable, roles: "fail=1 fail=1 invariant=0",
			out: []string{`^fail run 1/2: `, `^fail run 2/2: `, `^invariant: `, `^reference: (does not apply|refused by diff\.apply): `},
		},
	} {
		c, err := card.Parse("card.yml", []byte(strings.Replace(cardFmt, "%s", tc.invariant, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var out, notes bytes.Buffer
		var heard steps
		b, err := gate.Bind(context.Background(), repo, c, "card.yml", os.Getenv)
		if err != nil || b.Base != base {
			t.Fatalf("Bind = %+v, %v; want the base %s", b, err, base)
		}
		res, err := Run(context.Background(), Options{Bound: b, Repeat: 2,
			Sandbox: gate.SandboxOff, HeldOut: tc.held, Reference: tc.ref,
			Out: &out, Notes: &notes, Progress: &heard})
		if err != nil {
			t.Errorf("%s: Run = %v", tc.name, err)
			continue
		}
		if res.Verdict.Decision != tc.decision {
			t.Errorf("%s: decision = %s (%s), want %s\n%s", tc.name, res.Verdict.Decision, res.Verdict.Reason, tc.decision, out.String())
		}
		var roles []string
		for _, r := range res.Runs {
			roles = append(roles, r.Role+"="+itoa(r.Exit))
		}
		if got := strings.Join(roles, " "); got != tc.roles {
			t.Errorf("%s: runs = %s, want %s", tc.name, got, tc.roles)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != len(tc.out) {
			t.Errorf("%s: Out has %d lines, want %d:\n%s", tc.name, len(lines), len(tc.out), out.String())
		} else {
			for i, re := range tc.out {
				if !regexp.MustCompile(re).MatchString(lines[i]) {
					t.Errorf("%s: Out line %d = %q, want %s", tc.name, i+1, lines[i], re)
				}
			}
		}
		if !regexp.MustCompile(`^logs: .*/failpass/logs/sign-`).MatchString(notes.String()) {
			t.Errorf("%s: Notes = %q, want the log folder", tc.name, notes.String())
		}
		if tc.steps != "" {
			got := strings.Join(heard, "|")
			got = regexp.MustCompile(`(exit \d+) in \d+ms`).ReplaceAllString(got, "$1")
			if got != tc.steps {
				t.Errorf("%s: progress = %s, want %s", tc.name, got, tc.steps)
			}
		}
		wantRef := ""
		if tc.ref != nil {
			wantRef = ReferenceDigest(tc.ref)
		}
		if res.Reference != wantRef {
			t.Errorf("%s: Reference = %q, want %q", tc.name, res.Reference, wantRef)
		}
		if wts := strings.Count(git(t, repo.Dir, "worktree", "list", "--porcelain"), "worktree "); wts != 1 {
			t.Errorf("%s: %d worktrees after Run, want only the checkout", tc.name, wts)
		}
		if st := git(t, repo.Dir, "status", "--porcelain"); st != "" {
			t.Errorf("%s: the checkout changed:\n%s", tc.name, st)
		}
	}
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

// TestSignoff: the block records the table's runs, decision and
// reference, with the tool's version.
func TestSignoff(t *testing.T) {
	r := &Result{Runs: []card.Run{{Role: "fail", Exit: 1}}, Verdict: Verdict{Decision: DecisionSign}, Reference: "sha256:ab"}
	s := r.Signoff(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	if s.At != "2026-01-02T02:04:05Z" || s.Decision != "sign" || s.Reference != "sha256:ab" || len(s.Runs) != 1 || s.Tool == "" {
		t.Errorf("Signoff = %+v", s)
	}
}

// TestBase: a pinned base_sha wins over base_ref; a base that is not a
// commit is the user's to fix, with a hint.
func TestBase(t *testing.T) {
	repo, base := newRepo(t)
	git(t, repo.Dir, "commit", "-q", "--allow-empty", "-m", "later")
	for _, tc := range []struct {
		ref, sha string
		want     string // "" for an error
	}{
		{"main", "", strings.TrimSpace(git(t, repo.Dir, "rev-parse", "HEAD"))},
		{"main", base, base},
		{"nope", "", ""},
		{"main", strings.Repeat("0", 40), ""},
	} {
		c, err := card.Parse("card.yml", []byte(strings.Replace(cardFmt, "%s", cleanInvariant, 1)))
		if err != nil {
			t.Fatal(err)
		}
		c.BaseRef, c.BaseSHA = tc.ref, tc.sha
		b, err := gate.Bind(context.Background(), repo, c, "card.yml", os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Base(b)
		var e *Error
		switch {
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("Base(%q, %q) = %q, %v; want %s", tc.ref, tc.sha, got, err, tc.want)
		case tc.want == "" && (!errors.As(err, &e) || len(e.Hints()) == 0):
			t.Errorf("Base(%q, %q) = %q, %v; want an *Error with a hint", tc.ref, tc.sha, got, err)
		}
	}
}

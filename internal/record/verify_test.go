package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sign"
)

// testRepo makes a real repository with value=1 committed and returns it
// and its base commit.
func testRepo(t *testing.T) (*gitx.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "value"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "check.sh"), []byte("[ \"$(cat value)\" = 2 ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m", "base"},
	} {
		if _, err := gitx.Command(ctx, dir, nil, args...); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
	}
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := repo.Git(ctx, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return repo, strings.TrimSpace(string(out))
}

func TestPatchedTree(t *testing.T) {
	repo, base := testRepo(t)
	ctx := context.Background()
	got, err := PatchedTree(ctx, repo, base, testDiff)
	if err != nil {
		t.Fatalf("PatchedTree(fix) = %v", err)
	}
	// git's own answer, through a scratch index.
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "i2")}
	if _, err := gitx.CommandEnv(ctx, repo.Dir, nil, idx, "read-tree", base); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.CommandEnv(ctx, repo.Dir, testDiff, idx, "apply", "--cached", "-"); err != nil {
		t.Fatal(err)
	}
	tree, err := gitx.CommandEnv(ctx, repo.Dir, nil, idx, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Applied || got.Tree != strings.TrimSpace(string(tree)) || got.Base != base {
		t.Errorf("PatchedTree(fix) = %+v, want applied tree %s on %s", got, tree, base)
	}

	stale := []byte("diff --git a/value b/value\n--- a/value\n+++ b/value\n@@ -1 +1 @@\n-7\n+2\n")
	got, err = PatchedTree(ctx, repo, base, stale)
	if err != nil {
		t.Fatalf("PatchedTree(stale) = %v", err)
	}
	baseTree, _ := repo.Git(ctx, "rev-parse", base+"^{tree}")
	if got.Applied || got.Tree != strings.TrimSpace(string(baseTree)) {
		t.Errorf("PatchedTree(stale) = %+v, want the base tree %s, not applied", got, baseTree)
	}

	_, err = PatchedTree(ctx, repo, strings.Repeat("3", 40), testDiff)
	var be *BaseError
	if !errors.As(err, &be) {
		t.Errorf("PatchedTree(unknown base) = %v, want a *BaseError", err)
	}

	// The user's index and status are untouched.
	st, _ := repo.Git(ctx, "status", "--porcelain")
	if len(st) != 0 {
		t.Errorf("git status after PatchedTree = %q, want clean", st)
	}
}

// fixture is a signed card on a real repository and a record of a pass.
type fixture struct {
	repo               *gitx.Repo
	card               *card.Card
	maint, runner      sign.Signer
	maintLine, runLine string
	data, sig          []byte
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{}
	var base string
	f.repo, base = testRepo(t)
	c, err := card.Parse("card.yml", []byte(strings.Replace(testCardYAML, testBase, base, 1)))
	if err != nil {
		t.Fatal(err)
	}
	f.card = c
	f.maint, f.maintLine = testKey(t, "maint@example.org")
	f.runner, f.runLine = testKey(t, "ci@example.org")
	signCard(t, c, f.maint, "maint@example.org")
	ctx := context.Background()
	p, err := PatchedTree(ctx, f.repo, base, testDiff)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ReadNumstat(ctx, testDiff)
	if err != nil {
		t.Fatal(err)
	}
	v := passVerdict(c)
	v.Base = base
	s, err := New(v, c, testDiff, p, files, "failpass test", testTime)
	if err != nil {
		t.Fatal(err)
	}
	f.data = canonical(t, s)
	if f.sig, err = Sign(f.runner, f.data); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) input(t *testing.T) Verification {
	return Verification{
		Record: f.data, Signature: f.sig, Card: f.card,
		Runners:     allowed(t, "runners", f.runLine),
		Maintainers: allowed(t, "allowed_signers", f.maintLine),
		Diff:        testDiff, Repo: f.repo, Now: testTime,
	}
}

// resign replaces the record with data, signed by a trusted runner: the
// forgery a compromised runner could make.
func (f *fixture) resign(t *testing.T, in *Verification, data []byte) {
	t.Helper()
	sig, err := f.runner.Sign(sign.NamespaceRecord, data)
	if err != nil {
		t.Fatal(err)
	}
	in.Record, in.Signature = data, sig
}

func TestVerify(t *testing.T) {
	f := newFixture(t)
	edit := func(old, new string) func(t *testing.T, in *Verification) {
		return func(t *testing.T, in *Verification) {
			if !strings.Contains(string(f.data), old) {
				t.Fatalf("the record lacks %q", old)
			}
			f.resign(t, in, []byte(strings.Replace(string(f.data), old, new, 1)))
		}
	}
	tests := []struct {
		name string
		edit func(t *testing.T, in *Verification)
		want Problem
	}{
		{"as written", func(*testing.T, *Verification) {}, ""},
		{"without the diff", func(t *testing.T, in *Verification) { in.Diff, in.Repo = nil, nil }, ""},
		{"edited, not re-signed", func(t *testing.T, in *Verification) {
			in.Record = []byte(strings.Replace(string(f.data), `"exit":1`, `"exit":0`, 1))
		}, ProblemSignature},
		{"signed by a maintainer, not a runner", func(t *testing.T, in *Verification) {
			in.Signature, _ = f.maint.Sign(sign.NamespaceRecord, f.data)
		}, ProblemSignature},
		{"runner key limited to another namespace", func(t *testing.T, in *Verification) {
			fields := strings.SplitN(f.runLine, " ", 2)
			in.Runners = allowed(t, "runners", fields[0]+` namespaces="git" `+fields[1])
		}, ProblemSignature},
		{"card signature replayed as the record's", func(t *testing.T, in *Verification) {
			in.Signature = []byte(f.card.Signatures[0].Signature)
			in.Runners = allowed(t, "runners", f.runLine, f.maintLine)
		}, ProblemSignature},
		{"record signed in the card namespace", func(t *testing.T, in *Verification) {
			in.Signature, _ = f.runner.Sign(sign.NamespaceCard, f.data)
		}, ProblemSignature},
		{"garbage signature", func(t *testing.T, in *Verification) { in.Signature = []byte("hello") }, ProblemSignature},
		{"not canonical", edit(`{"_type"`, `{ "_type"`), ProblemNotCanonical},
		{"argv", edit(`"argv":["sh","check.sh"]`, `"argv":["sh","-c","exit 1"]`), ProblemArgv},
		{"card digest", func(t *testing.T, in *Verification) {
			d, _ := f.card.Digest()
			edit(d, "sha256:"+strings.Repeat("0", 64))(t, in)
		}, ProblemCardDigest},
		{"numstat", edit(`"added":1,`, `"added":2,`), ProblemNumstat},
		{"numstat path", edit(`"path":"value"`, `"path":"other"`), ProblemNumstat},
		{"tree", func(t *testing.T, in *Verification) {
			s, _ := Parse(f.data)
			edit(s.Tree(), strings.Repeat("4", 40))(t, in)
		}, ProblemTree},
		{"applied flag", edit(`"applied":true`, `"applied":false`), ProblemTree},
		{"another diff", func(t *testing.T, in *Verification) {
			in.Diff = append([]byte{}, strings.Replace(string(testDiff), "+2", "+3", 1)...)
		}, ProblemDiffDigest},
		{"verdict flipped", edit(`"verdict":"pass"`, `"verdict":"fail"`), ProblemMalformed},
		{"signer not on the card", edit(`"signers":["maint@example.org"]`, `"signers":["root@example.org"]`), ProblemSigners},
		{"unsigned run", edit(`"unsigned":false`, `"unsigned":true`), ProblemCard},
		{"card signer not allowed", func(t *testing.T, in *Verification) {
			in.Maintainers = allowed(t, "allowed_signers", f.runLine)
		}, ProblemCard},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := f.input(t)
			tc.edit(t, &in)
			v, err := Verify(context.Background(), in)
			var got Problem
			if err != nil {
				var re *Error
				if !errors.As(err, &re) {
					t.Fatalf("Verify(%s) = %v (%T), want a *record.Error", tc.name, err, err)
				}
				got = re.Problem
				if v != nil {
					t.Errorf("Verify(%s) returned a result with error %v", tc.name, err)
				}
			}
			if got != tc.want {
				t.Errorf("Verify(%s) = %v, want problem %q", tc.name, err, tc.want)
			}
			if err == nil && v.Runner.Principal != "ci@example.org" {
				t.Errorf("Verify(%s).Runner = %+v, want ci@example.org", tc.name, v.Runner)
			}
		})
	}
}

func TestSignRefusesWhatVerifyRefuses(t *testing.T) {
	s, _ := testKey(t, "ci@example.org")
	if sig, err := Sign(s, []byte(`{"a": 1}`)); err == nil || sig != nil {
		t.Errorf("Sign(not a record) = %q, %v, want an error and no signature", sig, err)
	}
}

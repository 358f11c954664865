package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sandbox"
)

// containCard's commands try to write outside the worktree, at @OUT@.
const containCard = `id: "T-CONTAIN"
base_ref: "main"
fail: {cmd: ["sh", "-c", "echo base > @OUT@/base; sh tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "-c", "echo patched > @OUT@/patched; sh tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "tests/invariant.sh"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 20}
`

// TestZeroOptionsContained: Options that say nothing about the sandbox
// run every card command contained, alone and in a batch; SandboxOff is
// the one way to run them uncontained.
func TestZeroOptionsContained(t *testing.T) {
	if !sandbox.Probe().Has(sandbox.Filesystem) {
		t.Skip("this machine cannot provide the filesystem layer")
	}
	repo, base := newRepo(t)
	out := t.TempDir()
	c, err := card.Parse("card.yml", []byte(strings.ReplaceAll(containCard, "@OUT@", out)))
	if err != nil {
		t.Fatal(err)
	}
	diff := mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})
	ctx := context.Background()
	escaped := func() []string {
		var got []string
		for _, n := range []string{"base", "patched"} {
			if _, err := os.Stat(filepath.Join(out, n)); err == nil {
				got = append(got, n)
				os.Remove(filepath.Join(out, n))
			}
		}
		return got
	}
	o := Options{Bound: testBound(t, repo, c, base), Diff: diff, DiffName: "fix", AllowUnsigned: true}
	v, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != Pass || !v.Sandbox.Has(sandbox.Filesystem) || v.Sandbox.Cache == "" {
		t.Errorf("Run(zero sandbox options) = %s %s, sandbox %+v; want a contained pass", v.Verdict, v.Reason, v.Sandbox)
	}
	if got := escaped(); len(got) > 0 {
		t.Errorf("Run(zero sandbox options): %v runs wrote outside the worktree", got)
	}

	b := NewBatch(BatchConfig{Repo: repo, Jobs: 1})
	defer b.Close(ctx)
	v, err = b.Gate(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != Pass || !v.Sandbox.Has(sandbox.Filesystem) {
		t.Errorf("Batch.Gate(zero sandbox options) = %s %s, sandbox %+v; want a contained pass", v.Verdict, v.Reason, v.Sandbox)
	}
	if got := escaped(); len(got) > 0 {
		t.Errorf("Batch.Gate(zero sandbox options): %v runs wrote outside the worktree", got)
	}

	// The check is real: uncontained, both writes land.
	o.Sandbox = SandboxOff
	if v, err = Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := escaped(); len(got) != 2 || !v.Sandbox.Off {
		t.Errorf("Run(SandboxOff): writes outside %v, report %+v; want both, off", got, v.Sandbox)
	}
}

// TestBuildCacheKey: the key follows what builds depend on (base,
// commands, environment) and not what signing changes.
func TestBuildCacheKey(t *testing.T) {
	c := testCard(t)
	env := func(card.Command) []string { return []string{"PATH=/usr/bin", "HOME=/h"} }
	k := BuildCacheKey(c, "b1", env)
	signed := *c
	signed.BaseSHA = "b1"
	signed.Signoff = &card.Signoff{At: "2026-01-01T00:00:00Z", Tool: "failpass x", Decision: "sign"}
	signed.Signatures = []card.Signature{{Principal: "m", Signature: "sig"}}
	signed.Fail.ExpectExit = 2
	if got := BuildCacheKey(&signed, "b1", env); got != k {
		t.Errorf("BuildCacheKey after signing = %s, want %s (unchanged)", got, k)
	}
	terminal := func(card.Command) []string { return []string{"PATH=/usr/bin", "TERM=xterm", "HOME=/h", "TMPDIR=/t"} }
	if got := BuildCacheKey(c, "b1", terminal); got != k {
		t.Errorf("BuildCacheKey with TERM and TMPDIR = %s, want %s (unchanged)", got, k)
	}
	other := *c
	other.Pass.Cmd = []string{"sh", "tests/other.sh"}
	wd := *c
	wd.Invariant.Workdir = "src"
	cardEnv := *c
	cardEnv.Fail.Env = map[string]string{"GOFLAGS": "-tags=x"}
	for _, tc := range []struct {
		name string
		key  string
	}{
		{"another base", BuildCacheKey(c, "b2", env)},
		{"another command", BuildCacheKey(&other, "b1", env)},
		{"another workdir", BuildCacheKey(&wd, "b1", env)},
		{"another environment", BuildCacheKey(c, "b1", func(card.Command) []string { return []string{"PATH=/usr/local/bin"} })},
		{"a card env", BuildCacheKey(&cardEnv, "b1", DefaultEnv(func(string) string { return "" }))},
	} {
		if tc.key == k || tc.key == BuildCacheKey(c, "b1", DefaultEnv(func(string) string { return "" })) {
			t.Errorf("BuildCacheKey with %s = %s, want a new key", tc.name, tc.key)
		}
	}
}

// TestBuildCacheKeyPrepare: the card's prepare command is part of the
// key (what it fetched is what builds read), every field of it; a card
// without one keeps the key it had before cards could have one.
func TestBuildCacheKeyPrepare(t *testing.T) {
	c := testCard(t)
	env := DefaultEnv(func(string) string { return "" })
	k := BuildCacheKey(c, "b1", env)
	prep := *c
	prep.Prepare = &card.Prepare{Workdir: ".", Cmd: []string{"go", "mod", "download"}, Timeout: card.DefaultTimeout}
	kp := BuildCacheKey(&prep, "b1", env)
	if kp == k {
		t.Fatalf("BuildCacheKey with a prepare command = %s, the key without one", kp)
	}
	seen := map[string]string{k: "no prepare", kp: "prepare"}
	for name, change := range map[string]func(p *card.Prepare){
		"argv":    func(p *card.Prepare) { p.Cmd = []string{"go", "mod", "download", "-x"} },
		"workdir": func(p *card.Prepare) { p.Workdir = "sub" },
		"env":     func(p *card.Prepare) { p.Env = map[string]string{"GOPROXY": "file:///proxy"} },
	} {
		o := prep
		p := *prep.Prepare
		change(&p)
		o.Prepare = &p
		got := BuildCacheKey(&o, "b1", env)
		if other, ok := seen[got]; ok {
			t.Errorf("BuildCacheKey with another prepare %s = the key of %s", name, other)
		}
		seen[got] = name
	}
	// A timeout builds nothing different.
	o := prep
	p := *prep.Prepare
	p.Timeout = time.Minute
	o.Prepare = &p
	if got := BuildCacheKey(&o, "b1", env); got != kp {
		t.Errorf("BuildCacheKey with another prepare timeout = %s, want %s", got, kp)
	}
}

package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/sandbox"
)

const prepareCard = `id: "T-PREPARE"
base_ref: "main"
fail: {cmd: ["sh", "-c", "test \"$(cat \"$FAILPASS_DEPS/fetched\")\" = fetched || exit 9; sh tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "-c", "echo x > \"$FAILPASS_DEPS/poison\" && exit 8; test -f \"$FAILPASS_DEPS/fetched\" || exit 9; sh tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "tests/invariant.sh"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 20}
prepare: {cmd: ["sh", "-c", "echo fetched > \"$FAILPASS_DEPS/fetched\" && echo run >> \"$FAILPASS_DEPS/runs\""]}
`

// TestPrepareContained: the prepare command runs once per key before the
// base runs, alone and in a batch, and fills the dependency folder the
// base and patched runs read and cannot write; a failing one is a
// *PrepareError, not a verdict.
func TestPrepareContained(t *testing.T) {
	if !sandbox.Probe().Has(sandbox.Filesystem) {
		t.Skip("this machine cannot provide the filesystem layer")
	}
	repo, base := newRepo(t)
	c, err := card.Parse("card.yml", []byte(prepareCard))
	if err != nil {
		t.Fatal(err)
	}
	diff := mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})
	ctx := context.Background()
	o := Options{Bound: testBound(t, repo, c, base), Diff: diff, DiffName: "fix", AllowUnsigned: true}
	for i := 0; i < 2; i++ {
		v, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if v.Verdict != Pass {
			t.Fatalf("Run %d = %s %s, want a pass", i+1, v.Verdict, v.Reason)
		}
	}
	b := NewBatch(BatchConfig{Repo: repo, Jobs: 1})
	defer b.Close(ctx)
	if v, err := b.Gate(ctx, o); err != nil || v.Verdict != Pass {
		t.Fatalf("Batch.Gate = %v, %v; want a pass", v, err)
	}
	deps := testBound(t, repo, c, base).DepsDir()
	if b, _ := os.ReadFile(filepath.Join(deps, "runs")); string(b) != "run\n" {
		t.Errorf("prepare runs = %q, want one", b)
	}
	if _, err := os.Stat(filepath.Join(deps, "poison")); err == nil {
		t.Errorf("a patched run wrote the dependency folder")
	}

	bad := *c
	bad.Prepare = &card.Prepare{Workdir: ".", Cmd: []string{"sh", "-c", "exit 3"}, Timeout: card.DefaultTimeout}
	o.Card = &bad
	_, err = Run(ctx, o)
	var pe *PrepareError
	if !errors.As(err, &pe) || pe.Result != "exit 3" || !strings.HasSuffix(pe.Log, "prepare.log") {
		t.Fatalf("Run(failing prepare) = %v, want a *PrepareError for exit 3", err)
	}
	if sandbox.DepsReady((&Bound{Repo: repo, Card: &bad, Base: base, Env: DefaultEnv(os.Getenv)}).DepsDir()) {
		t.Errorf("a failed prepare command left its folder marked done")
	}
}

// TestPrepareOff: uncontained, the prepare command runs before the base
// runs of every gate, in the user's environment.
func TestPrepareOff(t *testing.T) {
	repo, base := newRepo(t)
	out := t.TempDir()
	text := strings.ReplaceAll(`id: "T-PREPARE-OFF"
base_ref: "main"
fail: {cmd: ["sh", "-c", "test -f @OUT@/runs || exit 9; sh tests/check.sh"], expect_exit: 1}
pass: {cmd: ["sh", "tests/check.sh"], expect_exit: 0}
invariant: {cmd: ["sh", "tests/invariant.sh"], expect_exit: 0}
budget: {max_files: 2, max_changed_lines: 20}
prepare: {cmd: ["sh", "-c", "echo run >> @OUT@/runs"]}
`, "@OUT@", out)
	c, err := card.Parse("card.yml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	diff := mkdiff(t, repo.Dir, map[string]string{"src/lib.sh": "answer=42\n"})
	o := Options{Bound: testBound(t, repo, c, base), Diff: diff, DiffName: "fix", AllowUnsigned: true, Sandbox: SandboxOff}
	for i := 0; i < 2; i++ {
		if v, err := Run(context.Background(), o); err != nil || v.Verdict != Pass {
			t.Fatalf("Run %d (SandboxOff) = %v, %v; want a pass", i+1, v, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "runs")); string(b) != "run\nrun\n" {
		t.Errorf("prepare runs = %q, want one per gate", b)
	}
}

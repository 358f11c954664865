// Package fromcommit is `card from-commit`: a contract card built from an
// upstream fix commit (what SWE-bench calls an instance): a base made of the fix's
// parent plus the fix's test changes, the tests that fail on that base and
// pass with the fix (found by running them), and the fix's other changes
// as the reference diff the card must admit.
package fromcommit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/pathglob"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/testrunner"
	"github.com/failpass/failpass/internal/worktree"
)

// maxLog bounds the output of one discovery run (`go test -json` of a
// whole package is verbose); a run past it is trouble, not a verdict.
const maxLog = 32 << 20

// maxRounds bounds the re-runs that collect tests a crashing test binary
// never reached, or that find the tests the invariant must skip.
const maxRounds = 5

// Options says which commit to build an instance from and how to run its
// tests.
type Options struct {
	Repo *gitx.Repo
	Rev  string
	// FindPython returns the absolute interpreter a Python card names,
	// one that can import module (the CLI's --python, else a search).
	FindPython func(ctx context.Context, module string) (string, error)
	// Env is the environment of a discovery run of cmd, as card sign
	// gives the card's commands.
	Env func(cmd card.Command) []string
	// Policy is the sandbox discovery runs in, given the base; nil runs
	// them uncontained.
	Policy func(base string) *sandbox.Policy
	// LogDir keeps every discovery run's output.
	LogDir string
	// Step reports a step starting; the returned function, that it ended.
	// Nil reports nothing.
	Step func(name string) func()
	// Getenv reads the user's environment for what fetching a Go
	// module's dependencies needs beyond Env (GOPROXY, proxies); nil
	// reads none of it.
	Getenv func(string) string
}

// Instance is a card built from a fix commit, with its reference fix.
type Instance struct {
	Rev, Parent, Base string // full commit ids
	BaseRef           string // BasesRef + the first 12 digits of Rev
	Ecosystem         Ecosystem
	Runner            testrunner.Kind
	Card              *card.Card
	// Reference is every non-test change of Rev as a binary git diff
	// from Base; Base with it applied has Rev's tree.
	Reference []byte
	// FailToPass names the tests the fail and pass commands run: "pkg
	// TestName" for Go, node ids for pytest.
	FailToPass []string
	// Notes are what the user should know: deny globs left out because
	// the fix touches them, tests the invariant skips.
	Notes []string
	// Prepare is the card's prepare command, when its runs need what a
	// clean machine lacks (a Go module's dependencies).
	Prepare *card.Prepare
}

// UnusableError says the commit cannot become a card, and why: its base
// does not build, no test fails before and passes after, it changes only
// tests. It is the commit's verdict, not trouble.
type UnusableError struct {
	Rev   string
	Cause string
	Hints []string
}

func (e *UnusableError) Error() string {
	return fmt.Sprintf("commit %s is unusable: %s", short(e.Rev), e.Cause)
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// EnvError says the tests could not run here for a reason outside the
// commit (modules that cannot be fetched): trouble, not a verdict.
type EnvError struct {
	Msg   string
	Hints []string
}

func (e *EnvError) Error() string { return e.Msg }

// UserFacing marks the error as the user's to fix.
func (e *EnvError) UserFacing() bool { return true }

// RevError says REV names no commit, or one with no parent.
type RevError struct{ Rev, Msg string }

func (e *RevError) Error() string { return fmt.Sprintf("%s %s", e.Rev, e.Msg) }

// UserFacing marks the error as the user's to fix.
func (e *RevError) UserFacing() bool { return true }

type builder struct {
	o      Options
	inst   *Instance
	wt     *worktree.Worktree
	sess   *run.Session
	policy *sandbox.Policy
	nlog   int
	py     string // the Python interpreter of a Python card
	// srcDirs are the base's src-layout folders (see pySrc), once known.
	srcDirs *[]string
}

// Build makes the base, the reference diff and the card for o.Rev. It
// leaves the user's checkout and index untouched; the only lasting change
// to the repository is the ref that keeps the base.
func Build(ctx context.Context, o Options) (ret *Instance, err error) {
	b := &builder{o: o, inst: &Instance{}}
	rev, err := revParse(ctx, o.Repo, o.Rev)
	if err != nil {
		return nil, err
	}
	if rev == "" {
		return nil, &RevError{Rev: o.Rev, Msg: "does not name a commit in " + o.Repo.Dir}
	}
	parent, err := revParse(ctx, o.Repo, rev+"^1")
	if err != nil {
		return nil, err
	}
	if parent == "" {
		return nil, &UnusableError{Rev: rev, Cause: "it has no parent (a root commit): there is no tree before the fix"}
	}
	in := b.inst
	in.Rev, in.Parent, in.BaseRef = rev, parent, BasesRef+rev[:12]

	done := b.step("reading the commit")
	all, err := changes(ctx, o.Repo, parent, rev)
	if err != nil {
		return nil, err
	}
	eco, err := detect(rev, all)
	if err != nil {
		return nil, err
	}
	in.Ecosystem = eco
	if eco == Python {
		// The interpreter is settled before anything is made: a wrong
		// --python is the user's to fix, not a finding about the commit.
		// pytest when the interpreter has it (it runs unittest cases
		// too, and names every test), else unittest.
		if o.FindPython == nil {
			return nil, errors.New("fromcommit: no way to find a Python interpreter")
		}
		in.Runner = testrunner.Pytest
		if b.py, err = o.FindPython(ctx, "pytest"); err != nil {
			var uerr error
			if b.py, uerr = o.FindPython(ctx, "unittest"); uerr != nil {
				return nil, err
			}
			in.Runner = testrunner.Unittest
		}
	}
	var tests []Change
	var fix []string
	for _, c := range all {
		if IsTestFile(eco, c.Path) {
			tests = append(tests, c)
		} else {
			fix = append(fix, c.Path)
		}
	}
	if len(fix) == 0 {
		return nil, &UnusableError{Rev: rev, Cause: "it changes only test files: there is no fix to lock"}
	}
	for _, c := range tests {
		if strings.HasPrefix(c.Path, "-") {
			// A runner would read such a name as an option.
			return nil, &UnusableError{Rev: rev, Cause: fmt.Sprintf("its test file %q starts with \"-\"", c.Path)}
		}
	}
	done()

	done = b.step("making the base")
	existed, err := revParse(ctx, o.Repo, in.BaseRef)
	if err != nil {
		return nil, err
	}
	if in.Base, err = MakeBase(ctx, o.Repo, parent, rev, tests); err != nil {
		return nil, err
	}
	defer func() {
		// An unusable commit leaves no base behind, unless an earlier
		// build kept it (the same commit always makes the same base).
		if ret == nil && existed == "" {
			o.Repo.Git(context.WithoutCancel(ctx), "update-ref", "-d", in.BaseRef, in.Base)
		}
	}()
	if in.Reference, err = referenceDiff(ctx, o.Repo, in.Base, rev, fix); err != nil {
		return nil, err
	}
	if len(in.Reference) > patch.MaxSize {
		return nil, &UnusableError{Rev: rev, Cause: fmt.Sprintf("its non-test change is %d bytes, more than a gate reads (%d)", len(in.Reference), patch.MaxSize)}
	}
	// The budget must admit the reference; a card that cannot (a binary
	// or symlink change) is known before any test runs.
	c := &card.Card{
		ID:      "fix-" + rev[:12],
		Origin:  "commit " + rev,
		BaseRef: in.BaseRef,
		BaseSHA: in.Base,
	}
	placeholder := card.Command{Workdir: ".", Cmd: []string{"true"}}
	c.Fail, c.Pass, c.Invariant = placeholder, placeholder, placeholder
	c.Fail.ExpectExit = 1
	if err := b.budget(ctx, c); err != nil {
		return nil, err
	}
	done()

	if b.wt, err = worktree.Add(ctx, o.Repo, in.Base); err != nil {
		return nil, err
	}
	defer b.wt.Remove(ctx)
	if o.Policy != nil {
		b.policy = o.Policy(in.Base)
	}
	b.sess = run.NewSession()
	defer b.sess.Close()

	var fail, inv card.Command
	switch eco {
	case Go:
		in.Runner = testrunner.GoTest
		fail, inv, err = b.goTests(ctx, tests)
	case Python:
		if in.Runner == testrunner.Unittest {
			fail, inv, err = b.unittestTests(ctx, tests)
		} else {
			fail, inv, err = b.pyTests(ctx, tests)
		}
	}
	if err != nil {
		return nil, err
	}
	fail.ExpectExit = 1
	c.Fail, c.Pass, c.Invariant = fail, fail, inv
	c.Pass.ExpectExit = 0
	c.Prepare = in.Prepare
	if err := b.budget(ctx, c); err != nil {
		return nil, err
	}
	// The commands must read as what they are to the rest of failpass
	// (the harness rule, the canary, the environment check).
	for _, r := range card.Roles {
		cmd := c.Command(r)
		if got := testrunner.Recognize(cmd.Cmd, cmd.Workdir); got.Kind != in.Runner {
			return nil, fmt.Errorf("the %s command built from %s reads as runner %q, not %q", r, short(rev), got.Kind, in.Runner)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("the card built from %s is not valid: %w", short(rev), err)
	}
	in.Card = c
	return in, nil
}

// step reports a step to o.Step.
func (b *builder) step(name string) func() {
	if b.o.Step == nil {
		return func() {}
	}
	return b.o.Step(name)
}

// detect says which ecosystem rev's test changes belong to: the one whose
// runnable test files it changes.
func detect(rev string, all []Change) (Ecosystem, error) {
	var goTests, pyTests bool
	for _, c := range all {
		switch {
		case strings.HasSuffix(c.Path, "_test.go"):
			goTests = true
		case isPythonTestModule(c.Path):
			pyTests = true
		}
	}
	switch {
	case goTests && pyTests:
		return "", &UnusableError{Rev: rev, Cause: "it changes both Go and Python test files; from-commit builds a card for one runner",
			Hints: []string{"write the card by hand: failpass card init"}}
	case goTests:
		return Go, nil
	case pyTests:
		return Python, nil
	}
	return "", &UnusableError{Rev: rev, Cause: "it changes no test file (Go *_test.go; Python test_*.py or *_test.py): nothing shows the bug",
		Hints: []string{"from-commit needs a fix that adds or changes the test proving it"}}
}

// referenceDiff is rev's change to paths, from base (which has rev's
// test changes already), as a binary git diff with full object ids and
// fixed a/ b/ prefixes whatever the user's diff config says.
func referenceDiff(ctx context.Context, repo *gitx.Repo, base, rev string, paths []string) ([]byte, error) {
	args := []string{"diff", "--binary", "--full-index", "--no-renames", "--no-color", "--no-relative",
		"--src-prefix=a/", "--dst-prefix=b/", "--submodule=short", base, rev, "--"}
	out, err := gitx.CommandEnv(ctx, repo.Dir, nil, []string{"GIT_LITERAL_PATHSPECS=1"}, append(args, paths...)...)
	if err != nil {
		return nil, fmt.Errorf("reference diff: %w", err)
	}
	return out, nil
}

// Slack added to the reference's own size, documented in docs/card.md: a
// candidate may touch one more file, and change a quarter more lines (at
// least ten more) than the upstream fix did.
const (
	slackFiles    = 1
	slackLinesMin = 10
	slackLinesPct = 25
)

// denyGlobs are the paths a fix of each ecosystem should not touch:
// continuous integration, packaging and dependency pins, and the tests
// themselves (the oracle).
var denyGlobs = map[Ecosystem][]string{
	Go: {".github/**", ".gitlab-ci.yml", ".circleci/**", ".travis.yml",
		"go.mod", "go.sum", "go.work", "go.work.sum", "vendor/**",
		"*_test.go", "testdata/"},
	Python: {".github/**", ".gitlab-ci.yml", ".circleci/**", ".travis.yml",
		"pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "noxfile.py", "pytest.ini", "MANIFEST.in",
		"requirements*.txt", "poetry.lock", "Pipfile", "Pipfile.lock", "uv.lock", "pdm.lock",
		"conftest.py", "test_*.py", "*_test.py", "tests/", "test/"},
}

// budget sets c's budget from the reference and checks, exactly as a gate
// does, that the card admits it.
func (b *builder) budget(ctx context.Context, c *card.Card) error {
	in := b.inst
	cs, err := gitpatch.Read(ctx, in.Reference)
	if err != nil {
		return fmt.Errorf("reference diff: %w", err)
	}
	files, lines := cs.ChangedFiles(), cs.ChangedLines()
	c.Budget.MaxFiles = files + slackFiles
	c.Budget.MaxChangedLines = lines + max(slackLinesMin, (lines*slackLinesPct+99)/100)
	c.Budget.DenyGlobs = nil
	in.Notes = slices.DeleteFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, "deny glob ") })
	for _, g := range denyGlobs[in.Ecosystem] {
		p, err := pathglob.Compile(g)
		if err != nil {
			return err // the globs above are constants
		}
		hit := ""
		for _, path := range cs.Paths() {
			if p.Match(path) {
				hit = path
				break
			}
		}
		if hit != "" {
			in.Notes = append(in.Notes, fmt.Sprintf("deny glob %q left out: the fix itself changes %s", g, hit))
			continue
		}
		c.Budget.DenyGlobs = append(c.Budget.DenyGlobs, g)
	}
	// What the fix changes among the runner's implicit inputs (a
	// pyproject.toml version bump, a helper only the tests import) the
	// card must allow by name, or no candidate could make the fix; each
	// is a note, since it also lets a candidate change that file.
	c.Budget.AllowHarness = nil
	in.Notes = slices.DeleteFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, "budget.allow_harness ") })
	// The card being built, bound to the base this command made.
	bound := &gate.Bound{Repo: b.o.Repo, Card: c, Base: in.Base}
	inputs, err := bound.HarnessInputs(ctx, cs.Paths())
	if err != nil {
		return err
	}
	for _, path := range slices.Sorted(maps.Keys(inputs)) {
		if _, err := pathglob.Compile(path); err != nil || strings.ContainsAny(path, "*?[\\") {
			continue // not a literal glob: the static check below says so
		}
		c.Budget.AllowHarness = append(c.Budget.AllowHarness, path)
		in.Notes = append(in.Notes, fmt.Sprintf("budget.allow_harness %q: the fix itself changes it (%s)", path, inputs[path]))
	}
	_, rule, reason, err := gate.Static(ctx, bound, in.Reference)
	if err != nil {
		return err
	}
	if rule != "" {
		return &UnusableError{Rev: in.Rev, Cause: fmt.Sprintf("no card can admit its own change: %s: %s", rule, reason)}
	}
	return nil
}

// notAlone is the unusable verdict of a commit whose every chosen test
// flipped only beside the rest of its package or files (goAlone,
// pyAlone): alone says how each one ran alone.
func (b *builder) notAlone(alone []string) error {
	return &UnusableError{Rev: b.inst.Rev, Cause: "the tests that fail on the base and pass with the fix do so only beside the other tests of their package or file (" +
		strings.Join(alone, "; ") + "): their result depends on state other tests leave, and a card runs its tests alone"}
}

// leftOut notes the chosen tests that a run alone dropped.
func (b *builder) leftOut(alone []string) {
	slices.Sort(alone)
	for _, a := range alone {
		b.inst.Notes = append(b.inst.Notes, "left out, as its result depends on other tests: "+a)
	}
}

// aloneIDs runs the test ids of f as the card's fail and pass commands
// will, alone (run runs the ids on a side and says how each ended), on
// the base and with the fix, and drops every id that does not fail there
// on the base (one of failed) or pass with the fix (passed): discovery
// ran them beside the rest of their package or files, and a result that
// depends on state other tests leave would make a card that card sign
// refuses minutes later. It runs again after a drop, up to maxRounds times, and returns the
// ids left.
func (b *builder) aloneIDs(f []string, run func(side, []string) (map[string]string, error), passed string, failed ...string) ([]string, error) {
	var alone []string
	for round := 0; round < maxRounds; round++ {
		dropped := false
		for _, s := range []side{onBase, onFix} {
			if len(f) == 0 {
				return nil, b.notAlone(alone)
			}
			status, err := run(s, f)
			if err != nil {
				return nil, err
			}
			f = slices.DeleteFunc(f, func(id string) bool {
				got := status[id]
				if s == onFix && got == passed || s == onBase && slices.Contains(failed, got) {
					return false
				}
				if got == "" {
					got = "did not run"
				}
				alone = append(alone, fmt.Sprintf("%s alone %s: %s", id, s.where(), strings.ToLower(got)))
				dropped = true
				return true
			})
		}
		if !dropped {
			b.leftOut(alone)
			return f, nil
		}
	}
	return nil, b.aloneRounds()
}

// aloneRounds is the verdict of runs alone that never settled.
func (b *builder) aloneRounds() error {
	return &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the chosen tests still changed their results when run alone after %d rounds", maxRounds)}
}

// side is the tree a discovery run sees.
type side string

const (
	onBase side = "base"
	onFix  side = "fix"
)

func (s side) where() string {
	if s == onBase {
		return "on the base"
	}
	return "with the fix"
}

// exec runs argv in workdir on a fresh checkout of the base, with the
// reference fix applied for onFix, and returns its output.
func (b *builder) exec(ctx context.Context, s side, workdir string, argv []string) ([]byte, run.Result, error) {
	if err := b.wt.Reset(ctx, b.inst.Base); err != nil {
		return nil, run.Result{}, err
	}
	if s == onFix {
		if _, err := b.wt.GitInput(ctx, b.inst.Reference, "apply", "--whitespace=nowarn", "-"); err != nil {
			var ge *gitx.Error
			if errors.As(err, &ge) {
				return nil, run.Result{}, &UnusableError{Rev: b.inst.Rev, Cause: "its non-test change does not apply to the base: " + ge.Reason()}
			}
			return nil, run.Result{}, err
		}
	}
	b.nlog++
	log := filepath.Join(b.o.LogDir, fmt.Sprintf("%02d-%s.log", b.nlog, s))
	cmd := card.Command{Workdir: workdir, Cmd: argv, Timeout: card.DefaultTimeout}
	if b.py != "" {
		var err error
		if cmd.Env, err = b.pyEnv(ctx, workdir); err != nil {
			return nil, run.Result{}, err
		}
	}
	var env []string
	if b.o.Env != nil {
		env = b.o.Env(cmd)
	}
	res, err := run.Run(ctx, run.Spec{Argv: argv, Root: b.wt.Dir, Workdir: workdir, Env: env, Timeout: card.DefaultTimeout,
		Log: log, MaxLog: maxLog, Sandbox: b.policy, Session: b.sess})
	if err != nil {
		return nil, res, err
	}
	if ctx.Err() != nil {
		return nil, res, ctx.Err()
	}
	if res.LogTruncated {
		return nil, res, fmt.Errorf("%s: the test output passed %d bytes", log, maxLog)
	}
	if res.Inconclusive() {
		return nil, res, &UnusableError{Rev: b.inst.Rev, Cause: fmt.Sprintf("the test run %s was inconclusive: %s (log: %s)", s.where(), res, log)}
	}
	out, err := os.ReadFile(log)
	if err != nil {
		return nil, res, err
	}
	return out, res, nil
}

// pyEnv is the env of a Python command run in workdir: PYTHONPATH naming
// the base's src-layout folders, relative to workdir, or nil. A project
// that keeps its packages under src/ (src/pkg/__init__.py, and no pkg/ at
// the root) is importable by its tests only when installed or with src on
// PYTHONPATH; nothing installs it in the sandbox, so the card says so.
func (b *builder) pyEnv(ctx context.Context, workdir string) (map[string]string, error) {
	if b.srcDirs == nil {
		dirs, err := srcLayout(ctx, b.o.Repo, b.inst.Base)
		if err != nil {
			return nil, err
		}
		b.srcDirs = &dirs
	}
	var rel []string
	for _, d := range *b.srcDirs {
		r, err := filepath.Rel(filepath.FromSlash(workdir), filepath.FromSlash(d))
		if err != nil {
			return nil, err
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	if len(rel) == 0 {
		return nil, nil
	}
	return map[string]string{"PYTHONPATH": strings.Join(rel, ":")}, nil
}

// srcLayout returns ["src"] when base keeps a package under src/ that the
// root does not have, else nothing.
func srcLayout(ctx context.Context, repo *gitx.Repo, base string) ([]string, error) {
	out, err := gitx.CommandEnv(ctx, repo.Dir, nil, []string{"GIT_LITERAL_PATHSPECS=1"}, "ls-tree", "-r", "-z", "--name-only", base, "--", "src/")
	if err != nil {
		return nil, err
	}
	root, err := gitx.CommandEnv(ctx, repo.Dir, nil, nil, "ls-tree", "-z", "--name-only", base)
	if err != nil {
		return nil, err
	}
	atRoot := map[string]bool{}
	for _, n := range strings.Split(string(root), "\x00") {
		atRoot[n] = true
	}
	for _, p := range strings.Split(string(out), "\x00") {
		parts := strings.Split(p, "/")
		if len(parts) == 3 && parts[2] == "__init__.py" && !atRoot[parts[1]] {
			return []string{"src"}, nil
		}
	}
	return nil, nil
}

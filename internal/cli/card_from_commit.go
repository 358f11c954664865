package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/fromcommit"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/logdir"
	"github.com/failpass/failpass/internal/pathglob"
	"github.com/failpass/failpass/internal/python"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/signoff"
)

const cardFromCommitUsage = "failpass card from-commit REV [--repo DIR] [-o CARD] [--reference-out DIFF] [--python PATH] [--force] [--sandbox=off] [--quiet]"

// runCardFromCommit is `failpass card from-commit REV`: build a card and
// its reference fix from an upstream fix commit (see internal/fromcommit).
// Exit 0 written; 1 the commit is unusable (the cause printed); 2 trouble.
func runCardFromCommit(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card from-commit", cardFromCommitUsage)
	repoDir := fs.String("repo", ".", "the repository `DIR` holding REV")
	out := fs.String("o", "", "write the card to `CARD` (default: fix-<REV>.yml in the current folder)")
	refOut := fs.String("reference-out", "", "write the reference fix to `DIFF` (default: CARD without .yml, plus .reference.diff)")
	pythonFlag := fs.String("python", "", "the Python interpreter `PATH` a Python card names (default: found, see docs/card.md)")
	force := fs.Bool("force", false, "overwrite CARD and DIFF if they exist")
	quiet := fs.Bool("quiet", false, "print no progress on stderr")
	sandboxMode := fs.String("sandbox", "on", "contain the test runs (`on` or off)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return &UsageError{Msg: "missing REV", Hint: "name the fix commit: failpass card from-commit <commit>"}
	case len(pos) > 1:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[1]), Hint: "from-commit takes one commit"}
	case strings.HasPrefix(pos[0], "-") || pos[0] == "":
		return &UsageError{Msg: fmt.Sprintf("REV %q is not a revision", pos[0])}
	}
	if *sandboxMode != "on" && *sandboxMode != "off" {
		return &UsageError{Msg: fmt.Sprintf("--sandbox=%s: want on or off", *sandboxMode)}
	}
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return repoError(err)
	}
	// The output paths are settled, and refused if taken, before anything
	// runs: a build takes minutes.
	rev := pos[0]
	if *out == "" {
		full, err := repo.Commit(ctx, rev)
		if err != nil || len(full) < 12 {
			return Errorf("%s does not name a commit in %s", rev, repo.Dir).Hint("fetch it, or name it by its full id")
		}
		*out = "fix-" + full[:12] + ".yml"
	}
	if *refOut == "" {
		*refOut = strings.TrimSuffix(strings.TrimSuffix(*out, ".yml"), ".yaml") + ".reference.diff"
	}
	if *refOut == *out {
		return &UsageError{Msg: "-o and --reference-out name the same file"}
	}
	if !*force {
		for _, p := range []string{*out, *refOut} {
			if _, err := os.Lstat(p); err == nil {
				return Errorf("%s already exists", p).Hint("pass --force to overwrite it, or choose another -o / --reference-out")
			}
		}
	}
	logDir, err := logdir.New(repo.StateDir(), "from-commit")
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "logs: %s\n", logDir)
	off := *sandboxMode == "off"
	if off {
		fmt.Fprintln(env.Stderr, "failpass: warning: --sandbox=off: the commit's tests run UNCONTAINED, with your network, files and processes")
	}
	// Every from-commit of a repository shares one build cache: a commit's
	// tests compile mostly what the last one compiled. A candidate never
	// runs with it; only upstream commits the maintainer chose do, and
	// they write it under its lock, as base runs write a card's.
	cacheDir := sandbox.BuildCacheDir(repo.CommonDir, "from-commit")
	if !off {
		unlock, err := sandbox.LockCache(cacheDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	prog := newStepProgress(env, "card from-commit", *quiet)
	var step func(string) func()
	if prog != nil {
		step = prog.step
	}
	in, err := fromcommit.Build(ctx, fromcommit.Options{
		Repo: repo,
		Rev:  rev,
		FindPython: func(ctx context.Context, module string) (string, error) {
			return python.Find(ctx, env.Getenv, *pythonFlag, module)
		},
		Env: gate.DefaultEnv(env.Getenv),
		Policy: func(base string) *sandbox.Policy {
			if off {
				return nil
			}
			return &sandbox.Policy{CacheDir: cacheDir}
		},
		LogDir: logDir,
		Step:   step,
		Getenv: env.Getenv,
	})
	prog.close()
	var ue *fromcommit.UnusableError
	switch {
	case err != nil && ctx.Err() != nil:
		return Errorf("interrupted; nothing was written")
	case errors.As(err, &ue):
		printUnusable(env, ue)
		return Exit(ExitFail)
	}
	var ee *fromcommit.EnvError
	if errors.As(err, &ee) {
		e := Errorf("%s", ee.Msg)
		for _, h := range ee.Hints {
			e = e.Hint("%s", h)
		}
		return e
	}
	if err != nil {
		return err
	}
	data, err := card.Marshal(in.Card)
	if err != nil {
		return err
	}
	// The header names the files as seen from the card's own folder: a
	// card is committed and shared, and the maintainer's absolute paths
	// mean nothing elsewhere (and say more about their machine than a
	// card should).
	cardName, refName := filepath.Base(*out), cardRelative(*out, *refOut)
	header := fmt.Sprintf("# Built by failpass card from-commit from %s (%s).\n# Base: %s, kept as %s.\n# Reference fix: %s. Sign with, from this card's folder:\n#   failpass card sign --card %s --reference %s\n",
		in.Rev, commitSubject(ctx, repo, in.Rev), in.Base, in.BaseRef, refName, cardName, refName)
	data = append([]byte(header), data...)
	if _, err := card.Parse(*out, data); err != nil {
		return fmt.Errorf("the card from-commit wrote does not parse: %w", err)
	}
	if err := writeNew(*refOut, in.Reference, *force); err != nil {
		return Errorf("cannot write %s: %v", *refOut, err).Hint("choose a --reference-out DIFF in a writable folder")
	}
	if err := writeNew(*out, data, *force); err != nil {
		return Errorf("cannot write %s: %v", *out, err).Hint("choose a -o CARD in a writable folder")
	}
	fmt.Fprintf(env.Stdout, "base: %s (%s)\nrunner: %s\n", in.Base, in.BaseRef, in.Runner)
	// Test names and notes come from the commit's tests and their output.
	for _, t := range in.FailToPass {
		fmt.Fprintf(env.Stdout, "fail to pass: %s\n", Sanitize(t))
	}
	for _, n := range in.Notes {
		fmt.Fprintf(env.Stdout, "note: %s\n", Sanitize(n))
	}
	b := in.Card.Budget
	fmt.Fprintf(env.Stdout, "budget: max_files %d, max_changed_lines %d, deny_globs [%s]\n", b.MaxFiles, b.MaxChangedLines, strings.Join(b.DenyGlobs, ", "))
	fmt.Fprintf(env.Stdout, "reference %s: written (%s)\ncard %s: written\n", *refOut, signoff.ReferenceDigest(in.Reference), *out)
	fmt.Fprintf(env.Stderr, "next: failpass card sign --card %s --reference %s\n", *out, *refOut)
	return nil
}

// cardRelative names path as seen from the folder of the card at
// cardPath; a path that cannot be named from there without leaving it is
// named by its file name alone.
func cardRelative(cardPath, path string) string {
	dir, err1 := filepath.Abs(filepath.Dir(cardPath))
	p, err2 := filepath.Abs(path)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(path)
}

// commitSubject is rev's subject line, kept to characters a card's
// comment may hold.
func commitSubject(ctx context.Context, repo *gitx.Repo, rev string) string {
	subject, err := repo.Subject(ctx, rev)
	if err != nil {
		return ""
	}
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || pathglob.IsBadRune(r) {
			return -1
		}
		return r
	}, subject)
	if len(s) > 100 {
		s = s[:100]
	}
	return strings.ToValidUTF8(s, "")
}

// printUnusable says why the commit makes no card. The cause and hints
// quote the commit (its paths, its tests' output: a collection error is
// whatever the test module raised), so they are sanitized like every
// error line.
func printUnusable(env *Env, ue *fromcommit.UnusableError) {
	fmt.Fprintf(env.Stdout, "unusable: %s\n", Sanitize(ue.Cause))
	printHints(env.Stderr, ue.Hints)
}

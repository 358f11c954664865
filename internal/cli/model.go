package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/atomicfile"

	"github.com/failpass/failpass/internal/budget"
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitpatch"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/sandbox"
)

const promptUsage = `failpass prompt --card FILE [--diff FILE | --candidate REV] [--stack FILE] [--repo DIR]`

const draftUsage = `failpass draft --card FILE --model SPEC [--stack FILE] [-o FILE] [--repo DIR]
    [--base-url URL] [--key-env VAR] [--timeout DURATION]`

// runPrompt prints exactly what a drafter receives for a card.
func runPrompt(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "prompt", promptUsage)
	cardPath := fs.String("card", "", "the contract card `FILE`")
	diff := fs.String("diff", "", "a candidate diff `FILE` whose --stat the prompt shows")
	candidate := fs.String("candidate", "", "a candidate `REV` whose diff --stat against the base the prompt shows")
	stack := fs.String("stack", "", "a stack trace `FILE` (trimmed to a short bound)")
	repoDir := fs.String("repo", ".", "the repository `DIR`")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	case *cardPath == "":
		return &UsageError{Msg: "--card is required", Hint: "failpass prompt --card issue-contract.yml"}
	case *diff != "" && *candidate != "":
		return &UsageError{Msg: "--diff and --candidate exclude each other"}
	}
	c, err := card.Load(*cardPath)
	if err != nil {
		return err
	}
	parts := model.PromptParts{}
	if parts.Card, err = promptCard(c); err != nil {
		return err
	}
	if parts.Stack, err = readPromptStack(*stack); err != nil {
		return err
	}
	switch {
	case *diff != "":
		d, err := readDiff(env, *diff)
		if err != nil {
			return err
		}
		out, err := gitpatch.Stat(ctx, d)
		if err != nil {
			return Errorf("%s is not a diff git can read: %v", *diff, oneLine(err.Error())).Hint("--diff takes a unified diff (git diff output)")
		}
		parts.DiffStat = string(out)
	case *candidate != "":
		repo, err := gitx.Open(ctx, *repoDir)
		if err != nil {
			return err
		}
		bound, err := bindCard(ctx, env, repo, c, *cardPath)
		if err != nil {
			return err
		}
		rev, err := repo.Commit(ctx, *candidate)
		if err != nil {
			return Errorf("--candidate %q is not a commit in %s", *candidate, repo.Dir).Hint("give a branch, tag or commit of the repository")
		}
		out, err := gitpatch.StatCommits(ctx, repo, bound.Base, rev)
		if err != nil {
			return err
		}
		parts.DiffStat = string(out)
	}
	_, err = io.WriteString(env.Stdout, model.BuildPrompt(parts))
	return err
}

// promptCard is the card as a model sees it: its commands and the
// effective budget (annotations folded in), without signatures and the
// sign-off record, which tell a model nothing it may act on, and without
// the held_out block: a drafter is not told that held-out tests exist,
// where they land or how they run (it never sees the folder either). Nor
// does it see the prepare block: how dependencies are fetched is nothing
// a fix may change, and its env may name a private package index.
func promptCard(c *card.Card) (string, error) {
	v := *c
	v.Budget = c.EffectiveBudget()
	v.Signatures, v.Annotations, v.Signoff, v.HeldOut, v.Prepare = nil, nil, nil, nil, nil
	b, err := card.Marshal(&v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// readPromptStack reads and trims a stack file; "" reads nothing.
func readPromptStack(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return "", Errorf("cannot read stack: %v", err).Hint("--stack takes the path of a text file holding the failing test's stack trace")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, model.MaxStackFile+1))
	if err != nil {
		return "", Errorf("cannot read stack %s: %v", name, err)
	}
	if len(b) > model.MaxStackFile {
		return "", Errorf("stack %s is larger than %d bytes", name, model.MaxStackFile).Hint("give the failing test's trace, not a whole log")
	}
	return model.TrimStack(string(b)), nil
}

// bindCard binds the card read from path to repo, as the gate does; a
// base that does not hold there stops the command.
func bindCard(ctx context.Context, env *Env, repo *gitx.Repo, c *card.Card, path string) (*gate.Bound, error) {
	b, err := gate.Bind(ctx, repo, c, path, env.Getenv)
	if err != nil {
		return nil, err
	}
	if be := b.BaseErr; be != nil {
		e := Errorf("the card's %v", be)
		if be.Resolved == "" {
			e = e.Hint("or run from the repository the card is for (--repo DIR)")
		}
		return nil, e
	}
	return b, nil
}

type draftFlags struct {
	card, model, stack, out, repo, baseURL, keyEnv, sandbox string
	timeout                                                 time.Duration
	roleRead, roleEnv                                       stringList
	roleNetwork                                             bool
}

// runDraft asks a model for a diff against a card, refuses a reply that is
// not one clean diff inside the budget, and writes the diff. It never
// applies anything to the checkout.
func runDraft(ctx context.Context, env *Env, args []string) error {
	var f draftFlags
	fs := newFlags(env, "draft", draftUsage)
	fs.StringVar(&f.card, "card", "", "the contract card `FILE`")
	fs.StringVar(&f.model, "model", "", "the drafter `SPEC`: cmd:PROGRAM or openai/MODEL")
	fs.StringVar(&f.stack, "stack", "", "a stack trace `FILE` (trimmed to a short bound)")
	fs.StringVar(&f.out, "o", "", "write the diff to `FILE` (default: standard output)")
	fs.StringVar(&f.repo, "repo", ".", "the repository `DIR`")
	fs.StringVar(&f.baseURL, "base-url", "", "base `URL` of an openai/ endpoint (default $OPENAI_BASE_URL)")
	fs.StringVar(&f.keyEnv, "key-env", "", "`VAR` holding the openai/ API key (default OPENAI_API_KEY)")
	fs.DurationVar(&f.timeout, "timeout", model.DefaultTimeout, "bound on one model call, as a `DURATION` (90s, 5m)")
	fs.Var(&f.roleRead, "role-read", "a `PATH` a cmd: model program may read (its credentials); repeatable")
	fs.Var(&f.roleEnv, "role-env", "an environment variable `NAME` passed to a cmd: model program; repeatable")
	fs.BoolVar(&f.roleNetwork, "role-network", false, "give a cmd: model program the host's network")
	fs.StringVar(&f.sandbox, "sandbox", "", "off: run a cmd: model program uncontained (default: contained)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	case f.card == "":
		return &UsageError{Msg: "--card is required", Hint: "failpass draft --card issue-contract.yml --model openai/gpt-4o-mini"}
	case f.model == "":
		return &UsageError{Msg: "--model is required", Hint: "--model cmd:./drafter or --model openai/MODEL"}
	case f.timeout <= 0:
		return &UsageError{Msg: "--timeout must be positive"}
	case f.sandbox != "" && f.sandbox != "off":
		return &UsageError{Msg: fmt.Sprintf("--sandbox=%s: the only value is off", f.sandbox)}
	}
	grants, err := roleGrants(f.roleRead, f.roleEnv, f.roleNetwork)
	if err != nil {
		return err
	}
	spec, err := model.ParseSpec(f.model)
	if err != nil {
		return err
	}
	if f.out != "" {
		// Find out now, not after paying for a model call, that the diff
		// cannot be written where asked.
		if fi, err := os.Stat(f.out); err == nil && !fi.Mode().IsRegular() {
			return Errorf("-o %s is not a regular file", f.out).Hint("give the path of the diff file to write")
		}
		if fi, err := os.Stat(filepath.Dir(f.out)); err != nil || !fi.IsDir() {
			return Errorf("-o %s: folder %s does not exist", f.out, filepath.Dir(f.out)).Hint("create the folder first, or write to standard output without -o")
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	c, err := card.Load(f.card)
	if err != nil {
		return err
	}
	repo, err := gitx.Open(ctx, f.repo)
	if err != nil {
		return err
	}
	bound, err := bindCard(ctx, env, repo, c, f.card)
	if err != nil {
		return err
	}
	stack, err := readPromptStack(f.stack)
	if err != nil {
		return err
	}
	cardText, err := promptCard(c)
	if err != nil {
		return err
	}
	adapter, err := model.New(spec, model.Options{BaseURL: f.baseURL, KeyEnv: f.keyEnv, Timeout: f.timeout,
		Getenv: env.Getenv, Dir: cwd, Env: model.RoleEnv(env.Getenv, grants.Env)})
	if err != nil {
		return err
	}
	if model.Local(adapter) && f.sandbox != "off" {
		// The model command runs as a loop role does: contained, with
		// nothing of the user's but what the flags grant.
		if err := containable(); err != nil {
			return err
		}
		adapter = model.Confined(adapter, model.Confinement{Sandbox: &sandbox.Policy{Readable: grants.Read,
			Role: &sandbox.Role{Network: grants.Network}}})
		if short := sandbox.RoleShortfall(sandbox.Probe(), grants.Network); short != "" {
			fmt.Fprintln(env.Stderr, "failpass: the model command runs "+short)
		}
	} else if model.Local(adapter) {
		fmt.Fprintln(env.Stderr, "failpass: warning: --sandbox=off: the model command runs uncontained, as you")
	}
	req := &model.DraftRequest{SchemaVersion: model.RequestSchemaVersion,
		Prompt: model.BuildPrompt(model.PromptParts{Card: cardText, Stack: stack}), Card: cardText, Stack: stack}
	reply, err := model.Draft(ctx, adapter, req)
	if err != nil {
		return refusedOr(env, err)
	}
	cs, reason, err := draftStatic(ctx, bound, reply)
	if err != nil {
		return err
	}
	if reason != "" {
		fmt.Fprintf(env.Stderr, "failpass: draft refused: %s\n", reason)
		return Exit(ExitFail)
	}
	if f.out == "" {
		if _, err := env.Stdout.Write(reply.Diff); err != nil {
			return err
		}
	} else if err := writeDiffFile(f.out, reply.Diff); err != nil {
		return err
	}
	where := f.out
	if where == "" {
		where = "standard output"
	}
	fmt.Fprintf(env.Stderr, "failpass: draft written to %s: %d file(s), %d changed line(s); run 'failpass gate' on it next\n",
		where, cs.ChangedFiles(), cs.ChangedLines())
	return nil
}

// refusedOr ends the command with exit 1 and the reason when err is a
// refusal; anything else is trouble (exit 2).
func refusedOr(env *Env, err error) error {
	var re *model.RefusedError
	if errors.As(err, &re) {
		fmt.Fprintf(env.Stderr, "failpass: draft refused: %s\n", re.Reason)
		return Exit(ExitFail)
	}
	return err
}

// draftStatic checks an extracted diff as the gate's static rules would
// (diff.parse, diff.path, budget.*), then the prose around it. It returns
// the refusal reason, or "" when the draft may be written.
func draftStatic(ctx context.Context, b *gate.Bound, r *model.Reply) (*patch.ChangeSet, string, error) {
	cs, rule, reason, err := gate.Static(ctx, b, r.Diff)
	if err != nil || rule != "" {
		return nil, joinRule(rule, reason), err
	}
	// The prose may name any oracle file, not only the ones the diff
	// touches, so the scope covers the whole base tree.
	files, err := gitpatch.BaseFiles(ctx, b.Repo, b.Base)
	if err != nil {
		return nil, "", err
	}
	scope := budget.CardScope(b.Card, b.InRepo, func(p string) bool { return files[p] })
	denied := func(p string) bool {
		_, hit := scope.Denied(path.Clean(p))
		return hit
	}
	// Prose may name an oracle file by a shorter path (its base name).
	isOracle := func(p string) bool {
		for _, o := range scope.Oracle {
			if o == p || strings.HasSuffix(o, "/"+p) {
				return true
			}
		}
		return false
	}
	if err := model.CheckProse(r.Prose, cs.Paths(), denied, isOracle); err != nil {
		var re *model.RefusedError
		if errors.As(err, &re) {
			return nil, re.Reason, nil
		}
		return nil, "", err
	}
	return cs, "", nil
}

// writeDiffFile writes the diff atomically: a temporary file in the same
// folder, synced, then renamed over name, so a reader never sees half a
// diff.
func writeDiffFile(name string, data []byte) error {
	if err := atomicfile.Write(name, data, 0o644); err != nil {
		return Errorf("cannot write %s: %v", name, err)
	}
	return nil
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// containable says whether a program can be contained here: Landlock or
// a mount namespace (sandbox.Probe), else an error naming the fix.
func containable() error {
	r := sandbox.Probe()
	for _, f := range r.Features {
		if f == string(sandbox.FeatLandlock) || f == string(sandbox.FeatMountNS) {
			return nil
		}
	}
	return Errorf("the model command cannot be contained here: neither Landlock nor a mount namespace is available").
		Hint("run it uncontained, knowing it then reaches everything you can, with --sandbox=off")
}

// joinRule is a refusal reason as draft prints it: "rule: reason".
func joinRule(rule, reason string) string {
	if rule == "" {
		return ""
	}
	return rule + ": " + reason
}

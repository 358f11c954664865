package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/loop"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/sign"
)

const loopStartUsage = `failpass loop start --branch BRANCH --reviewer SPEC --fixer SPEC
    [--base REF] [--card FILE [--allowed-signers FILE | --allow-unsigned]]
    [--invocation FILE] [--decider SPEC] [--lenses LIST] [--cycles N]
    [--review-mode fresh_subagent|in_agent_override --override-authorization WHO]
    [--publish local_commit|update_pr --remote NAME --pr N --pr-head-ref REF --expected-old SHA]
    [--record-key KEY] [--id ID] [--json] [--repo DIR]
    [--role-read PATH]... [--role-env NAME]... [--role-network]`

type loopStartFlags struct {
	branch, reviewer, fixer, base, card, allowedSigners, invocation, decider, lenses string
	reviewMode, overrideAuth, publish, remote, prHeadRef, expectedOld, recordKey     string
	id, repo, baseURL, keyEnv                                                        string
	allowUnsigned, json                                                              bool
	cycles, pr                                                                       int
	roleRead, roleEnv                                                                stringList
	roleNetwork                                                                      bool
}

func runLoopStart(ctx context.Context, env *Env, args []string) (err error) {
	f := &loopStartFlags{}
	fs := newFlags(env, "loop start", loopStartUsage)
	fs.StringVar(&f.branch, "branch", "", "the committed candidate `BRANCH`")
	fs.StringVar(&f.reviewer, "reviewer", "", "reviewer adapter `SPEC` (cmd:PROGRAM or openai/MODEL)")
	fs.StringVar(&f.fixer, "fixer", "", "fixer adapter `SPEC`")
	fs.StringVar(&f.base, "base", "", "comparison base `REF` (default: the card's base_sha)")
	fs.StringVar(&f.card, "card", "", "contract card `FILE`: the change contract, validation and budget")
	fs.StringVar(&f.allowedSigners, "allowed-signers", "", "SSH allowed_signers `FILE` to verify the card against (default: git config gpg.ssh.allowedSignersFile, as the gate)")
	fs.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "use an unsigned card")
	fs.StringVar(&f.invocation, "invocation", "", "a complete invocation document `FILE`")
	fs.StringVar(&f.decider, "decider", "", "external decider adapter `SPEC` (default: the built-in policy)")
	fs.StringVar(&f.lenses, "lenses", "", "lenses that must each have a fresh execution (`LIST`: correctness,solution_simplicity,code_simplicity)")
	fs.IntVar(&f.cycles, "cycles", 0, "fix cycle budget `N`, 1 to 10 (default 3)")
	fs.StringVar(&f.reviewMode, "review-mode", "", "fresh_subagent (default) or in_agent_override")
	fs.StringVar(&f.overrideAuth, "override-authorization", "", "`WHO` allowed the fixer's adapter to review")
	fs.StringVar(&f.publish, "publish", "", "publication policy: local_commit (default) or update_pr")
	fs.StringVar(&f.remote, "remote", "", "git remote `NAME` of the update_pr target")
	fs.IntVar(&f.pr, "pr", 0, "pull request number `N`")
	fs.StringVar(&f.prHeadRef, "pr-head-ref", "", "the pull request's head `REF` on the remote")
	fs.StringVar(&f.expectedOld, "expected-old", "", "the remote head `SHA` the update must replace")
	fs.StringVar(&f.recordKey, "record-key", "", "SSH `KEY` that signs each attempt's gate record (kept in the loop's records/)")
	fs.StringVar(&f.id, "id", "", "invocation `ID` (default: derived from the branch and head)")
	fs.StringVar(&f.repo, "repo", ".", "repository `DIR`")
	fs.StringVar(&f.baseURL, "base-url", "", "base `URL` of openai/ adapters (default $OPENAI_BASE_URL)")
	fs.StringVar(&f.keyEnv, "key-env", "", "`VAR` holding the openai/ API key (default OPENAI_API_KEY)")
	fs.BoolVar(&f.json, "json", false, "print the terminal result as JSON")
	sandboxFlag := fs.String("sandbox", "", "off: run validation uncontained (default: contained)")
	fs.Var(&f.roleRead, "role-read", "a `PATH` the role programs may read (a model tool's credentials); repeatable")
	fs.Var(&f.roleEnv, "role-env", "an environment variable `NAME` passed to the role programs; repeatable")
	fs.BoolVar(&f.roleNetwork, "role-network", false, "give the role programs the host's network (a cmd: role that calls a model)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	defer func() { err = jsonTrouble(env, f.json, err) }()
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "run 'failpass loop start -h' for usage"}
	}
	switch {
	case f.reviewer == "" || f.fixer == "":
		return &UsageError{Msg: "loop start needs --reviewer SPEC and --fixer SPEC", Hint: "e.g. --reviewer cmd:./reviewer --fixer cmd:./fixer"}
	case f.card == "" && f.invocation == "":
		return &UsageError{Msg: "loop start needs --card FILE or --invocation FILE", Hint: "without a card, the goal, acceptance criteria and validation commands come from an invocation document"}
	case f.allowUnsigned && f.allowedSigners != "":
		return &UsageError{Msg: "--allow-unsigned and --allowed-signers exclude each other"}
	case f.recordKey != "" && f.card == "":
		return &UsageError{Msg: "--record-key needs --card FILE", Hint: "the signed record is the gate's verdict on each attempt, which needs the card"}
	}
	if *sandboxFlag != "" && *sandboxFlag != "off" {
		return &UsageError{Msg: fmt.Sprintf("--sandbox=%s: the only value is off", *sandboxFlag)}
	}
	if f.branch == "" && f.invocation == "" {
		return &UsageError{Msg: "loop start needs --branch BRANCH"}
	}
	repo, err := gitx.Open(ctx, f.repo)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	req := loop.Request{Branch: f.branch, Base: f.base, ID: f.id, Cycles: f.cycles, ReviewMode: f.reviewMode,
		OverrideAuthorization: f.overrideAuth, Publish: f.publish, Remote: f.remote, PR: f.pr,
		PRHeadRef: f.prHeadRef, ExpectedOld: f.expectedOld}
	if f.cycles != 0 && (f.cycles < 1 || f.cycles > 10) {
		return Errorf("--cycles %d is out of range", f.cycles).Hint("the cycle budget is 1 to 10 (default 3)")
	}
	settings := &loop.Settings{Reviewer: f.reviewer, Fixer: f.fixer, Decider: f.decider, Card: absPath(f.card),
		Remote: f.remote, BaseURL: f.baseURL, KeyEnv: f.keyEnv, WorkingDir: cwd, AllowUnsigned: f.allowUnsigned,
		AllowedSigners: absPath(f.allowedSigners), NoSandbox: *sandboxFlag == "off", RecordKey: absPath(f.recordKey)}
	if settings.Grants, err = roleGrants(f.roleRead, f.roleEnv, f.roleNetwork); err != nil {
		return err
	}
	if f.lenses != "" {
		if settings.Lenses, err = model.ParseLenses(f.lenses); err != nil {
			return Errorf("--lenses: %v", err)
		}
	}
	var trust sign.Trust
	if f.card != "" {
		if req.Card, trust, err = loop.LoadCard(ctx, repo, settings, env.Getenv, env.Stderr); err != nil {
			return err
		}
	}
	if f.invocation != "" {
		data, err := os.ReadFile(f.invocation)
		if err != nil {
			return Errorf("cannot read the invocation: %v", err)
		}
		if req.From, err = loopdoc.ParseInvocation(data); err != nil {
			return Errorf("invocation %s: %v", f.invocation, err).Hint("'failpass loop validate %s' lists every broken rule", f.invocation)
		}
		if f.remote == "" && req.From.Publication.Policy == "update_pr" {
			return &UsageError{Msg: "an update_pr invocation needs --remote NAME (the git remote that reaches its target)"}
		}
	}
	inv, err := loop.BuildInvocation(ctx, repo, req)
	if err != nil {
		return err
	}
	cfg, err := loop.NewConfig(ctx, repo, settings, req.Card, trust, env.Getenv, env.Stderr)
	if err != nil {
		return err
	}
	if err := loop.Prepare(ctx, cfg, req.Card); err != nil {
		return err
	}
	out, err := loop.Start(ctx, repo, inv, settings, cfg)
	if err != nil {
		return err
	}
	return printOutcome(env, out, f.json)
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// roleGrants checks what --role-read, --role-env and --role-network
// grant the role programs.
func roleGrants(read, names []string, network bool) (loop.Grants, error) {
	g := loop.Grants{Network: network}
	for _, p := range read {
		abs, err := filepath.Abs(p)
		if err != nil || p == "" {
			return g, &UsageError{Msg: fmt.Sprintf("--role-read %q is not a path", p)}
		}
		g.Read = append(g.Read, abs)
	}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "= \t") {
			return g, &UsageError{Msg: fmt.Sprintf("--role-env %q is not a variable name", n)}
		}
		g.Env = append(g.Env, n)
	}
	return g, nil
}

// printOutcome prints the terminal result (JSON with --json, a short
// summary always, on stderr when stdout has the JSON) and maps its state
// onto the exit code: converged 0, anything else 1.
func printOutcome(env *Env, out *loop.Outcome, asJSON bool) error {
	if asJSON {
		env.Stdout.Write(out.JSON)
		fmt.Fprint(env.Stderr, loop.Summary(out.Result))
	} else {
		fmt.Fprint(env.Stdout, loop.Summary(out.Result))
		if out.Persisted {
			fmt.Fprintf(env.Stdout, "documents: %s\n", out.Dir)
		}
	}
	// A missing layer is said where a person reads, not only in the log.
	w := env.Stdout
	if asJSON {
		w = env.Stderr
	}
	for _, l := range out.Containment {
		fmt.Fprintf(w, "MISSING LAYER: %s\n", l)
	}
	if out.Result.TerminalState != "converged" {
		return Exit(ExitFail)
	}
	return nil
}

func runLoopResume(ctx context.Context, env *Env, args []string) (err error) {
	fs := newFlags(env, "loop resume", "failpass loop resume --id ID [--json] [--repo DIR]")
	id := fs.String("id", "", "invocation `ID` to resume")
	asJSON := fs.Bool("json", false, "print the terminal result as JSON")
	repoDir := fs.String("repo", ".", "repository `DIR`")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	defer func() { err = jsonTrouble(env, *asJSON, err) }()
	if len(pos) > 0 || *id == "" {
		return &UsageError{Msg: "loop resume needs --id ID and nothing else", Hint: "'failpass loop status' lists the loops"}
	}
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return err
	}
	if err := loop.CheckID(*id); err != nil {
		return err
	}
	st, err := loop.StoreFor(repo.CommonDir, *id).LoadSettings()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Errorf("no loop %q to resume in %s", *id, repo.CommonDir).Hint("'failpass loop status' lists the loops of this repository")
		}
		return err
	}
	var cp *loop.CardPolicy
	var trust sign.Trust
	if st.Card != "" {
		if cp, trust, err = loop.LoadCard(ctx, repo, st, env.Getenv, env.Stderr); err != nil {
			return err
		}
	}
	cfg, err := loop.NewConfig(ctx, repo, st, cp, trust, env.Getenv, env.Stderr)
	if err != nil {
		return err
	}
	if err := loop.Prepare(ctx, cfg, cp); err != nil {
		return err
	}
	out, err := loop.Resume(ctx, repo, *id, cfg)
	if err != nil {
		return err
	}
	return printOutcome(env, out, *asJSON)
}

func runLoopStatus(ctx context.Context, env *Env, args []string) (err error) {
	fs := newFlags(env, "loop status", "failpass loop status [--id ID] [--json] [--repo DIR]")
	id := fs.String("id", "", "show only this invocation `ID`")
	asJSON := fs.Bool("json", false, "print the checkpoint (and terminal result) as JSON")
	repoDir := fs.String("repo", ".", "repository `DIR`")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	defer func() { err = jsonTrouble(env, *asJSON, err) }()
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return err
	}
	var list []loop.Status
	if *id != "" {
		if err := loop.CheckID(*id); err != nil {
			return err
		}
		s := loop.Load(repo, *id)
		if s.Checkpoint == nil && s.Terminal == nil {
			return Errorf("no loop %q in %s", *id, repo.CommonDir).Hint("'failpass loop status' lists the loops of this repository")
		}
		list = []loop.Status{s}
	} else if list, err = loop.List(repo); err != nil {
		return err
	}
	if *asJSON {
		for _, s := range list {
			if err := writeJSON(env, s, false); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "no loops in this repository")
		return nil
	}
	for _, s := range list {
		fmt.Fprintln(env.Stdout, statusLine(s))
	}
	return nil
}

func statusLine(s loop.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", s.ID)
	switch {
	case s.Terminal != nil:
		st := s.Terminal.TerminalState
		if s.Terminal.Reason != "" {
			st += "/" + s.Terminal.Reason
		}
		fmt.Fprintf(&b, "returned %s; branch %s at %.12s; %d of %d cycles used", st, s.Terminal.Branch, s.Terminal.Head.Final,
			s.Terminal.Budget.ConsumedCycles, s.Terminal.Budget.OriginalMaxFixCycles)
	case s.Checkpoint != nil:
		c := s.Checkpoint
		fmt.Fprintf(&b, "phase %s; branch %s at %.12s; %d of %d cycles used; next: %s", c.CurrentPhase, c.Branch, c.CurrentHead,
			len(c.CycleAttempts), c.OriginalCycleBudget, c.ExpectedNextAction)
	default:
		fmt.Fprintf(&b, "unreadable: %s", s.Err)
	}
	return b.String()
}

// jsonTrouble passes err on; under --json, trouble (what exits 2) also
// prints one object on stdout, {"error": {"message": ..., "hints": [...]}},
// so a script that reads only stdout learns why there is no result.
func jsonTrouble(env *Env, asJSON bool, err error) error {
	if !asJSON || err == nil || isExit(err) {
		return err
	}
	type jsonErr struct {
		Message string   `json:"message"`
		Hints   []string `json:"hints,omitempty"`
	}
	e := jsonErr{Message: err.Error()}
	var ue *UsageError
	if errors.As(err, &ue) {
		e.Message = "usage error: " + ue.Msg
		if ue.Hint != "" {
			e.Hints = []string{ue.Hint}
		}
	} else if msg, hints, ok := userError(err); ok {
		e.Message, e.Hints = msg, hints
	}
	_ = writeJSON(env, struct {
		Error jsonErr `json:"error"`
	}{e}, false)
	return err
}

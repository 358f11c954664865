package loop

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/sign"
)

// NewConfig makes the adapters of the settings, and the sandbox and
// environments of the loop's validations. A reviewer that cannot be made
// is recorded, not fatal: the loop turns it into
// blocked/missing_capability (or an in-agent override). getenv reads the
// user's environment; log gets the loop's progress.
func NewConfig(ctx context.Context, repo *gitx.Repo, st *Settings, cp *CardPolicy, trust sign.Trust, getenv func(string) string, log io.Writer) (Config, error) {
	opts := model.Options{BaseURL: st.BaseURL, KeyEnv: st.KeyEnv, Getenv: getenv, Dir: st.WorkingDir,
		Env: model.RoleEnv(getenv, st.Grants.Env)}
	cfg := Config{ReviewerID: st.Reviewer, FixerID: st.Fixer, Lenses: st.Lenses, Card: cp, Remote: st.Remote, Log: log,
		Grants: st.Grants}
	if !st.NoSandbox {
		// Validation runs contained, as the gate's commands do. It runs
		// the fixer's code, so it reads the card's build cache (the one
		// the gate's base runs fill) read-only, through a private layer
		// per validation (a cold Go build cache per run cost minutes).
		// Without a card it has a private cold cache.
		cfg.Sandbox = &sandbox.Policy{}
		if cp != nil {
			// With what the card's prepare command fetched (Prepare),
			// read-only.
			cfg.Sandbox.CacheDir, cfg.Sandbox.Deps = cp.CacheDir(), cp.DepsDir()
		}
	}
	mk := func(flag, s string) (model.Adapter, error) {
		spec, err := model.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		return model.New(spec, opts)
	}
	var err error
	if _, perr := model.ParseSpec(st.Reviewer); perr != nil {
		return cfg, perr
	}
	cfg.ReviewerEndpoint = strings.HasPrefix(st.Reviewer, "openai/")
	cfg.FixerEndpoint = strings.HasPrefix(st.Fixer, "openai/")
	cfg.Reviewer, cfg.ReviewerErr = mk("--reviewer", st.Reviewer)
	if cfg.ReviewerErr != nil {
		cfg.Reviewer = nil
	}
	if cfg.Fixer, err = mk("--fixer", st.Fixer); err != nil {
		return cfg, err
	}
	if st.Decider != "" {
		if cfg.Decider, err = mk("--decider", st.Decider); err != nil {
			return cfg, err
		}
	}
	if st.RecordKey != "" {
		signer, err := sign.LoadSigner(st.RecordKey, getenv)
		if err != nil {
			return cfg, err
		}
		cfg.Record = &Recorder{Signer: signer, Trust: trust, AllowUnsigned: st.AllowUnsigned}
	}
	cfg.Env = run.MinimalEnv(getenv)
	if cp != nil {
		// The card's own commands get what the gate gives them, the
		// environment its build cache (above) is keyed by.
		cfg.CardEnv = cp.Env
	}
	return cfg, nil
}

// Prepare runs the card's prepare command before the loop validates
// anything, as the gate does before its base runs (gate.RunPrepare: once
// per build cache key, mostly a marker check): the validation runs read
// what it fetched. Uncontained (--sandbox=off) it runs once per loop
// command in the user's environment. Then it warms the card's build
// cache from its base (gate.WarmCache, once per cache).
func Prepare(ctx context.Context, cfg Config, cp *CardPolicy) error {
	if cp == nil {
		return nil
	}
	logDir, err := cp.NewLogDir("")
	if err != nil {
		return err
	}
	o := gate.PrepareOptions{Bound: cp.Bound, Policy: cfg.Sandbox, LogDir: logDir}
	if _, err := gate.RunPrepare(ctx, o); err != nil {
		return err
	}
	// The validations run candidate code, which never fills the card's
	// build cache: the card's base fills it once, as the gate's does.
	o.Starting = func(step string) {
		fmt.Fprintf(cfg.Log, "loop: %s on the card's base, once, to fill its build cache\n", step)
	}
	_, err = gate.WarmCache(ctx, o)
	return err
}

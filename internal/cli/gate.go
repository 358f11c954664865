package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/report"
	"github.com/failpass/failpass/internal/sandbox"
)

const gateUsage = `failpass gate --card FILE --diff FILE|- [--diff FILE ...] [--repo DIR] [--json]
    [--allow-unsigned | --allowed-signers FILE] [--repeat N] [--sandbox=off] [--keep-worktree] [--log-dir DIR]
    [--record FILE [--record-key KEY]]`

type gateFlags struct {
	card           string
	diffs          stringList
	repo           string
	json           bool
	allowUnsigned  bool
	allowedSigners string
	repeat         int
	keepWorktree   bool
	logDir         string
	record         string
	recordKey      string
	sandbox        string
}

func runGate(ctx context.Context, env *Env, args []string) error {
	var f gateFlags
	fs := newFlags(env, "gate", gateUsage)
	fs.StringVar(&f.card, "card", "", "the contract card `FILE`")
	fs.Var(&f.diffs, "diff", "a candidate diff `FILE` (- for stdin); repeatable")
	fs.StringVar(&f.repo, "repo", ".", "the repository `DIR`")
	fs.BoolVar(&f.json, "json", false, "print the verdict as JSON")
	fs.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "run an unsigned card (its commands are not verified)")
	fs.StringVar(&f.allowedSigners, "allowed-signers", "", "SSH allowed_signers `FILE` to verify the card against")
	fs.IntVar(&f.repeat, "repeat", 1, "run every card command `N` times; disagreeing runs break the rule")
	fs.StringVar(&f.sandbox, "sandbox", "on", "contain card commands (`on` or off)")
	fs.BoolVar(&f.keepWorktree, "keep-worktree", false, "leave the worktree in place for inspection")
	fs.StringVar(&f.logDir, "log-dir", "", "write command logs under `DIR`")
	fs.StringVar(&f.record, "record", "", "write a signed record of the run to `FILE` (signature in FILE.sig)")
	fs.StringVar(&f.recordKey, "record-key", "", "SSH `KEY` that signs the record (default: the ssh-agent's key)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	err = checkGateFlags(&f, pos)
	if err == nil {
		err = gateCandidates(ctx, env, &f)
	}
	if err != nil && f.json && !isExit(err) {
		report.JSONError(env.Stdout, err)
	}
	return err
}

func isExit(err error) bool {
	var ex exitErr
	return errors.As(err, &ex)
}

// checkGateFlags refuses bad combinations before any side effect.
func checkGateFlags(f *gateFlags, pos []string) error {
	switch {
	case len(pos) > 0:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "pass candidates with --diff FILE"}
	case f.card == "":
		return &UsageError{Msg: "--card is required", Hint: "failpass gate --card issue-contract.yml --diff fix.diff"}
	case len(f.diffs) == 0:
		return &UsageError{Msg: "--diff is required", Hint: "failpass gate --card issue-contract.yml --diff fix.diff"}
	case f.repeat < 1 || f.repeat > 100:
		return &UsageError{Msg: fmt.Sprintf("--repeat %d: want 1 to 100", f.repeat)}
	case f.allowUnsigned && f.allowedSigners != "":
		return &UsageError{Msg: "--allow-unsigned and --allowed-signers exclude each other"}
	case f.sandbox != "on" && f.sandbox != "off":
		return &UsageError{Msg: fmt.Sprintf("--sandbox=%s: want on or off", f.sandbox)}
	case f.record != "" && len(f.diffs) > 1:
		return &UsageError{Msg: "--record takes one candidate", Hint: "gate candidates one at a time to record each"}
	case f.recordKey != "" && f.record == "":
		return &UsageError{Msg: "--record-key needs --record FILE"}
	}
	stdin := 0
	for _, d := range f.diffs {
		if d == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return &UsageError{Msg: "only one --diff may read standard input"}
	}
	return nil
}

func gateCandidates(ctx context.Context, env *Env, f *gateFlags) error {
	c, err := card.Load(f.card)
	if err != nil {
		return err
	}
	repo, base, err := gitx.OpenResolve(ctx, f.repo, gate.BaseRev(c))
	if err != nil {
		return err
	}
	diffs := make([][]byte, len(f.diffs))
	for i, d := range f.diffs {
		if diffs[i], err = readDiff(env, d); err != nil {
			return err
		}
	}
	trust, err := gateTrust(ctx, env, repo, f)
	if err != nil {
		return err
	}
	if f.allowUnsigned {
		fmt.Fprintln(env.Stderr, "failpass: warning: --allow-unsigned: the card's commands were not verified by any signer")
	}
	policy, err := gatePolicy(env, repo, c, f.sandbox == "off")
	if err != nil {
		return err
	}
	failed := 0
	for i, d := range diffs {
		logDir := f.logDir
		if logDir != "" && len(diffs) > 1 {
			logDir = filepath.Join(logDir, fmt.Sprintf("%03d", i+1))
		}
		v, err := gate.Run(ctx, gate.Options{
			Repo: repo, Card: c, CardPath: f.card, Diff: d, DiffName: f.diffs[i], Base: base,
			Trust: trust, AllowUnsigned: f.allowUnsigned, Sandbox: policy,
			Repeat: f.repeat, LogDir: logDir, KeepWorktree: f.keepWorktree,
			Env: gate.DefaultEnv(env.Getenv),
		})
		if err != nil {
			return err
		}
		if v.Verdict != gate.Pass {
			failed++
		}
		if f.record != "" {
			if err := gateRecord(ctx, env, repo, c, d, v, f.record, f.recordKey); err != nil {
				return err
			}
		}
		if f.json {
			if err := report.JSON(env.Stdout, v); err != nil {
				return err
			}
			continue
		}
		if len(diffs) > 1 {
			fmt.Fprintf(env.Stdout, "== %s\n", f.diffs[i])
		}
		report.Text(env.Stdout, v)
		if v.LogDir != "" {
			fmt.Fprintf(env.Stdout, "logs: %s\n", v.LogDir)
		}
	}
	if failed > 0 {
		return Exit(ExitFail)
	}
	return nil
}

// readDiff reads one candidate, bounded by patch.MaxSize.
func readDiff(env *Env, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = env.Stdin
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return nil, Errorf("cannot read diff: %v", err).Hint("--diff takes the path of a unified diff, or - for standard input")
		}
		defer fh.Close()
		r = fh
	}
	b, err := io.ReadAll(io.LimitReader(r, patch.MaxSize+1))
	if err != nil {
		return nil, Errorf("cannot read diff %s: %v", name, err)
	}
	if len(b) > patch.MaxSize {
		return nil, Errorf("diff %s is larger than %d bytes", name, patch.MaxSize).Hint("a candidate fix this large is not a fix the budget can hold; split it")
	}
	return b, nil
}

// gateTrust returns the card.signature check, or nil when the card will be
// treated as unsigned. Trust roots come from the flag or git config, never
// from the candidate or its worktree.
func gateTrust(ctx context.Context, env *Env, repo *gitx.Repo, f *gateFlags) (func(*card.Card) ([]string, error), error) {
	if f.allowUnsigned {
		return nil, nil
	}
	path := f.allowedSigners
	if path == "" {
		out, err := repo.Git(ctx, "config", "--get", "gpg.ssh.allowedSignersFile")
		if err == nil {
			path = strings.TrimSpace(string(out))
		}
	}
	if path == "" {
		return nil, nil
	}
	return cardTrustIn(repo, path)
}

// gatePolicy is the sandbox for a card's commands: on by default, with
// the card's persistent build caches under the git common directory. Off
// is the user's explicit choice and is said loudly.
func gatePolicy(env *Env, repo *gitx.Repo, c *card.Card, off bool) (*sandbox.Policy, error) {
	if off {
		fmt.Fprintln(env.Stderr, "failpass: warning: --sandbox=off: card commands run UNCONTAINED, with your network, files and processes")
		return nil, nil
	}
	digest, err := c.Digest()
	if err != nil {
		return nil, err
	}
	return &sandbox.Policy{CacheDir: sandbox.CardCacheDir(repo.CommonDir, digest)}, nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/signoff"
)

const (
	cardSignUsage     = "failpass card sign --card FILE [--key KEY] [--principal NAME] [--repeat N] [--force] [--held-out DIR] [--reference DIFF] [--repo DIR] [--quiet]"
	cardVerifyUsage   = "failpass card verify --card FILE --allowed-signers FILE [--threshold N]"
	cardAnnotateUsage = "failpass card annotate --card FILE --by NAME --note TEXT [--tighten max_files=N | max_changed_lines=N | deny_glob=GLOB | allow_harness=[GLOB] ...]"

	// maxSignRepeat bounds --repeat: each run is a full fail command.
	maxSignRepeat = 100
)

// signCardArgs checks the --card flag and stray arguments before anything
// is read.
func signCardArgs(cmd, path string, pos []string) error {
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]),
			Hint: fmt.Sprintf("name the card with --card: failpass card %s --card %s", cmd, pos[0])}
	}
	if path == "" {
		return &UsageError{Msg: "--card is required", Hint: fmt.Sprintf("failpass card %s --card issue-contract.yml", cmd)}
	}
	return nil
}

func runCardSign(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card sign", cardSignUsage)
	path := fs.String("card", "", "the contract card `FILE` to sign (rewritten in place)")
	keyPath := fs.String("key", "", "private key `KEY`, or KEY.pub of a key in ssh-agent; empty: the agent's only key")
	principal := fs.String("principal", "", "the signer's `NAME` in allowed_signers (default: git config user.email)")
	repeat := fs.Int("repeat", 3, "run the fail command `N` times; all runs must agree")
	force := fs.Bool("force", false, "re-run the table and replace every existing signature")
	repoDir := fs.String("repo", ".", "the repository `DIR` the card's base lives in")
	sandboxMode := fs.String("sandbox", "on", "contain the card's commands (`on` or off)")
	heldOutDir := fs.String("held-out", "", "the card's held-out tests `DIR`: its digest is written into held_out.digest, and the held-out command must fail on the base")
	quiet := fs.Bool("quiet", false, "print no progress on stderr")
	refPath := fs.String("reference", "", "a reference fix `DIFF` that must make pass and invariant pass (its digest goes into the signoff)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := signCardArgs("sign", *path, pos); err != nil {
		return err
	}
	if *repeat < 1 || *repeat > maxSignRepeat {
		return &UsageError{Msg: fmt.Sprintf("--repeat %d: must be 1..%d", *repeat, maxSignRepeat), Hint: "the default, 3, catches most flaky fail commands"}
	}
	if *sandboxMode != "on" && *sandboxMode != "off" {
		return &UsageError{Msg: fmt.Sprintf("--sandbox=%s: want on or off", *sandboxMode)}
	}

	orig, c, err := card.Read(*path)
	if err != nil {
		return err
	}
	var refDiff []byte
	if *refPath != "" {
		if refDiff, err = readDiff(env, *refPath); err != nil {
			return err
		}
	}
	if c.Expires != nil && time.Now().After(*c.Expires) {
		return Errorf("%s expired at %s; a signature would be refused by every gate", *path, c.Expires.UTC().Format(time.RFC3339)).
			Hint("move expires into the future (or remove it), then sign")
	}
	held, err := signHeldOutFolder(*path, c, *heldOutDir, len(c.Signatures) > 0 && !*force)
	if err != nil {
		return err
	}
	if held != nil && c.HeldOut.ExpectStdout != "" && *refPath == "" {
		if _, _, err := held.Split(c.HeldOut.ExpectStdout); err != nil {
			return &UsageError{Msg: fmt.Sprintf("--held-out %s: %v", held.Dir, err),
				Hint: "give --reference FIX.diff: card sign writes held_out.expect_stdout's file from the reference fix's run"}
		}
	}
	for _, w := range c.Warnings() {
		if held != nil && strings.HasPrefix(w, "held_out has no digest") {
			continue // this signing writes it
		}
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	signer, err := sign.LoadSigner(*keyPath, env.Getenv)
	if err != nil {
		return err
	}
	fp := ssh.FingerprintSHA256(signer.PublicKey())
	repo, err := gitx.Open(ctx, *repoDir)
	if err != nil {
		return err
	}
	who, err := signerPrincipal(ctx, env, repo, *principal, fp)
	if err != nil {
		return err
	}

	bound, err := gate.Bind(ctx, repo, c, *path, env.Getenv)
	if err != nil {
		return err
	}
	prog := newStepProgress(env, "card sign", *quiet)
	o := signoff.Signing{
		Options: signoff.Options{Bound: bound, Repeat: *repeat, Sandbox: gateSandbox(env, *sandboxMode == "off"),
			HeldOut: held, Reference: refDiff, Out: env.Stdout, Notes: env.Stderr},
		Orig: orig, Force: *force, Signer: signer, Principal: who,
	}
	if prog != nil {
		o.Progress = prog
	}
	res, err := signoff.Sign(ctx, o)
	prog.close()
	if err != nil {
		return err
	}
	if res.ExpectStdout != "" {
		fmt.Fprintf(env.Stdout, "held_out.expect_stdout: wrote %s\n", res.ExpectStdout)
	}
	fmt.Fprintf(env.Stdout, "decision: %s: %s\n", res.Verdict.Decision, res.Verdict.Reason)
	if res.Card == nil {
		fmt.Fprintf(env.Stdout, "card %s: not signed (left unchanged)\n", *path)
		return Exit(ExitFail)
	}
	if !res.Kept {
		fmt.Fprintf(env.Stderr, "warning: %s was rewritten in failpass's layout; its comments could not be kept\n", *path)
	}
	digest, _ := res.Card.Digest()
	role := "signed"
	if res.Witness {
		role = fmt.Sprintf("co-signed (%d signatures)", len(res.Card.Signatures))
	}
	fmt.Fprintf(env.Stdout, "card %s: %s as %s with %s key %s\ncard_digest: %s\n", *path, role, who, signer.PublicKey().Type(), fp, digest)
	if res.HeldOut != nil {
		fmt.Fprintf(env.Stdout, "held_out.digest: %s\n", res.HeldOut.Digest)
	}
	return nil
}

func runCardVerify(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card verify", cardVerifyUsage)
	path := fs.String("card", "", "the signed contract card `FILE`")
	allowed := fs.String("allowed-signers", "", "the maintainers' allowed_signers `FILE` (ssh-keygen format)")
	threshold := fs.Int("threshold", 1, "valid signatures by at least `N` distinct allowed keys")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := signCardArgs("verify", *path, pos); err != nil {
		return err
	}
	if *allowed == "" {
		return &UsageError{Msg: "--allowed-signers is required",
			Hint: "pass the maintainers' allowed_signers file, e.g. --allowed-signers \"$(git config --type=path gpg.ssh.allowedSignersFile)\" (--type=path: a ~/ path as git reads it)"}
	}
	if *threshold < 1 {
		return &UsageError{Msg: fmt.Sprintf("--threshold %d: must be at least 1", *threshold)}
	}
	_, c, err := card.Read(*path)
	if err != nil {
		return err
	}
	as, err := sign.ReadAllowedSigners(*allowed)
	if err != nil {
		return err
	}
	now := time.Now()
	tally, err := sign.VerifyCard(c, as, now)
	if err != nil {
		return err
	}
	signPrintTally(env.Stdout, c, tally)
	problems := sign.CardProblems(c, tally, *threshold, now)
	if len(problems) > 0 {
		fmt.Fprintf(env.Stdout, "card %s: NOT VALID: %s\n", *path, strings.Join(problems, "; "))
		return Exit(ExitFail)
	}
	digest, _ := c.Digest()
	fmt.Fprintf(env.Stdout, "card %s: valid (%d distinct allowed key(s), threshold %d)\ncard_digest: %s\n", *path, tally.Keys, *threshold, digest)
	return nil
}

func signPrintTally(w io.Writer, c *card.Card, t *sign.Tally) {
	vi, ii := 0, 0
	for i, s := range c.Signatures {
		if ii < len(t.Invalid) && t.Invalid[ii].Index == i {
			fmt.Fprintf(w, "signature %d: %s: not valid: %v\n", i+1, s.Principal, sign.ReasonOf(t.Invalid[ii].Err))
			ii++
			continue
		}
		v := t.Valid[vi]
		dup := ""
		if t.Duplicate(vi) {
			dup = " (same key as an earlier signature: counted once)"
		}
		fmt.Fprintf(w, "signature %d: %s: valid, %s key %s (allowed_signers line %d)%s\n", i+1, s.Principal, v.KeyType, v.Fingerprint, v.Line, dup)
		vi++
	}
}

func runCardAnnotate(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card annotate", cardAnnotateUsage)
	path := fs.String("card", "", "the contract card `FILE` (rewritten in place)")
	by := fs.String("by", "", "who annotates: a `NAME` (a reviewer, a model)")
	note := fs.String("note", "", "the annotation's `TEXT`")
	var tighten stringList
	fs.Var(&tighten, "tighten", "lower a limit, add a deny glob or keep only some allowed runner inputs: max_files=N, max_changed_lines=N, deny_glob=GLOB or allow_harness=[GLOB] (repeatable)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := signCardArgs("annotate", *path, pos); err != nil {
		return err
	}
	if strings.TrimSpace(*by) == "" || strings.TrimSpace(*note) == "" {
		return &UsageError{Msg: "--by and --note are required", Hint: `failpass card annotate --card FILE --by reviewer --note "why"`}
	}
	t, err := parseTightenFlags(tighten)
	if err != nil {
		return err
	}
	orig, c, err := card.Read(*path)
	if err != nil {
		return err
	}
	if t != nil {
		if t.MaxFiles != nil && *t.MaxFiles > c.Budget.MaxFiles {
			return Errorf("--tighten max_files=%d raises the signed limit %d", *t.MaxFiles, c.Budget.MaxFiles).
				Hint("an annotation may only lower limits; raising one needs a re-signed card (failpass card sign --force)")
		}
		if t.MaxChangedLines != nil && *t.MaxChangedLines > c.Budget.MaxChangedLines {
			return Errorf("--tighten max_changed_lines=%d raises the signed limit %d", *t.MaxChangedLines, c.Budget.MaxChangedLines).
				Hint("an annotation may only lower limits; raising one needs a re-signed card (failpass card sign --force)")
		}
	}
	a := card.Annotation{By: *by, At: time.Now().UTC().Format(time.RFC3339), Note: *note, Tighten: t}
	next := *c
	next.Annotations = append(append([]card.Annotation(nil), c.Annotations...), a)
	if err := next.Validate(); err != nil {
		var pe *card.ParseError
		if errors.As(err, &pe) {
			e := Errorf("annotation refused: %s: %s", pe.Field, pe.Msg)
			if pe.Hint != "" {
				e = e.Hint("%s", pe.Hint)
			}
			return e.Hint("%s was left as it was", *path)
		}
		return err
	}
	data, kept, err := card.Rewrite(orig, &next, func(d *card.Doc) { d.AppendAnnotation(a) })
	if err != nil {
		return err
	}
	if !kept {
		fmt.Fprintf(env.Stderr, "warning: %s was rewritten in failpass's layout; its comments could not be kept\n", *path)
	}
	if err := card.Replace(*path, orig, data); err != nil {
		return err
	}
	b := next.EffectiveBudget()
	allow := ""
	if len(c.Budget.AllowHarness) > 0 {
		allow = fmt.Sprintf(", allow_harness [%s]", strings.Join(b.AllowHarness, ", "))
	}
	fmt.Fprintf(env.Stdout, "card %s: annotated by %s (signatures unaffected)\neffective budget: max_files %d, max_changed_lines %d, deny_globs [%s]%s\n",
		*path, *by, b.MaxFiles, b.MaxChangedLines, strings.Join(b.DenyGlobs, ", "), allow)
	return nil
}

// parseTightenFlags reads --tighten KEY=VALUE items. Only the four
// tightenings exist; anything else (a command, a raise) has no spelling
// here at all. allow_harness=GLOB keeps GLOB of the signed allow_harness
// (the items given replace the list: every other entry is removed), and
// an empty allow_harness= removes them all.
func parseTightenFlags(items []string) (*card.Tightening, error) {
	if len(items) == 0 {
		return nil, nil
	}
	t := &card.Tightening{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || v == "" && k != "allow_harness" {
			return nil, &UsageError{Msg: fmt.Sprintf("--tighten %q: want KEY=VALUE", it), Hint: "--tighten max_files=2, --tighten max_changed_lines=40, --tighten deny_glob='src/vendor/**' or --tighten allow_harness=GLOB"}
		}
		switch k {
		case "allow_harness":
			if t.AllowHarness == nil {
				t.AllowHarness = []string{}
			}
			if v != "" {
				t.AllowHarness = append(t.AllowHarness, v)
			}
		case "max_files", "max_changed_lines":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > card.MaxBudget || strconv.Itoa(n) != v {
				return nil, &UsageError{Msg: fmt.Sprintf("--tighten %s=%s: want a whole number 0..%d", k, v, card.MaxBudget)}
			}
			dst := &t.MaxFiles
			if k == "max_changed_lines" {
				dst = &t.MaxChangedLines
			}
			if *dst != nil && **dst != n {
				return nil, &UsageError{Msg: fmt.Sprintf("--tighten %s given twice with different values", k)}
			}
			*dst = &n
		case "deny_glob", "deny_globs":
			t.DenyGlobs = append(t.DenyGlobs, v)
		default:
			return nil, &UsageError{Msg: fmt.Sprintf("--tighten %s: an annotation may only set max_files, max_changed_lines, deny_glob or allow_harness", k),
				Hint: "commands, expected exits and the base are signed: change them and re-sign with failpass card sign --force"}
		}
	}
	return t, nil
}

// signerPrincipal is signoff.ChoosePrincipal, its notes said on stderr.
func signerPrincipal(ctx context.Context, env *Env, repo *gitx.Repo, flag, fp string) (string, error) {
	p, err := signoff.ChoosePrincipal(ctx, repo, flag, fp)
	if err != nil {
		return "", &UsageError{Msg: err.Error(), Hint: "pass --principal you@example.org, the name allowed_signers lists for your key"}
	}
	if p.From != "" {
		fmt.Fprintf(env.Stderr, "card sign: signing as %s (%s)\n", Sanitize(p.Name), Sanitize(p.From))
	}
	if p.Unlisted != "" {
		fmt.Fprintf(env.Stderr, "warning: %s\n", Sanitize(p.Unlisted))
	}
	return p.Name, nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/record"
	"github.com/failpass/failpass/internal/sign"
	"github.com/failpass/failpass/internal/worktree"
)

const (
	recordVerifyUsage = "failpass record verify --record FILE --runners FILE --card FILE --allowed-signers FILE [--diff FILE [--repo DIR]]"
	noteUsage         = "failpass note --card FILE [--record FILE (--runners FILE | --unverified)] [--merge]"
)

// runRecordVerify checks a signed gate record without running anything:
// exit 0 valid, 1 not valid (the first problem printed), 2 trouble.
func runRecordVerify(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "record verify", recordVerifyUsage)
	path := fs.String("record", "", "the record `FILE` (its signature is FILE.sig)")
	runners := fs.String("runners", "", "allowed_signers `FILE` of the keys trusted to sign records")
	cardPath := fs.String("card", "", "the contract card `FILE` the gate ran")
	allowed := fs.String("allowed-signers", "", "allowed_signers `FILE` of the keys trusted to sign cards")
	diffPath := fs.String("diff", "", "the candidate diff `FILE`: rebuild the patched tree and numstat from it")
	repoDir := fs.String("repo", "", "the repository `DIR` holding the base (default: the current directory's, with --diff)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "name the record with --record FILE"}
	case *path == "":
		return &UsageError{Msg: "--record is required", Hint: recordVerifyUsage}
	case *runners == "":
		return &UsageError{Msg: "--runners is required", Hint: "pass the allowed_signers file of the machines trusted to sign gate records"}
	case *cardPath == "":
		return &UsageError{Msg: "--card is required", Hint: "pass the card the gate ran"}
	case *allowed == "":
		return &UsageError{Msg: "--allowed-signers is required", Hint: "pass the maintainers' allowed_signers file the card is checked against"}
	case *repoDir != "" && *diffPath == "":
		return &UsageError{Msg: "--repo needs --diff FILE", Hint: "the repository is only read to rebuild the patched tree from the diff"}
	}

	data, sig, err := record.Read(*path)
	if err != nil {
		return err
	}
	_, c, err := card.Read(*cardPath)
	if err != nil {
		return err
	}
	in := record.Verification{Record: data, Signature: sig, Card: c, Now: time.Now()}
	var refused []string
	if *diffPath != "" {
		if *repoDir == "" {
			*repoDir = "."
		}
		if in.Diff, err = readDiff(env, *diffPath); err != nil {
			return err
		}
		if in.Repo, err = gitx.Open(ctx, *repoDir); err != nil {
			return err
		}
		refused = append(refused, worktree.Trees(in.Repo)...)
	}
	if in.Runners, err = sign.ReadAllowedSigners(*runners, refused...); err != nil {
		return err
	}
	if in.Maintainers, err = sign.ReadAllowedSigners(*allowed, refused...); err != nil {
		return err
	}

	v, err := record.Verify(ctx, in)
	var re *record.Error
	if errors.As(err, &re) {
		// The record's own text (a field's value, a signature's detail)
		// and its path are the attacker's: sanitized, like every error line.
		fmt.Fprintf(env.Stdout, "record %s: NOT VALID: %s\n", Sanitize(*path), Sanitize(re.Error()))
		printHints(env.Stderr, re.Hints())
		return Exit(ExitFail)
	}
	if err != nil {
		return err
	}
	p := &v.Statement.Predicate
	fmt.Fprintf(env.Stdout, "signature: valid, runner %s, %s key %s (%s line %d)\n",
		Sanitize(v.Runner.Principal), v.Runner.KeyType, v.Runner.Fingerprint, Sanitize(*runners), v.Runner.Line)
	fmt.Fprintf(env.Stdout, "card: %s %s, signed by %s\n", Sanitize(*cardPath), p.Card.Digest, Sanitize(strings.Join(v.CardSigners, ", ")))
	runs := 0
	for _, s := range p.Steps {
		runs += len(s.Runs)
	}
	fmt.Fprintf(env.Stdout, "commands: %d run(s), every argv and expected exit the card's\n", runs)
	if p.Verdict == "pass" {
		fmt.Fprintf(env.Stdout, "verdict: pass follows from the recorded exits\n")
	} else {
		// A valid record's reason still quotes the candidate (a path it
		// touched, a runner's output).
		fmt.Fprintf(env.Stdout, "verdict: fail at %s follows from the recorded exits: %s\n", Sanitize(*p.Rule), Sanitize(p.Reason))
	}
	switch {
	case v.Rebuilt != nil:
		fmt.Fprintf(env.Stdout, "tree: %s rebuilt from base %s and %s (applied: %v); numstat of %d file(s) matches\n",
			v.Rebuilt.Tree, v.Rebuilt.Base, Sanitize(*diffPath), v.Rebuilt.Applied, len(p.Diff.Files))
	case in.Diff != nil:
		fmt.Fprintf(env.Stdout, "diff: %s matches the recorded digest and numstat (no base to rebuild a tree from)\n", Sanitize(*diffPath))
	default:
		fmt.Fprintf(env.Stdout, "tree: not checked (pass --diff FILE --repo DIR to rebuild it)\n")
	}
	skipped := ""
	if p.HeldOut == verdict.HeldOutSkipped {
		// A verdict reached without the held-out tests says so on the
		// line a script reads.
		skipped = ", held-out skipped"
	}
	fmt.Fprintf(env.Stdout, "record %s: valid (%s, verdict %s%s)\n", Sanitize(*path), record.Digest(data), p.Verdict, skipped)
	return nil
}

// runNote prints the pull-request body for a card and its record, or with
// --merge the merge note. It checks the record belongs to the card and is
// internally consistent, and with --runners that a trusted runner signed
// it (as record verify does). A record whose signature nobody checks is
// never shown as a plain PASS: --unverified says so in the note, and
// without either flag the note is refused.
func runNote(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "note", noteUsage)
	cardPath := fs.String("card", "", "the contract card `FILE`")
	recPath := fs.String("record", "", "the gate record `FILE` (from gate --record)")
	merge := fs.Bool("merge", false, "print the merge note instead of the pull-request body")
	runners := fs.String("runners", "", "allowed_signers `FILE` of the keys trusted to sign records: check the record's signature")
	unverified := fs.Bool("unverified", false, "do not check the record's signature; the note says it was not checked")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: noteUsage}
	case *cardPath == "":
		return &UsageError{Msg: "--card is required", Hint: noteUsage}
	case *merge && *recPath == "":
		return &UsageError{Msg: "--merge needs --record FILE", Hint: "a merge note cites the digest of the gate record: failpass gate --record FILE first"}
	case *runners != "" && *unverified:
		return &UsageError{Msg: "--runners and --unverified exclude each other"}
	case *recPath == "" && (*runners != "" || *unverified):
		return &UsageError{Msg: "--runners and --unverified go with --record FILE"}
	case *recPath != "" && *runners == "" && !*unverified:
		return &UsageError{Msg: "--record needs --runners FILE or --unverified",
			Hint: "check who signed the record: --runners RUNNERS (the allowed_signers of the machines trusted to gate); or say it is unchecked: --unverified"}
	}
	raw, c, err := card.Read(*cardPath)
	if err != nil {
		return err
	}
	n := &record.Note{CardPath: *cardPath, CardYAML: raw, Card: c}
	if *recPath != "" {
		var data, sig []byte
		if *unverified {
			data, err = record.ReadRecord(*recPath)
		} else {
			data, sig, err = record.Read(*recPath)
		}
		if err != nil {
			return err
		}
		if !*unverified {
			as, err := sign.ReadAllowedSigners(*runners)
			if err != nil {
				return err
			}
			if n.Runner, err = record.VerifySignature(as, data, sig, time.Now()); err != nil {
				fmt.Fprintf(env.Stderr, "record %s: NOT VALID: %s\n", Sanitize(*recPath), Sanitize(err.Error()))
				fmt.Fprintf(env.Stderr, "hint: a note cites only a record a trusted runner signed; check it with failpass record verify --runners %s\n", Sanitize(*runners))
				return Exit(ExitFail)
			}
		}
		s, err := record.Parse(data)
		if err == nil {
			err = record.Check(s, c)
		}
		if err != nil {
			return Errorf("record %s: %v", *recPath, err).
				Hint("the note cites only a record of this card; check it with failpass record verify")
		}
		n.Record, n.RecordPath, n.RecordDigest = s, *recPath, record.Digest(data)
	}
	if *merge {
		if n.Record.Predicate.Verdict != "pass" {
			return Errorf("record %s: the gate failed at %s; a merge note cites a passing gate", *recPath, *n.Record.Predicate.Rule).
				Hint("gate a candidate that passes, with --record, and write the note from that record")
		}
		return n.WriteMerge(env.Stdout)
	}
	return n.WriteMarkdown(env.Stdout)
}

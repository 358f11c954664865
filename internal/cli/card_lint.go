package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/atomicfile"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/harness"
)

const (
	cardLintUsage      = "failpass card lint --card FILE [--json]"
	cardCanonicalUsage = "failpass card canonical --card FILE"
)

// needCard refuses a missing --card and stray positional arguments before
// anything is read.
func needCard(cmd, path string, pos []string) error {
	if len(pos) > 0 {
		hint := fmt.Sprintf("name the card with --card: failpass card %s --card %s", cmd, pos[0])
		if path != "" {
			hint = fmt.Sprintf("failpass card %s takes one --card FILE and no other arguments", cmd)
		}
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: hint}
	}
	if path == "" {
		return &UsageError{Msg: "--card is required", Hint: fmt.Sprintf("failpass card %s --card issue-contract.yml", cmd)}
	}
	return nil
}

// lintJSON is the stable `card lint --json` object; fields may be added,
// never renamed or removed.
type lintJSON struct {
	Card       string      `json:"card"`
	Valid      bool        `json:"valid"`
	ID         string      `json:"id,omitempty"`
	CardDigest string      `json:"card_digest,omitempty"`
	Signed     bool        `json:"signed"`
	Budget     *budgetJSON `json:"effective_budget,omitempty"`
	Warnings   []string    `json:"warnings"`
	// Placeholders are the fields that still hold a card init template
	// value (starting with REPLACE-); any makes lint exit 1.
	Placeholders []string       `json:"placeholders"`
	Error        *lintErrorJSON `json:"error,omitempty"`
}

type budgetJSON struct {
	MaxFiles        int      `json:"max_files"`
	MaxChangedLines int      `json:"max_changed_lines"`
	DenyGlobs       []string `json:"deny_globs"`
	AllowHarness    []string `json:"allow_harness"`
}

type lintErrorJSON struct {
	Message string `json:"message"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Field   string `json:"field,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

func runCardLint(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card lint", cardLintUsage)
	path := fs.String("card", "", "the contract card `FILE`")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := needCard("lint", *path, pos); err != nil {
		return err
	}
	out := lintJSON{Card: *path, Warnings: []string{}, Placeholders: []string{}}
	c, err := card.Load(*path)
	if err == nil {
		out.CardDigest, err = c.Digest()
	}
	if err != nil {
		if *asJSON {
			out.Error = lintError(err)
			writeJSON(env, out, false)
		}
		return err
	}
	out.Valid, out.ID, out.Signed = true, c.ID, len(c.Signatures) > 0
	b := c.EffectiveBudget()
	out.Budget = &budgetJSON{MaxFiles: b.MaxFiles, MaxChangedLines: b.MaxChangedLines, DenyGlobs: append([]string{}, b.DenyGlobs...),
		AllowHarness: append([]string{}, b.AllowHarness...)}
	for _, w := range append(c.Warnings(), harness.Warnings(c)...) {
		out.Warnings = append(out.Warnings, w)
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	out.Placeholders = c.Placeholders()
	switch {
	case *asJSON:
		writeJSON(env, out, false)
	case len(out.Placeholders) > 0:
		fmt.Fprintf(env.Stdout, "card %s: template placeholders left: %s\n", *path, strings.Join(out.Placeholders, ", "))
	default:
		fmt.Fprintf(env.Stdout, "card %s: ok\n", *path)
	}
	if len(out.Placeholders) > 0 {
		fmt.Fprintf(env.Stderr, "hint: replace every %s... value with the issue's own reproduction (the test that fails, its package or file)\n", card.Placeholder)
		return Exit(ExitFail)
	}
	return nil
}

func lintError(err error) *lintErrorJSON {
	e := &lintErrorJSON{Message: err.Error()}
	var pe *card.ParseError
	var h hinter
	switch {
	case errors.As(err, &pe):
		e.File, e.Line, e.Col, e.Field, e.Hint = pe.File, pe.Line, pe.Col, pe.Field, pe.Hint
	case errors.As(err, &h):
		e.Hint = strings.Join(h.Hints(), "; ")
	}
	return e
}

func runCardCanonical(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card canonical", cardCanonicalUsage)
	path := fs.String("card", "", "the contract card `FILE`")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := needCard("canonical", *path, pos); err != nil {
		return err
	}
	c, err := card.Load(*path)
	if err != nil {
		return err
	}
	b, err := c.Canonical()
	if err != nil {
		return err
	}
	// Exactly the signed bytes, no newline added: the output can be piped
	// into ssh-keygen -Y verify.
	_, err = env.Stdout.Write(b)
	return err
}

// writeNew writes data to path durably: a temp file in the same folder,
// fsync, then a hard link (refuses an existing path atomically) or, with
// force, a rename over it; then the folder is fsynced. A crash leaves either
// no card or a whole one.
func writeNew(path string, data []byte, force bool) error {
	if force {
		return atomicfile.Write(path, data, 0o644)
	}
	return atomicfile.Create(path, data, 0o644)
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/failpass/failpass/internal/atomicfile"
	"os"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/card"
)

const (
	cardLintUsage      = "failpass card lint --card FILE [--json]"
	cardCanonicalUsage = "failpass card canonical --card FILE"
	cardInitUsage      = "failpass card init [--card FILE] [--id ID] [--force]"
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
	Card       string         `json:"card"`
	Valid      bool           `json:"valid"`
	ID         string         `json:"id,omitempty"`
	CardDigest string         `json:"card_digest,omitempty"`
	Signed     bool           `json:"signed"`
	Budget     *budgetJSON    `json:"effective_budget,omitempty"`
	Warnings   []string       `json:"warnings"`
	Error      *lintErrorJSON `json:"error,omitempty"`
}

type budgetJSON struct {
	MaxFiles        int      `json:"max_files"`
	MaxChangedLines int      `json:"max_changed_lines"`
	DenyGlobs       []string `json:"deny_globs"`
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
	out := lintJSON{Card: *path, Warnings: []string{}}
	c, err := card.Load(*path)
	if err == nil {
		out.CardDigest, err = c.Digest()
	}
	if err != nil {
		if *asJSON {
			out.Error = lintError(err)
			writeJSON(env, out)
		}
		return err
	}
	out.Valid, out.ID, out.Signed = true, c.ID, len(c.Signatures) > 0
	b := c.EffectiveBudget()
	out.Budget = &budgetJSON{MaxFiles: b.MaxFiles, MaxChangedLines: b.MaxChangedLines, DenyGlobs: append([]string{}, b.DenyGlobs...)}
	for _, w := range c.Warnings() {
		out.Warnings = append(out.Warnings, w)
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	if *asJSON {
		writeJSON(env, out)
	} else {
		fmt.Fprintf(env.Stdout, "card %s: ok\n", *path)
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

func writeJSON(env *Env, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain structs of strings and numbers are written here.
		panic(err)
	}
	env.Stdout.Write(append(b, '\n'))
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

func runCardInit(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "card init", cardInitUsage)
	path := fs.String("card", "card.yml", "write the template to `FILE`")
	id := fs.String("id", "ISSUE-0000", "the card's `ID`, usually the issue it locks")
	force := fs.Bool("force", false, "overwrite FILE if it exists")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q", pos[0]), Hint: "name the file with --card FILE"}
	}
	data := []byte(strings.Replace(cardTemplate, "{{ID}}", strconv.Quote(*id), 1))
	if _, err := card.Parse(*path, data); err != nil {
		var pe *card.ParseError
		if errors.As(err, &pe) && pe.Field == "id" {
			return Errorf("--id %q: %s", *id, pe.Msg).Hint("give a non-empty id without control characters, e.g. --id ISSUE-4419")
		}
		return fmt.Errorf("card template does not parse: %w", err)
	}
	if err := writeNew(*path, data, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Errorf("%s already exists", *path).Hint("pass --force to overwrite it, or choose another --card FILE")
		}
		return Errorf("cannot write %s: %v", *path, err).Hint("choose a --card FILE in a writable folder")
	}
	fmt.Fprintf(env.Stdout, "card %s: written\n", *path)
	fmt.Fprintf(env.Stderr, "next: replace the commands, then run 'failpass card lint --card %s'\n", *path)
	return nil
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

// cardTemplate is what `card init` writes: a valid card whose commands are
// placeholders, with the field reference in comments.
const cardTemplate = `# failpass contract card; field reference: docs/card.md
# Replace the placeholder commands with the issue's own reproduction, run
# 'failpass card lint --card FILE', then sign it with 'failpass card sign'.
# Strings are best double-quoted; integers are plain decimal.

id: {{ID}}                             # the issue this card locks
# origin: "https://github.com/OWNER/REPO/issues/0000"
base_ref: "main"                       # the revision the fail command must fail on
# expires: "2027-01-01T00:00:00Z"      # optional, a quoted RFC 3339 time

# Must exit expect_exit on the unpatched base: the bug, frozen.
fail:
  workdir: "."                         # relative to the repository root
  cmd: ["python", "-m", "pytest", "tests/test_bug.py::test_bug", "-q"]   # argv, no shell
  expect_exit: 1
  # timeout: "10m"                     # a Go duration, at most 24h
  # env: {PYTHONHASHSEED: "0"}

# The same test must pass on the patched tree: the cheapest honest oracle.
pass:
  workdir: "."
  cmd: ["python", "-m", "pytest", "tests/test_bug.py::test_bug", "-q"]
  expect_exit: 0

# A nearby suite that must pass on both trees.
invariant:
  workdir: "."
  cmd: ["python", "-m", "pytest", "tests/test_bug.py", "-q"]
  expect_exit: 0

# Hard limits for any patch; annotations may only tighten them.
budget:
  max_files: 3                         # files the stack names, plus one
  max_changed_lines: 80                # the smallest plausible fix
  deny_globs:                          # paths no patch may touch
    - ".github/**"
    - "docs/**"
    - "pyproject.toml"

# sandbox: {require: [network, filesystem, processes, resources]}
`

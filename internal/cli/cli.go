// Package cli owns failpass's command table, flag parsing, output modes and
// the one mapping from errors to exit codes.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/failpass/failpass/internal/card"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/failpass/failpass/internal/gitx"
)

// Exit codes, documented in the README. Every command maps onto these three.
const (
	ExitOK      = 0 // pass, valid, converged, written
	ExitFail    = 1 // a rule was broken, not valid, refused, not converged
	ExitTrouble = 2 // usage, unreadable input, not a repository, internal error
)

// Env is what a command sees of the world: arguments, streams and the
// working directory. Tests pass buffers; main passes the process's streams.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; commands never call os.Getenv directly
	// so tests can run in-process without leaking the host environment.
	Getenv func(string) string
}

// command is one entry of the command table. Groups (card, loop, record,
// budget, results) dispatch on their own sub-table.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
	sub     []*command
}

// commands is the whole table, in the order `failpass help` lists it.
// Each command lives in a file of its own (gate.go, card.go, loop.go, ...).
var commands []*command

func init() {
	commands = []*command{
		{name: "gate", summary: "check candidate diffs against a contract card", run: runGate},
		{name: "prompt", summary: "print exactly what a model receives for a card", run: runPrompt},
		{name: "draft", summary: "ask a model for a diff against a card", run: runDraft},
		{name: "note", summary: "print a pull-request body or merge note for a card", run: runNote},
		{name: "card", summary: "lint, sign, verify, annotate and canonicalize cards", sub: cardCommands()},
		{name: "record", summary: "verify signed gate records", sub: recordCommands()},
		{name: "budget", summary: "suggest a budget from a stack trace", sub: budgetCommands()},
		{name: "results", summary: "merge shard outputs; show them as CI annotations", sub: resultsCommands()},
		{name: "loop", summary: "run and inspect the review-fix loop", sub: loopCommands()},
		{name: "gc", summary: "remove what dead runs left, and old caches and logs", run: runGC},
		{name: "completion", summary: "print a shell completion script (bash, zsh, fish)", run: runCompletion},
		{name: "version", summary: "print the version", run: runVersion},
	}
}

// Main runs failpass with args (without the program name) and returns the
// exit code. It is the only place errors become exit codes.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signalContext()
	defer stop()
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	return exitCode(env, asInterrupted(ctx, dispatch(ctx, env, commands, nil, args)))
}

// InterruptedError is a command stopped by SIGINT or SIGTERM. It exits
// 128 + the signal's number (130 for Ctrl-C), as shells expect.
type InterruptedError struct {
	Signal syscall.Signal
	// Err is what the command returned when it stopped, when that says
	// more than "context canceled" (card sign: "the card was left
	// unchanged").
	Err error
}

func (e *InterruptedError) Error() string {
	name := "SIGINT"
	if e.Signal == syscall.SIGTERM {
		name = "SIGTERM"
	}
	return "interrupted by " + name
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// signalContext is canceled, with an *InterruptedError as its cause, on
// the first SIGINT or SIGTERM.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			cancel(&InterruptedError{Signal: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// asInterrupted turns a command's error into an *InterruptedError when a
// signal stopped it, so no "internal error: context canceled" reaches the
// user.
func asInterrupted(ctx context.Context, err error) error {
	var ie *InterruptedError
	if err == nil || errors.As(err, &ie) || !errors.As(context.Cause(ctx), &ie) {
		return err
	}
	out := &InterruptedError{Signal: ie.Signal}
	if !errors.Is(err, context.Canceled) && !isExit(err) {
		out.Err = err
	}
	return out
}

func dispatch(ctx context.Context, env *Env, table []*command, path []string, args []string) error {
	if path == nil && len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		return runVersion(ctx, env, args[1:])
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) == 0 {
			printUsage(env.Stderr, table, path)
			return &UsageError{Msg: "missing command"}
		}
		printUsage(env.Stdout, table, path) // asked for: the command's output
		return Exit(ExitOK)
	}
	name := args[0]
	if name == "help" && path == nil {
		return help(env, args[1:])
	}
	for _, c := range table {
		if c.name != name {
			continue
		}
		if c.sub != nil {
			return dispatch(ctx, env, c.sub, append(path, name), args[1:])
		}
		return c.run(ctx, env, args[1:])
	}
	return &UsageError{Msg: fmt.Sprintf("unknown command %q", strings.Join(append(path, name), " ")),
		Hint: "run 'failpass help' for the list of commands"}
}

func help(env *Env, args []string) error {
	table, path := commands, []string(nil)
	for _, a := range args {
		var found *command
		for _, c := range table {
			if c.name == a {
				found = c
			}
		}
		if found == nil {
			return &UsageError{Msg: fmt.Sprintf("unknown help topic %q", strings.Join(args, " "))}
		}
		if found.sub == nil {
			// Leaf commands print their own usage on -h.
			return found.run(context.Background(), env, []string{"-h"})
		}
		table, path = found.sub, append(path, a)
	}
	printUsage(env.Stdout, table, path)
	return nil
}

func printUsage(w io.Writer, table []*command, path []string) {
	prefix := strings.Join(append([]string{"failpass"}, path...), " ")
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prefix)
	width := 10
	for _, c := range table {
		width = max(width, len(c.name))
	}
	for _, c := range table {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> -h' for a command's flags.\n", prefix)
	if slices.Equal(path, []string{"card"}) {
		fmt.Fprintf(w, "\nCard fields (docs/card.md):\n")
		for _, f := range card.Fields() {
			fmt.Fprintf(w, "  %-22s %s\n", f[0]+":", f[1])
		}
	}
	if path == nil {
		fmt.Fprintf(w, "'failpass --version' prints the version. Exit codes: 0 pass/valid, 1 a rule broken/not valid, 2 trouble, 130 interrupted.\n")
	}
}

// exitCode prints err the house way and returns the code for it:
//
//	failpass: error: <what>      (user errors: exit 2)
//	hint: <exact fix>
//	failpass: internal error: <what>
func exitCode(env *Env, err error) int {
	if err == nil {
		return ExitOK
	}
	var ie *InterruptedError
	if errors.As(err, &ie) {
		fmt.Fprintf(env.Stderr, "failpass: %s\n", ie)
		if ie.Err != nil {
			if msg, hints, ok := userError(ie.Err); ok {
				printError(env.Stderr, "failpass: ", msg, hints)
			}
		}
		return 128 + int(ie.Signal)
	}
	var ex exitErr
	if errors.As(err, &ex) {
		return int(ex)
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		var hints []string
		if ue.Hint != "" {
			hints = []string{ue.Hint}
		}
		printError(env.Stderr, "failpass: usage error: ", ue.Msg, hints)
		return ExitTrouble
	}
	// A repository folder that is not there is the command line's fault
	// (--repo), whichever command opened it.
	var nf *gitx.NotFolderError
	if errors.As(err, &nf) {
		what := "not a folder"
		if errors.Is(nf, os.ErrNotExist) {
			what = "no such folder"
		}
		printError(env.Stderr, "failpass: usage error: ", "--repo "+nf.Dir+": "+what, []string{"pass the folder of a git repository"})
		return ExitTrouble
	}
	if msg, hints, ok := userError(err); ok {
		printError(env.Stderr, "failpass: error: ", msg, hints)
		return ExitTrouble
	}
	if msg, hints, ok := environmentError(err); ok {
		printError(env.Stderr, "failpass: error: ", msg, hints)
		return ExitTrouble
	}
	printError(env.Stderr, "failpass: internal error: ", err.Error(), nil)
	return ExitTrouble
}

// printError writes one message line and its hint lines, every one
// sanitized: a control byte from a hostile input (a NUL in a file name, an
// escape sequence in a card) never reaches the terminal, and a newline in
// a message cannot forge a hint line.
func printError(w io.Writer, prefix, msg string, hints []string) {
	fmt.Fprintf(w, "%s%s\n", prefix, Sanitize(msg))
	printHints(w, hints)
}

// printHints writes hint lines, sanitized as printError's are: a command
// that prints its own result line (record verify, card from-commit) and
// then hints carrying a record's or a commit's text uses it too.
func printHints(w io.Writer, hints []string) {
	for _, h := range hints {
		fmt.Fprintf(w, "hint: %s\n", Sanitize(h))
	}
}

// Sanitize makes s safe to print as one line: every control character
// (NUL included) but tab becomes a visible \xNN escape.
func Sanitize(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// environmentError names the trouble that is the machine's, not
// failpass's: a full disk, a missing git. They are said plainly, with the
// fix, instead of as an internal error.
func environmentError(err error) (string, []string, bool) {
	// git reports a full disk only in its words; its stderr is the one
	// place the cause is written.
	var ge *gitx.Error
	gitFull := errors.As(err, &ge) && (strings.Contains(ge.Stderr, "No space left on device") || strings.Contains(ge.Stderr, "Disk quota exceeded"))
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), gitFull:
		return "the disk is full: " + err.Error(), []string{
			"free space on the disk named above (failpass keeps its worktrees, logs and caches under <git common dir>/failpass/)",
			"'failpass gc --max-size 1GiB' removes old caches and logs"}, true
	case errors.Is(err, gitx.ErrNoGit):
		return gitx.ErrNoGit.Error(), []string{"install git (2.39 or newer) and make sure it is on PATH"}, true
	}
	return "", nil, false
}

// exitErr ends a command with a code after the command printed its own
// result (a broken rule, an invalid document).
type exitErr int

func (e exitErr) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// Exit returns an error that makes Main return code without printing
// anything more.
func Exit(code int) error { return exitErr(code) }

// UsageError is a bad command line: unknown flags, missing or conflicting
// arguments. It always exits 2.
type UsageError struct {
	Msg  string
	Hint string
}

func (e *UsageError) Error() string { return e.Msg }

// Error is a user error with hints: a bad input file, a missing repository.
type Error struct {
	Msg   string
	Hints []string
	Err   error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes a user error; hints follow with Hint.
func Errorf(format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Hint adds a hint line and returns e.
func (e *Error) Hint(format string, args ...any) *Error {
	e.Hints = append(e.Hints, fmt.Sprintf(format, args...))
	return e
}

// hinter is implemented by library errors that know the fix (card.ParseError).
type hinter interface {
	error
	Hints() []string
}

// userError says whether err is the user's to fix, and how to print it.
// Typed library errors that are user errors implement UserFacing.
func userError(err error) (string, []string, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Error(), e.Hints, true
	}
	var h hinter
	if errors.As(err, &h) {
		return h.Error(), h.Hints(), true
	}
	var u interface {
		error
		UserFacing() bool
	}
	if errors.As(err, &u) && u.UserFacing() {
		return u.Error(), nil, true
	}
	return "", nil, false
}

// writeJSON prints v and a newline on stdout: the one JSON writer of
// every --json output. One line, or with pretty indented by two spaces
// (loop validate's form, as the peer's validator prints it). Strings are
// not HTML-escaped: a path with & or < reads as itself.
func writeJSON(env *Env, v any, pretty bool) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

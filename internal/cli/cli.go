// Package cli owns failpass's command table, flag parsing, output modes and
// the one mapping from errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
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
		{name: "results", summary: "merge shard outputs", sub: resultsCommands()},
		{name: "loop", summary: "run and inspect the review-fix loop", sub: loopCommands()},
		{name: "gc", summary: "remove what dead failpass runs left behind", run: runGC},
		{name: "version", summary: "print the version", run: runVersion},
	}
}

// Main runs failpass with args (without the program name) and returns the
// exit code. It is the only place errors become exit codes.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	return exitCode(env, dispatch(ctx, env, commands, nil, args))
}

func dispatch(ctx context.Context, env *Env, table []*command, path []string, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		printUsage(env.Stderr, table, path)
		if len(args) == 0 {
			return &UsageError{Msg: "missing command"}
		}
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
	for _, c := range table {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> -h' for a command's flags.\n", prefix)
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
	var ex exitErr
	if errors.As(err, &ex) {
		return int(ex)
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "failpass: usage error: %s\n", ue.Msg)
		if ue.Hint != "" {
			fmt.Fprintf(env.Stderr, "hint: %s\n", ue.Hint)
		}
		return ExitTrouble
	}
	if msg, hints, ok := userError(err); ok {
		fmt.Fprintf(env.Stderr, "failpass: error: %s\n", msg)
		for _, h := range hints {
			fmt.Fprintf(env.Stderr, "hint: %s\n", h)
		}
		return ExitTrouble
	}
	fmt.Fprintf(env.Stderr, "failpass: internal error: %v\n", err)
	return ExitTrouble
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

package model

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/scratch"
)

// commandAdapter runs a cmd: program: no shell, no arguments, the request
// on stdin, FAILPASS_ROLE in its environment, in the folder its role
// states, with a timeout, its stdout captured up to MaxReply.
type commandAdapter struct {
	program string // absolute
	opts    Options
	conf    Confinement
}

// Confinement is how the program of a cmd: adapter runs for the loop's
// roles: in a private view of the file system, its process group told
// to the caller as soon as it runs.
type Confinement struct {
	View *sandbox.View // nil: no view
	// Sandbox, when set (and View is not), runs the program contained as
	// a card command is (sandbox.Policy with its Role set): it reads the
	// system's and toolchains' folders, its working folder and what the
	// policy grants, writes its working folder (and, for a fixer, that
	// folder's private git repository), has a private HOME and TMPDIR,
	// and no network unless granted. The program itself is made readable.
	Sandbox *sandbox.Policy
	Started func(pgid int) // nil: not told
}

// Confined returns a with its program run under c. An adapter without a
// local program (openai/) has nothing to confine and is returned as it
// is; Local says which is which.
func Confined(a Adapter, c Confinement) Adapter {
	if ca, ok := a.(*commandAdapter); ok {
		cp := *ca
		cp.conf = c
		return &cp
	}
	return a
}

// Local says whether a runs a program on this machine (cmd:), which a
// Confinement applies to.
func Local(a Adapter) bool {
	_, ok := a.(*commandAdapter)
	return ok
}

func newCommand(program string, opts Options) (*commandAdapter, error) {
	fi, err := os.Stat(program)
	if err != nil {
		return nil, &ConfigError{Msg: fmt.Sprintf("cmd: program %s: %v", program, errors.Unwrap(err)),
			Hint: "give the path of an executable file (relative to the current folder), e.g. cmd:./reviewer"}
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, &ConfigError{Msg: fmt.Sprintf("cmd: program %s is not an executable file", program),
			Hint: fmt.Sprintf("chmod +x %s", program)}
	}
	return &commandAdapter{program: program, opts: opts}, nil
}

// Call runs the program once. A non-zero exit, a timeout or a start
// failure is an *AdapterError (a fixer's non-zero exit means "no change",
// which Fix reads from it); stdout over MaxReply is an *OversizeError.
func (c *commandAdapter) Call(ctx context.Context, role Role, request []byte, workdir string) ([]byte, error) {
	if len(request) > MaxRequest {
		return nil, &OversizeError{What: "request", Limit: MaxRequest}
	}
	root := workdir
	if root == "" {
		// A role with no working folder gets an empty one of its own, so
		// the program never starts in (and never writes to) the user's
		// checkout.
		tmp, err := scratch.New(string(role))
		if err != nil {
			return nil, err
		}
		defer tmp.Remove()
		root = tmp.Path
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	program, err := filepath.Abs(c.program)
	if err != nil {
		return nil, err
	}
	var policy *sandbox.Policy
	if c.conf.Sandbox != nil && c.conf.View == nil {
		p := *c.conf.Sandbox
		p.Readable = append(append([]string(nil), p.Readable...), program)
		policy = &p
		if workdir == "" {
			// The sandbox confines a command to a git worktree; a role
			// without one gets an empty repository folder of its own.
			if err := os.MkdirAll(filepath.Join(root, ".git", "objects"), 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o600); err != nil {
				return nil, err
			}
		}
	}
	env := append(append([]string(nil), c.baseEnv()...), "FAILPASS_ROLE="+string(role))
	spec := "cmd:" + c.program
	// stderr goes to a scratch log, so a failing program's last words can
	// be quoted in the error; it never reaches the reply.
	logDir, err := scratch.New("adapter-log")
	if err != nil {
		return nil, err
	}
	defer logDir.Remove()
	logPath := filepath.Join(logDir.Path, "stderr")
	out, res, err := run.Capture(ctx, run.Spec{
		Argv:    []string{program},
		Root:    root,
		Env:     env,
		Timeout: c.opts.Timeout,
		Log:     logPath,
		MaxLog:  maxStderr,
		View:    c.conf.View,
		Sandbox: policy,
		Started: c.conf.Started,
	}, request, c.opts.MaxReply)
	var lim *run.OutputLimitError
	if errors.As(err, &lim) {
		return nil, &OversizeError{What: spec + " output", Limit: c.opts.MaxReply}
	}
	if err != nil {
		return nil, &AdapterError{Spec: spec, Role: role, Exit: -1, Reason: err.Error(), Err: err}
	}
	ae := &AdapterError{Spec: spec, Role: role, Exit: res.Exit, TimedOut: res.TimedOut, Reason: res.String()}
	switch {
	case res.StartErr != nil:
		ae.Err = res.StartErr
		return nil, ae
	case res.TimedOut:
		ae.Reason = fmt.Sprintf("timed out after %s", c.opts.Timeout)
		return nil, ae
	case res.Canceled:
		ae.Err = ctx.Err()
		return nil, ae
	case res.Signal != "" || res.Exit != 0:
		if tail := lastLine(logPath); tail != "" {
			ae.Reason += ": " + tail
		}
		return nil, ae
	}
	return out, nil
}

// baseEnv is the program's environment without FAILPASS_ROLE: the caller's
// Options.Env, or a minimal one. The tool's own variables (an API key) are
// not passed on unless the caller says so.
func (c *commandAdapter) baseEnv() []string {
	var out []string
	for _, kv := range c.opts.Env {
		if len(kv) >= len("FAILPASS_ROLE=") && kv[:len("FAILPASS_ROLE=")] == "FAILPASS_ROLE=" {
			continue
		}
		out = append(out, kv)
	}
	if out == nil {
		out = run.MinimalEnv(c.opts.Getenv)
	}
	return out
}

// maxStderr bounds what is kept of an adapter program's stderr.
const maxStderr = 64 << 10

// lastLine is the last non-empty line of a log, clipped, or "".
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(b), "?")), "\n")
	return clip(lines[len(lines)-1], maxErrorText)
}

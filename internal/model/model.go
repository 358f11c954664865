// Package model owns the model adapters (cmd: programs and openai/ endpoints) and the role protocol they speak: drafts, review packets and results, fix and decide requests.
package model

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/run"
)

// Role is what an adapter is asked to do. A cmd: program sees it as
// FAILPASS_ROLE; an openai/ adapter picks its instructions by it.
type Role string

// The four roles of the protocol table in docs/models.md.
const (
	RoleDrafter  Role = "drafter"
	RoleReviewer Role = "reviewer"
	RoleFixer    Role = "fixer"
	RoleDecider  Role = "decider"
)

// Bounds on what crosses an adapter boundary. Oversize is an error, never a
// silent truncation.
const (
	// MaxRequest bounds a request sent to an adapter.
	MaxRequest = 8 << 20
	// DefaultMaxReply bounds a reply read from an adapter.
	DefaultMaxReply = 1 << 20
	// DefaultTimeout bounds one adapter call.
	DefaultTimeout = 5 * time.Minute
	// DefaultRetries is how often an openai/ call is retried on 429 and 5xx.
	DefaultRetries = 2
	// DefaultKeyEnv names the variable the API key is read from.
	DefaultKeyEnv = "OPENAI_API_KEY"
	// DefaultBaseURLEnv names the variable the base URL is read from.
	DefaultBaseURLEnv = "OPENAI_BASE_URL"
)

// Kinds of adapter spec.
const (
	KindCmd    = "cmd"
	KindOpenAI = "openai"
)

// Spec is a parsed adapter spec: `cmd:PROGRAM` or `openai/MODEL`.
type Spec struct {
	Kind    string // KindCmd or KindOpenAI
	Program string // cmd: the program path as written
	Model   string // openai/: the model name
}

// String returns the spec in the grammar ParseSpec reads.
func (s Spec) String() string {
	if s.Kind == KindCmd {
		return "cmd:" + s.Program
	}
	return "openai/" + s.Model
}

// SpecError is an adapter spec that does not follow the grammar.
type SpecError struct {
	Spec   string
	Reason string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("adapter spec %q: %s", e.Spec, e.Reason)
}

// Hints tells the user the grammar.
func (e *SpecError) Hints() []string {
	return []string{"an adapter spec is cmd:PROGRAM (a program path, no arguments: use a wrapper script) or openai/MODEL"}
}

// ParseSpec parses an adapter spec. A cmd: program takes no arguments and
// no shell syntax: a wrapper script carries them, so what runs is exactly
// one file.
func ParseSpec(s string) (Spec, error) {
	bad := func(reason string) (Spec, error) { return Spec{}, &SpecError{Spec: s, Reason: reason} }
	if strings.ContainsAny(s, "\x00\n\r") {
		return bad("contains a control character")
	}
	switch {
	case strings.HasPrefix(s, "cmd:"):
		p := strings.TrimPrefix(s, "cmd:")
		if p == "" {
			return bad("no program after cmd:")
		}
		if strings.TrimSpace(p) != p || strings.ContainsAny(p, " \t") {
			return bad("a cmd: program takes no arguments (put them in a wrapper script)")
		}
		if strings.HasSuffix(p, "/") {
			return bad("names a folder, not a program")
		}
		return Spec{Kind: KindCmd, Program: p}, nil
	case strings.HasPrefix(s, "openai/"):
		m := strings.TrimPrefix(s, "openai/")
		if m == "" {
			return bad("no model after openai/")
		}
		for _, r := range m {
			if r <= ' ' || r == 0x7f {
				return bad("model name contains a space or control character")
			}
		}
		return Spec{Kind: KindOpenAI, Model: m}, nil
	}
	return bad("unknown kind (want cmd:PROGRAM or openai/MODEL)")
}

// Options configure an adapter. Zero values take the defaults above.
type Options struct {
	// BaseURL overrides OPENAI_BASE_URL for openai/ adapters.
	BaseURL string
	// KeyEnv names the variable holding the API key (default OPENAI_API_KEY).
	// The key itself never travels on a command line.
	KeyEnv string
	// Timeout bounds one call of a cmd: program, and each HTTP attempt of
	// an openai/ call (whose retries and backoff get a deadline of their
	// own: Timeout per attempt plus at most 8s of backoff between them).
	Timeout time.Duration
	// Retries bounds openai/ retries on 429, 408, 409, 5xx and connection
	// failures; 0 means DefaultRetries, negative means none.
	Retries int
	// Getenv reads the environment (tests pass their own).
	Getenv func(string) string
	// Dir resolves a relative cmd: program (the current directory).
	Dir string
	// MaxReply bounds a reply.
	MaxReply int64
	// Env is the environment of a cmd: program (FAILPASS_ROLE is added).
	Env []string
}

// RoleEnv is a role program's environment (Options.Env): run's minimal
// one, plus the granted variables that are set.
func RoleEnv(getenv func(string) string, granted []string) []string {
	env := run.MinimalEnv(getenv)
	for _, n := range granted {
		if v := getenv(n); v != "" {
			env = append(env, n+"="+v)
		}
	}
	return env
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxReply <= 0 {
		o.MaxReply = DefaultMaxReply
	}
	if o.KeyEnv == "" {
		o.KeyEnv = DefaultKeyEnv
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	return o
}

// Adapter is one model behind one small interface: it sends a request for a
// role and returns the raw reply. What a reply means is decided by the
// role's parser (ExtractDiff, ValidateResult, ParseDispositions), never by
// the adapter, so a cmd: program and an endpoint are held to the same rules.
type Adapter interface {
	// Call sends request (JSON) for role. workdir is the folder the role
	// states (a read-only snapshot for a reviewer, the attempt's worktree
	// for a fixer, "" for none).
	Call(ctx context.Context, role Role, request []byte, workdir string) ([]byte, error)
}

// New makes the adapter spec names.
func New(spec Spec, opts Options) (Adapter, error) {
	opts = opts.withDefaults()
	switch spec.Kind {
	case KindCmd:
		p := spec.Program
		if !filepath.IsAbs(p) {
			if opts.Dir == "" {
				return nil, errors.New("model: a relative cmd: program needs Options.Dir")
			}
			p = filepath.Join(opts.Dir, p)
		}
		return newCommand(p, opts)
	case KindOpenAI:
		return newOpenAI(spec.Model, opts)
	}
	return nil, &SpecError{Spec: spec.String(), Reason: "unknown kind"}
}

// RefusedError is a reply failpass will not use, with the reason. A refused
// reply is never half-used.
type RefusedError struct {
	Role    Role
	Reason  string
	Details []string // e.g. schema problems, one per line
}

func (e *RefusedError) Error() string {
	who := string(e.Role)
	if who == "" {
		who = "model"
	}
	msg := who + " reply refused: " + e.Reason
	if len(e.Details) > 0 {
		msg += " (" + strings.Join(e.Details, "; ") + ")"
	}
	return msg
}

// UserFacing marks a refusal as an outcome to report, not an internal fault.
func (e *RefusedError) UserFacing() bool { return true }

func refuse(role Role, format string, args ...any) *RefusedError {
	return &RefusedError{Role: role, Reason: fmt.Sprintf(format, args...)}
}

// AdapterError is trouble talking to a model: the program could not run,
// timed out, exited non-zero, or the endpoint failed after its retries.
type AdapterError struct {
	Spec     string
	Role     Role
	Reason   string
	Exit     int  // exit code of a cmd: program, -1 when it did not exit
	TimedOut bool // the call hit its timeout
	Status   int  // HTTP status of the last openai/ attempt, 0 when none
	Err      error
}

func (e *AdapterError) Error() string {
	msg := fmt.Sprintf("%s (%s): %s", e.Spec, e.Role, e.Reason)
	return msg
}

func (e *AdapterError) Unwrap() error { return e.Err }

// UserFacing: an adapter that fails is the user's to fix (wrong program,
// endpoint down, key missing), not a failpass bug.
func (e *AdapterError) UserFacing() bool { return true }

// OversizeError is a request or reply over its bound.
type OversizeError struct {
	What  string
	Limit int64
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.What, e.Limit)
}

// UserFacing: oversize input is the sender's to fix.
func (e *OversizeError) UserFacing() bool { return true }

package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/jsonschema"
)

// RequestSchemaVersion is the version of failpass's own requests (draft,
// fix, decide).
const RequestSchemaVersion = "1.0"

// DraftRequest is what a drafter gets. An openai/ drafter receives Prompt
// alone (exactly what `failpass prompt` prints); a cmd: drafter gets the
// whole request as JSON and may use the parts.
type DraftRequest struct {
	SchemaVersion string `json:"schema_version"`
	Prompt        string `json:"prompt"`
	Card          string `json:"card"`
	DiffStat      string `json:"diff_stat,omitempty"`
	Stack         string `json:"stack,omitempty"`
}

// ValidationFailure is one failed validation command the fixer should
// address.
type ValidationFailure struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	Scope      string `json:"scope"` // "focused" | "full"
	LogExcerpt string `json:"log_excerpt"`
}

// FixBudget is what the fixer may spend. Card fields are present when the
// loop runs under a card; ProtectedPaths are its oracle files.
type FixBudget struct {
	RemainingCycles int      `json:"remaining_cycles"`
	MaxFiles        *int     `json:"max_files,omitempty"`
	MaxChangedLines *int     `json:"max_changed_lines,omitempty"`
	DenyGlobs       []string `json:"deny_globs,omitempty"`
	ProtectedPaths  []string `json:"protected_paths,omitempty"`
}

// FixRequest is what a fixer reads (docs/models.md, the role protocol): the
// accepted findings as the reviewer wrote them, validation failures, the
// change contract (the invocation's, passed through) and the budget.
type FixRequest struct {
	SchemaVersion      string              `json:"schema_version"`
	InvocationID       string              `json:"invocation_id"`
	Cycle              int                 `json:"cycle"`
	HeadSHA            string              `json:"head_sha"`
	ComparisonBaseSHA  string              `json:"comparison_base_sha"`
	Findings           []Finding           `json:"findings"`
	ValidationFailures []ValidationFailure `json:"validation_failures"`
	ChangeContract     json.RawMessage     `json:"change_contract"`
	Budget             FixBudget           `json:"budget"`
}

// DecideRequest is what a decider reads.
type DecideRequest struct {
	SchemaVersion  string          `json:"schema_version"`
	Findings       []Finding       `json:"findings"`
	ChangeContract json.RawMessage `json:"change_contract"`
	Budget         FixBudget       `json:"budget"`
}

// Disposition is a decider's call on one finding.
type Disposition struct {
	FindingID   string `json:"finding_id"`
	Disposition string `json:"disposition"` // accepted | rejected | deferred
	Rationale   string `json:"rationale"`
}

// Marshal returns the request's JSON after checking it.
func (r *FixRequest) Marshal() ([]byte, error) {
	q := *r
	if q.Findings == nil {
		q.Findings = []Finding{}
	}
	if q.ValidationFailures == nil {
		q.ValidationFailures = []ValidationFailure{}
	}
	if len(q.Findings) == 0 && len(q.ValidationFailures) == 0 {
		return nil, errors.New("fix request: nothing to fix (no findings, no validation failures)")
	}
	return marshalChecked("fix request", fixRequestSchema(), &q)
}

// Marshal returns the request's JSON after checking it.
func (r *DecideRequest) Marshal() ([]byte, error) {
	return marshalChecked("decide request", decideRequestSchema(), r)
}

// Marshal returns the request's JSON after checking it.
func (r *DraftRequest) Marshal() ([]byte, error) {
	return marshalChecked("draft request", draftRequestSchema(), r)
}

func marshalChecked(doc string, s *jsonschema.Schema, v any) ([]byte, error) {
	data, err := marshalJSON(v)
	if err != nil {
		return nil, err
	}
	if err := validateSchema(doc, s, data); err != nil {
		return nil, err
	}
	return data, nil
}

// ParseDispositions reads a decider's reply and refuses it unless it
// gives exactly one disposition, with a rationale, to every finding asked
// about and to nothing else.
func ParseDispositions(reply []byte, findings []Finding) ([]Disposition, error) {
	body, rerr := jsonBody(RoleDecider, reply)
	if rerr != nil {
		return nil, rerr
	}
	if err := validateSchema("decider reply", decideReplySchema(), body); err != nil {
		return nil, &RefusedError{Role: RoleDecider, Reason: "the reply does not match its schema", Details: err.(*SchemaError).details()}
	}
	var out struct {
		Dispositions []Disposition `json:"dispositions"`
	}
	if err := decodeInto(body, &out); err != nil {
		return nil, refuse(RoleDecider, "the reply cannot be decoded: %v", err)
	}
	asked := map[string]bool{}
	for _, f := range findings {
		asked[f.ID] = true
	}
	got := map[string]bool{}
	for _, d := range out.Dispositions {
		switch {
		case !asked[d.FindingID]:
			return nil, refuse(RoleDecider, "a disposition names finding %q, which was not asked about", d.FindingID)
		case got[d.FindingID]:
			return nil, refuse(RoleDecider, "finding %q has two dispositions", d.FindingID)
		}
		got[d.FindingID] = true
	}
	for _, f := range findings {
		if !got[f.ID] {
			return nil, refuse(RoleDecider, "finding %q has no disposition", f.ID)
		}
	}
	return out.Dispositions, nil
}

// jsonBody takes a JSON reply, bare or as the only content of one fenced
// block (a chat model's habit); anything else around it is refused.
func jsonBody(role Role, reply []byte) ([]byte, *RefusedError) {
	t := bytes.TrimSpace(reply)
	if len(t) == 0 {
		return nil, refuse(role, "the reply is empty")
	}
	if t[0] == '{' {
		return t, nil
	}
	lines := splitLines(string(t))
	if ch, n, _, ok := fenceOpen(lines[0]); ok && len(lines) >= 2 && fenceClose(lines[len(lines)-1], ch, n) {
		return []byte(strings.Join(lines[1:len(lines)-1], "")), nil
	}
	return nil, refuse(role, "the reply is not one JSON object")
}

// Draft asks a drafter for a diff and extracts it. The caller checks the
// prose (CheckProse) and the budget before writing the diff anywhere.
func Draft(ctx context.Context, a Adapter, req *DraftRequest) (*Reply, error) {
	data, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	reply, err := a.Call(ctx, RoleDrafter, data, "")
	if err != nil {
		return nil, err
	}
	return ExtractDiff(reply)
}

// Review hands a reviewer the packet in snapshot (a read-only tree of the
// exact head) and returns its result, validated against the packet's
// binding and the required lenses.
func Review(ctx context.Context, a Adapter, p *ReviewPacket, snapshot string, lenses []string) (*ReviewResult, error) {
	data, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	reply, err := a.Call(ctx, RoleReviewer, data, snapshot)
	if err != nil {
		return nil, err
	}
	body, rerr := jsonBody(RoleReviewer, reply)
	if rerr != nil {
		return nil, rerr
	}
	return ValidateResult(body, BindingOf(p, lenses))
}

// Decide asks a decider for the disposition of every finding.
func Decide(ctx context.Context, a Adapter, req *DecideRequest) ([]Disposition, error) {
	data, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	reply, err := a.Call(ctx, RoleDecider, data, "")
	if err != nil {
		return nil, err
	}
	return ParseDispositions(reply, req.Findings)
}

// FixOutcome is what a fixer did in the attempt's worktree.
type FixOutcome struct {
	// Changed: the worktree now holds the fixer's change (edited in place,
	// or its diff applied by failpass). When false nothing was changed and
	// Reason says why.
	Changed bool
	// Diff is the diff the fixer wrote on stdout, nil when it edited files.
	Diff   []byte
	Reason string
}

// A FixTree is the fixer's worktree as the caller reads and changes it
// once the fixer returned. The loop reads it without running git in the
// worktree or through its git folder, which the fixer may have rewritten
// (loop.attemptTree); GitTree is the plain reading, for a worktree whose
// git folder no program wrote.
type FixTree interface {
	// Changed says whether the worktree's files now differ from the
	// commit the fixer started from.
	Changed(ctx context.Context) (bool, error)
	// Apply applies a unified diff to the worktree's files (with check,
	// only checks that it applies).
	Apply(ctx context.Context, diff []byte, check bool) error
}

// Fix runs a fixer in worktree (the attempt's, writable) and leaves its
// change there, uncommitted: a fixer either edits files and exits 0, or
// edits nothing and writes one unified diff, which Fix applies. A non-zero
// exit means "no change". Refused (and the worktree left for the caller
// to discard): exit 0 with no change, edits and a diff both, a diff that
// does not apply, a commit or a moved HEAD. worktree is read through
// GitTree: its git folder must be one no program wrote (FixIn otherwise).
func Fix(ctx context.Context, a Adapter, req *FixRequest, worktree string) (*FixOutcome, error) {
	tree, err := NewGitTree(ctx, worktree)
	if err != nil {
		return nil, err
	}
	if dirty, err := tree.Changed(ctx); err != nil {
		return nil, err
	} else if dirty {
		return nil, fmt.Errorf("fix: worktree %s is not clean before the fixer ran", worktree)
	}
	return FixIn(ctx, a, req, worktree, func() (FixTree, error) { return tree, nil })
}

// FixIn is Fix for a worktree the caller made clean at the request's
// head, read and changed after the fixer returned through the FixTree
// that open makes then (and only then: nothing of it exists while the
// fixer runs).
func FixIn(ctx context.Context, a Adapter, req *FixRequest, worktree string, open func() (FixTree, error)) (*FixOutcome, error) {
	data, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	reply, err := a.Call(ctx, RoleFixer, data, worktree)
	var ae *AdapterError
	if errors.As(err, &ae) && ae.Exit > 0 && !ae.TimedOut {
		return &FixOutcome{Reason: fmt.Sprintf("the fixer made no change (%s)", ae.Reason)}, nil
	}
	if err != nil {
		return nil, err
	}
	tree, err := open()
	if err != nil {
		return nil, err
	}
	dirty, err := tree.Changed(ctx)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(reply)) == 0 {
		if !dirty {
			return nil, refuse(RoleFixer, "the fixer exited 0 but changed nothing")
		}
		return &FixOutcome{Changed: true}, nil
	}
	r, err := ExtractDiff(reply)
	if dirty {
		if err != nil {
			return nil, refuse(RoleFixer, "the fixer edited files and wrote text on stdout (stdout must stay empty when it edits)")
		}
		return nil, refuse(RoleFixer, "the fixer both edited files and wrote a diff")
	}
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			re.Role = RoleFixer
		}
		return nil, err
	}
	// git apply refuses paths outside the worktree and through symlinks;
	// the loop's budget check on the cumulative diff judges the rest.
	if err := tree.Apply(ctx, r.Diff, true); err != nil {
		return nil, refuse(RoleFixer, "the fixer's diff does not apply: %s", gitReason(err))
	}
	if err := tree.Apply(ctx, r.Diff, false); err != nil {
		return nil, refuse(RoleFixer, "the fixer's diff does not apply: %s", gitReason(err))
	}
	return &FixOutcome{Changed: true, Diff: r.Diff}, nil
}

// GitTree reads a worktree with git run in it: `git status` for its
// changes and `git apply` for a diff. Only for a worktree whose git
// folder no program wrote (git follows its .git file and config: a
// fixer that rewrote them would have git run its filter).
type GitTree struct {
	dir, head string
}

// NewGitTree records dir's HEAD, which the fixer must not move.
func NewGitTree(ctx context.Context, dir string) (*GitTree, error) {
	head, err := gitx.Command(ctx, dir, nil, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return nil, err
	}
	return &GitTree{dir: dir, head: string(head)}, nil
}

// Changed is `git status` non-empty; a moved HEAD is refused.
func (g *GitTree) Changed(ctx context.Context) (bool, error) {
	after, err := gitx.Command(ctx, g.dir, nil, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return false, err
	}
	if string(after) != g.head {
		return false, refuse(RoleFixer, "the fixer moved HEAD (it must never commit)")
	}
	return worktreeDirty(ctx, g.dir)
}

// Apply is `git apply` in the worktree.
func (g *GitTree) Apply(ctx context.Context, diff []byte, check bool) error {
	args := []string{"apply"}
	if check {
		args = append(args, "--check")
	}
	_, err := gitx.Command(ctx, g.dir, diff, append(args, "-")...)
	return err
}

func worktreeDirty(ctx context.Context, dir string) (bool, error) {
	out, err := gitx.Status(ctx, dir, false)
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}

func gitReason(err error) string {
	var ge *gitx.Error
	if errors.As(err, &ge) {
		return clip(ge.Stderr, maxErrorText)
	}
	return err.Error()
}

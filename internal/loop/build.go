package loop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/shellquote"
)

// Request is what `loop start` asks for, from flags and optionally a
// complete invocation document. Zero fields were not given.
type Request struct {
	Branch                string
	Base                  string // ref; default: the card's base_sha, or the invocation's
	ID                    string
	Cycles                int // 0: the default, 3
	ReviewMode            string
	OverrideAuthorization string
	Publish               string // local_commit (default) or update_pr
	Remote                string
	PR                    int
	PRHeadRef             string
	ExpectedOld           string
	Card                  *CardPolicy
	From                  *loopdoc.Invocation // --invocation FILE
}

// DefaultCycles is the cycle budget when none is given.
const DefaultCycles = 3

// BuildInvocation resolves a start request against live git into a
// complete, valid invocation. Every error is the user's to fix (exit 2:
// there is no invocation yet).
func BuildInvocation(ctx context.Context, repo *gitx.Repo, r Request) (*loopdoc.Invocation, error) {
	if r.From != nil {
		return checkGiven(ctx, repo, r)
	}
	if r.Branch == "" {
		return nil, &InputError{Msg: "loop start needs --branch", Hint: "name the committed candidate branch: --branch BRANCH"}
	}
	if r.Card == nil {
		return nil, &InputError{Msg: "without --card there is no change contract",
			Hint: "give --card FILE, or --invocation FILE with the goal, acceptance criteria and validation commands"}
	}
	cycles := r.Cycles
	if cycles == 0 {
		cycles = DefaultCycles
	}
	if cycles < 1 || cycles > 10 {
		return nil, &InputError{Msg: fmt.Sprintf("--cycles %d is out of range", cycles), Hint: "the cycle budget is 1 to 10 (default 3)"}
	}
	mode := r.ReviewMode
	if mode == "" {
		mode = "fresh_subagent"
	}
	switch {
	case mode != "fresh_subagent" && mode != "in_agent_override":
		return nil, &InputError{Msg: fmt.Sprintf("--review-mode %q is unknown", mode), Hint: "use fresh_subagent (default) or in_agent_override with --override-authorization WHO"}
	case mode == "in_agent_override" && strings.TrimSpace(r.OverrideAuthorization) == "":
		return nil, &InputError{Msg: "--review-mode in_agent_override needs --override-authorization WHO", Hint: "name who allowed the fixer's adapter to review"}
	case mode == "fresh_subagent" && r.OverrideAuthorization != "":
		return nil, &InputError{Msg: "--override-authorization is only for --review-mode in_agent_override"}
	}
	head, err := branchHead(ctx, repo, r.Branch)
	if err != nil {
		return nil, err
	}
	baseRef, baseSHA := r.Base, ""
	if baseRef == "" {
		baseRef, baseSHA = r.Card.Base, r.Card.Base
		if r.Card.Card.BaseRef != "" {
			baseRef = r.Card.Card.BaseRef
		}
	} else if baseSHA, err = repo.Commit(ctx, baseRef); err != nil {
		return nil, &InputError{Msg: fmt.Sprintf("--base %s is not a commit", baseRef)}
	}
	if baseSHA == "" {
		return nil, &InputError{Msg: "no comparison base", Hint: "give --base REF or a card with base_sha"}
	}
	if live, err := repo.Commit(ctx, baseRef); err != nil || live != baseSHA {
		// The base ref no longer names the card's base (or does not
		// exist): bind the exact SHA, which never drifts.
		baseRef = baseSHA
	}
	id := r.ID
	if id == "" {
		id, err = newID(r.Branch, head)
		if err != nil {
			return nil, err
		}
	}
	if err := CheckID(id); err != nil {
		return nil, err
	}
	inv := &loopdoc.Invocation{
		SchemaVersion:   loopdoc.SchemaVersion,
		InvocationID:    id,
		ReviewExecution: loopdoc.ReviewExecution{Mode: mode, OverrideAuthorization: r.OverrideAuthorization},
		FixCycleBudget:  loopdoc.FixCycleBudget{MaxFixCycles: cycles},
		Validation:      r.Card.ValidationCommands(),
	}
	inv.Repository, err = repositoryOf(ctx, repo, r.Remote)
	if err != nil {
		return nil, err
	}
	cand, err := candidateOf(ctx, repo, r.Branch, head, loopdoc.BaseRef{Ref: baseRef, SHA: baseSHA})
	if err != nil {
		return nil, err
	}
	inv.Candidate = *cand
	c := r.Card.Card
	goal := "Make the change that card " + c.ID + " describes"
	if c.Origin != "" {
		goal += " (" + c.Origin + ")"
	}
	inv.ChangeContract = loopdoc.ChangeContract{
		Goal: goal,
		AcceptanceCriteria: []string{
			"the card's pass command exits " + strconv.Itoa(c.Pass.ExpectExit) + ": " + shellquote.Join(c.Pass.Cmd),
			"the card's invariant exits " + strconv.Itoa(c.Invariant.ExpectExit) + ": " + shellquote.Join(c.Invariant.Cmd),
		},
		NonGoals:           []string{"anything outside the card's budget"},
		PreservedBehaviors: []string{"the card's invariant keeps passing"},
		Sources: loopdoc.Sources{RepositoryInstructions: []loopdoc.SourceRef{}, NamedDocuments: []loopdoc.SourceRef{{Label: "card " + c.ID, Location: cardLocation(r.Card)}},
			NearbyPatterns: []loopdoc.SourceRef{}},
		AllowedRemediationScope: scopeText(r.Card),
	}
	switch r.Publish {
	case "", "local_commit":
		if r.PR != 0 || r.PRHeadRef != "" || r.ExpectedOld != "" {
			return nil, &InputError{Msg: "--pr, --pr-head-ref and --expected-old are only for --publish update_pr"}
		}
		inv.Publication = loopdoc.InvocationPublication{Policy: "local_commit"}
		inv.Candidate.SourceUnavailableReason = "local_commit: no pushable source is bound"
	case "update_pr":
		if err := updatePR(ctx, repo, inv, r, baseRef, baseSHA); err != nil {
			return nil, err
		}
	default:
		return nil, &InputError{Msg: fmt.Sprintf("--publish %q is unknown", r.Publish), Hint: "use local_commit (default) or update_pr"}
	}
	if _, _, err := checkInvocation(inv); err != nil {
		// Authority that does not hold is the loop's to answer
		// (blocked/missing_authority), not trouble.
		var de *DocumentError
		if errors.As(err, &de) && authorityOnly(de.Violations) {
			return inv, nil
		}
		return nil, err
	}
	return inv, nil
}

func cardLocation(p *CardPolicy) string {
	if p.InRepo != "" {
		return p.InRepo
	}
	return "card " + p.Card.ID + " (outside the repository)"
}

func scopeText(p *CardPolicy) string {
	b := p.Scope.Budget
	s := fmt.Sprintf("the card's budget: at most %d files and %d changed lines from base %s", b.MaxFiles, b.MaxChangedLines, p.Base)
	if len(b.DenyGlobs) > 0 {
		s += "; never " + strings.Join(b.DenyGlobs, ", ")
	}
	if len(p.Scope.Oracle) > 0 {
		s += "; never the oracle files " + strings.Join(p.Scope.Oracle, ", ")
	}
	return s
}

func updatePR(ctx context.Context, repo *gitx.Repo, inv *loopdoc.Invocation, r Request, baseRef, baseSHA string) error {
	if r.Remote == "" || r.PR < 1 || r.PRHeadRef == "" || r.ExpectedOld == "" {
		return &InputError{Msg: "--publish update_pr needs --remote NAME --pr N --pr-head-ref REF --expected-old SHA"}
	}
	if !isSHA1(r.ExpectedOld) {
		return &InputError{Msg: fmt.Sprintf("--expected-old %q is not a full lowercase SHA", r.ExpectedOld)}
	}
	ref := r.PRHeadRef
	if !strings.HasPrefix(ref, "refs/") {
		ref = "refs/heads/" + ref
	}
	url, err := repo.RemoteURL(ctx, r.Remote)
	if err != nil {
		return &InputError{Msg: fmt.Sprintf("--remote %s is not a git remote here", r.Remote)}
	}
	observed, err := repo.RemoteHead(ctx, r.Remote, ref)
	if err != nil {
		return &InputError{Msg: fmt.Sprintf("cannot read %s on %s: %v", ref, r.Remote, err)}
	}
	inv.Candidate.PullRequest = &loopdoc.PullRequestID{Repository: url, Number: r.PR}
	inv.Candidate.SourceBinding = &loopdoc.SourceBinding{Repository: url, RemoteURL: url, Ref: ref, ObservedObjectID: observed}
	inv.Publication = loopdoc.InvocationPublication{Policy: "update_pr", PullRequest: &loopdoc.PushTarget{
		HeadRepository: url, HeadRef: ref, ExpectedOldHeadSHA: r.ExpectedOld, BaseRef: baseRef, BaseSHA: baseSHA}}
	return nil
}

// repositoryOf is the repository's identity (the URL of the named remote,
// else of origin, else the path of its top folder) and its common dir.
func repositoryOf(ctx context.Context, repo *gitx.Repo, remote string) (loopdoc.Repository, error) {
	id := repo.Dir
	for _, name := range []string{remote, "origin"} {
		if name == "" {
			continue
		}
		if url, err := repo.RemoteURL(ctx, name); err == nil {
			id = url
			break
		}
	}
	return loopdoc.Repository{Identity: id, GitCommonDirectory: repo.CommonDir}, nil
}

func branchHead(ctx context.Context, repo *gitx.Repo, branch string) (string, error) {
	if _, err := repo.Git(ctx, "check-ref-format", "--branch", branch); err != nil || strings.HasPrefix(branch, "-") {
		return "", &InputError{Msg: fmt.Sprintf("--branch %q is not a branch name", branch)}
	}
	head, err := repo.Commit(ctx, "refs/heads/"+branch)
	if err != nil {
		return "", &InputError{Msg: fmt.Sprintf("branch %s does not exist", branch), Hint: "the candidate must be a committed local branch"}
	}
	return head, nil
}

// changeDiff is the candidate's complete change: the base...head diff,
// as reviewers read it (no external diff or text conversion runs).
func changeDiff(ctx context.Context, repo *gitx.Repo, base, head string) ([]byte, error) {
	return repo.Git(ctx, "diff", "--no-color", "--no-ext-diff", "--no-textconv", base+"..."+head, "--")
}

// candidateOf describes the committed candidate: head, base, the complete
// base...head diff, and the state of the checkout that has the branch (it
// must be clean: the loop never takes an uncommitted tree).
func candidateOf(ctx context.Context, repo *gitx.Repo, branch, head string, base loopdoc.BaseRef) (*loopdoc.Candidate, error) {
	diff, err := changeDiff(ctx, repo, base.SHA, head)
	if err != nil {
		return nil, &InputError{Msg: fmt.Sprintf("cannot diff %s against the base %s: %v", branch, short(base.SHA), err)}
	}
	if len(bytes.TrimSpace(diff)) == 0 {
		return nil, &InputError{Msg: fmt.Sprintf("branch %s has no changes against the base %s", branch, short(base.SHA)),
			Hint: "the loop reviews a committed candidate; commit the change first or pick the right --base"}
	}
	c := &loopdoc.Candidate{Branch: branch, HeadSHA: head, ComparisonBase: base, AllChangesCommitted: true,
		Diff: loopdoc.Diff{Format: "unified_diff", Complete: true, Content: string(diff)}}
	wts, err := listWorktrees(ctx, repo)
	if err != nil {
		return nil, err
	}
	c.Worktree = loopdoc.Worktree{Tracked: []string{}, Staged: []string{}, Unstaged: []string{}, Untracked: []string{}, Ignored: []string{}}
	dir := ""
	for _, w := range wts {
		if w.branch == "refs/heads/"+branch {
			dir = w.path
		}
	}
	files, err := repo.Files(ctx, head)
	if err != nil {
		return nil, err
	}
	c.Worktree.Tracked = append(c.Worktree.Tracked, files...)
	if dir == "" {
		return c, nil
	}
	st, err := gitx.Status(ctx, dir, true)
	if err != nil {
		return nil, err
	}
	for _, e := range strings.Split(string(st), "\x00") {
		if len(e) < 4 {
			continue
		}
		x, y, p := e[0], e[1], e[3:]
		switch {
		case x == '!':
			c.Worktree.Ignored = append(c.Worktree.Ignored, p)
		case x == '?':
			c.Worktree.Untracked = append(c.Worktree.Untracked, p)
		default:
			if x != ' ' {
				c.Worktree.Staged = append(c.Worktree.Staged, p)
			}
			if y != ' ' {
				c.Worktree.Unstaged = append(c.Worktree.Unstaged, p)
			}
		}
	}
	if n := len(c.Worktree.Staged) + len(c.Worktree.Unstaged) + len(c.Worktree.Untracked); n > 0 {
		return nil, &InputError{Msg: fmt.Sprintf("the checkout of %s at %s has %d uncommitted change(s)", branch, dir, n),
			Hint: "commit or remove them first: the loop takes only a committed, clean candidate"}
	}
	return c, nil
}

// checkGiven checks a complete invocation document against the flags
// given beside it and against live git.
func checkGiven(ctx context.Context, repo *gitx.Repo, r Request) (*loopdoc.Invocation, error) {
	inv := r.From
	disagree := func(flag, got, want string) error {
		return &InputError{Msg: fmt.Sprintf("%s %s disagrees with the invocation's %s", flag, got, want),
			Hint: "flags given beside --invocation must agree with it; drop them or fix the document"}
	}
	switch {
	case r.Branch != "" && r.Branch != inv.Candidate.Branch:
		return nil, disagree("--branch", r.Branch, inv.Candidate.Branch)
	case r.ID != "" && r.ID != inv.InvocationID:
		return nil, disagree("--id", r.ID, inv.InvocationID)
	case r.Cycles != 0 && r.Cycles != inv.FixCycleBudget.MaxFixCycles:
		return nil, disagree("--cycles", strconv.Itoa(r.Cycles), strconv.Itoa(inv.FixCycleBudget.MaxFixCycles))
	case r.ReviewMode != "" && r.ReviewMode != inv.ReviewExecution.Mode:
		return nil, disagree("--review-mode", r.ReviewMode, inv.ReviewExecution.Mode)
	case r.Publish != "" && r.Publish != inv.Publication.Policy:
		return nil, disagree("--publish", r.Publish, inv.Publication.Policy)
	case r.Card != nil && r.Card.Base != inv.Candidate.ComparisonBase.SHA:
		return nil, disagree("--card base_sha", r.Card.Base, inv.Candidate.ComparisonBase.SHA)
	}
	if err := CheckID(inv.InvocationID); err != nil {
		return nil, err
	}
	if inv.Repository.GitCommonDirectory != repo.CommonDir {
		return nil, &InputError{Msg: fmt.Sprintf("the invocation is for the repository at %s, not %s", inv.Repository.GitCommonDirectory, repo.CommonDir)}
	}
	head, err := branchHead(ctx, repo, inv.Candidate.Branch)
	if err != nil {
		return nil, err
	}
	if head != inv.Candidate.HeadSHA {
		return nil, &InputError{Msg: fmt.Sprintf("branch %s is at %s, but the invocation names head %s", inv.Candidate.Branch, short(head), short(inv.Candidate.HeadSHA)),
			Hint: "the invocation must name the candidate's exact committed head"}
	}
	if _, err := candidateOf(ctx, repo, inv.Candidate.Branch, head, inv.Candidate.ComparisonBase); err != nil {
		return nil, err
	}
	if r.Card != nil {
		for _, v := range inv.Validation {
			if _, ok := r.Card.command(v); !ok {
				return nil, &InputError{Msg: fmt.Sprintf("with --card, validation %q must be the card's pass command or invariant", v.Name)}
			}
		}
	}
	for _, v := range inv.Validation {
		if _, ok := r.Card.command(v); ok {
			continue
		}
		if _, err := SplitWords(v.Command); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// newID makes an invocation id from the branch and head plus randomness.
func newID(branch, head string) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	clean := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(branch, "-")
	clean = strings.Trim(strings.ReplaceAll(clean, "..", "-"), ".-")
	if len(clean) > 40 {
		clean = clean[:40]
	}
	if clean == "" {
		clean = "loop"
	}
	return fmt.Sprintf("%s-%s-%s", clean, head[:8], hex.EncodeToString(b[:])), nil
}

// isSHA1 says s is a full SHA-1 object name in lowercase hex.
func isSHA1(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

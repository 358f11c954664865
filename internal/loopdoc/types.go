package loopdoc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Go types of the three loop documents, for the loop engine to build and
// write. Field tags follow the schemas exactly: optional fields carry
// omitempty (pointers where zero is a legal value), optional lists carry
// omitzero (nil is omitted, an empty list is written as []), required
// lists carry neither and Marshal writes a nil one as []. Validation works on the decoded
// generic value, not on these types, so a document is judged the same way
// whether it came from Go or from the peer.

// SchemaVersion is the schema_version of all three documents.
const SchemaVersion = "1.0"

// Repository identifies the repository and keys its locks.
type Repository struct {
	Identity           string `json:"identity"`
	GitCommonDirectory string `json:"git_common_directory"`
}

// BaseRef is a comparison base: a ref name and the SHA it resolved to.
type BaseRef struct {
	Ref string `json:"ref"`
	SHA string `json:"sha"`
}

// Worktree lists the paths of a worktree by state.
type Worktree struct {
	Tracked   []string `json:"tracked"`
	Staged    []string `json:"staged"`
	Unstaged  []string `json:"unstaged"`
	Untracked []string `json:"untracked"`
	Ignored   []string `json:"ignored"`
}

// PullRequestID is the optional identity of a pull request.
type PullRequestID struct {
	Repository string `json:"repository"`
	Number     int    `json:"number"`
}

// Diff is the candidate's complete base...HEAD diff.
type Diff struct {
	Format   string `json:"format"` // always "unified_diff"
	Complete bool   `json:"complete"`
	Content  string `json:"content"`
}

// SourceBinding is a read-only pushable source: comparison authority only.
type SourceBinding struct {
	Repository       string `json:"repository"`
	RemoteURL        string `json:"remote_url"`
	Ref              string `json:"ref"`
	ObservedObjectID string `json:"observed_object_id"`
}

// Candidate is the committed candidate an invocation takes over.
type Candidate struct {
	Branch                  string         `json:"branch"`
	HeadSHA                 string         `json:"head_sha"`
	ComparisonBase          BaseRef        `json:"comparison_base"`
	Diff                    Diff           `json:"diff"`
	Worktree                Worktree       `json:"worktree"`
	AllChangesCommitted     bool           `json:"all_changes_committed"`
	PullRequest             *PullRequestID `json:"pull_request,omitempty"`
	SourceBinding           *SourceBinding `json:"source_binding,omitempty"`
	SourceUnavailableReason string         `json:"source_unavailable_reason,omitempty"`
}

// SourceRef is one entry of the change contract's sources.
type SourceRef struct {
	Label    string  `json:"label"`
	Location string  `json:"location"`
	Summary  *string `json:"summary,omitempty"` // may be "", which must survive a round trip
}

// Sources are the documents a change contract rests on.
type Sources struct {
	RepositoryInstructions []SourceRef `json:"repository_instructions"`
	NamedDocuments         []SourceRef `json:"named_documents"`
	NearbyPatterns         []SourceRef `json:"nearby_patterns"`
}

// ChangeContract bounds what fixes may do.
type ChangeContract struct {
	Goal                    string   `json:"goal"`
	AcceptanceCriteria      []string `json:"acceptance_criteria"`
	NonGoals                []string `json:"non_goals"`
	PreservedBehaviors      []string `json:"preserved_behaviors"`
	Sources                 Sources  `json:"sources"`
	AllowedRemediationScope string   `json:"allowed_remediation_scope"`
}

// ReviewExecution is how reviewers are run.
type ReviewExecution struct {
	Mode                  string `json:"mode"` // fresh_subagent | in_agent_override
	OverrideAuthorization string `json:"override_authorization,omitempty"`
}

// FixCycleBudget is the invocation's cycle budget, 1 to 10.
type FixCycleBudget struct {
	MaxFixCycles int `json:"max_fix_cycles"`
}

// ValidationCommand is one trusted validation command.
type ValidationCommand struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Scope   string `json:"scope"` // focused | full
}

// PushTarget is where update_pr publishes.
type PushTarget struct {
	HeadRepository     string `json:"head_repository"`
	HeadRef            string `json:"head_ref"`
	ExpectedOldHeadSHA string `json:"expected_old_head_sha"`
	BaseRef            string `json:"base_ref"`
	BaseSHA            string `json:"base_sha"`
}

// RemoteIterationGrant allows one origin-only mechanism an intermediate push.
type RemoteIterationGrant struct {
	MechanismID        string `json:"mechanism_id"`
	Kind               string `json:"kind"`
	Repository         string `json:"repository"`
	Ref                string `json:"ref"`
	OriginOnlyEvidence string `json:"origin_only_evidence"`
}

// InvocationPublication is the invocation's publication policy.
type InvocationPublication struct {
	Policy                string                 `json:"policy"` // local_commit | update_pr
	PullRequest           *PushTarget            `json:"pull_request,omitempty"`
	RemoteIterationGrants []RemoteIterationGrant `json:"remote_iteration_grants,omitzero"`
}

// Invocation is what a caller asks the loop to do.
type Invocation struct {
	SchemaVersion   string                `json:"schema_version"`
	InvocationID    string                `json:"invocation_id"`
	Repository      Repository            `json:"repository"`
	Candidate       Candidate             `json:"candidate"`
	ChangeContract  ChangeContract        `json:"change_contract"`
	ReviewExecution ReviewExecution       `json:"review_execution"`
	FixCycleBudget  FixCycleBudget        `json:"fix_cycle_budget"`
	Validation      []ValidationCommand   `json:"validation"`
	Publication     InvocationPublication `json:"publication"`
}

// FindingDisposition is a review record's decision on one finding.
type FindingDisposition struct {
	FindingID   string `json:"finding_id"`
	Disposition string `json:"disposition"` // accepted | rejected | deferred
	Rationale   string `json:"rationale"`
}

// ReviewRecord is one review pass, shared by checkpoint and terminal result.
type ReviewRecord struct {
	Sequence            int                  `json:"sequence"`
	HeadSHA             string               `json:"head_sha"`
	ComparisonBaseSHA   string               `json:"comparison_base_sha"`
	ReviewIndependence  string               `json:"review_independence"` // fresh_subagent | in_agent_override
	ReviewerIdentity    string               `json:"reviewer_identity"`
	WriteIsolation      string               `json:"write_isolation"`   // enforced | violated
	AggregateVerdict    string               `json:"aggregate_verdict"` // clean | changes_required | blocked
	FindingDispositions []FindingDisposition `json:"finding_dispositions"`
	MutationAttempts    []string             `json:"mutation_attempts"`
	ObservedRefChanges  []string             `json:"observed_ref_changes,omitzero"`
	IntegrityEvidence   string               `json:"integrity_evidence,omitempty"` // tool_trace | surface_only
}

// ValidationOutcome is one validation run's result.
type ValidationOutcome struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Scope   string `json:"scope"`  // focused | full
	Status  string `json:"status"` // passed | failed | unavailable
	Result  string `json:"result,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// PreservedAttempt is a failed or interrupted attempt kept for the operator.
type PreservedAttempt struct {
	AttemptRef string `json:"attempt_ref"`
	Reason     string `json:"reason"`
}

// CycleAttempt is one reserved fix cycle.
type CycleAttempt struct {
	Sequence        int    `json:"sequence"`
	StartedFromHead string `json:"started_from_head"`
	Outcome         string `json:"outcome"` // committed | failed | interrupted
	ResultingHead   string `json:"resulting_head,omitempty"`
	FindingID       string `json:"finding_id,omitempty"`
}

// CheckpointPushTarget is the checkpoint's push mechanics: no SHAs.
type CheckpointPushTarget struct {
	HeadRepository string `json:"head_repository"`
	HeadRef        string `json:"head_ref"`
	BaseRef        string `json:"base_ref"`
}

// CheckpointPublication is the checkpoint's publication policy.
type CheckpointPublication struct {
	Policy      string                `json:"policy"`
	PullRequest *CheckpointPushTarget `json:"pull_request,omitempty"`
}

// CheckpointSource is the last verified source state.
type CheckpointSource struct {
	Status            string `json:"status"` // bound | unavailable
	LastVerifiedHead  string `json:"last_verified_head,omitempty"`
	AheadBy           *int   `json:"ahead_by,omitempty"`
	BehindBy          *int   `json:"behind_by,omitempty"`
	UnavailableReason string `json:"unavailable_reason,omitempty"`
}

// Checkpoint is the loop's durable, resumable state. It stores no consumed
// or remaining counts: those are derived from CycleAttempts.
type Checkpoint struct {
	SchemaVersion           string                `json:"schema_version"`
	InvocationID            string                `json:"invocation_id"`
	Repository              Repository            `json:"repository"`
	Branch                  string                `json:"branch"`
	Worktree                Worktree              `json:"worktree"`
	InitialHead             string                `json:"initial_head"`
	CurrentHead             string                `json:"current_head"`
	ComparisonBase          BaseRef               `json:"comparison_base"`
	PullRequest             *PullRequestID        `json:"pull_request,omitempty"`
	Publication             CheckpointPublication `json:"publication"`
	OriginalCycleBudget     int                   `json:"original_cycle_budget"`
	CycleAttempts           []CycleAttempt        `json:"cycle_attempts"`
	HeadHistory             []string              `json:"head_history"`
	BaseRevisionHistory     []BaseRef             `json:"base_revision_history"`
	ReviewRecords           []ReviewRecord        `json:"review_records"`
	ValidationOutcomes      []ValidationOutcome   `json:"validation_outcomes"`
	PreservedFailedAttempts []PreservedAttempt    `json:"preserved_failed_attempts"`
	Source                  CheckpointSource      `json:"source"`
	CurrentPhase            string                `json:"current_phase"`
	ExpectedNextAction      string                `json:"expected_next_action"`
}

// Budget is the terminal result's cycle accounting.
type Budget struct {
	OriginalMaxFixCycles int `json:"original_max_fix_cycles"`
	ConsumedCycles       int `json:"consumed_cycles"`
	RemainingCycles      int `json:"remaining_cycles"`
}

// HeadPair is the first and final head.
type HeadPair struct {
	Initial string `json:"initial"`
	Final   string `json:"final"`
}

// BasePair is the first and final comparison base.
type BasePair struct {
	Initial BaseRef `json:"initial"`
	Final   BaseRef `json:"final"`
}

// ResultDisposition is the terminal result's decision on one finding.
type ResultDisposition struct {
	FindingID    string `json:"finding_id"`
	Disposition  string `json:"disposition"` // selected | declined
	Rationale    string `json:"rationale"`
	FixCommitSHA string `json:"fix_commit_sha,omitempty"`
}

// ResultSource is the source state at the start and end.
type ResultSource struct {
	Status            string `json:"status"`
	InitialHead       string `json:"initial_head,omitempty"`
	FinalHead         string `json:"final_head,omitempty"`
	AheadBy           *int   `json:"ahead_by,omitempty"`
	BehindBy          *int   `json:"behind_by,omitempty"`
	UnavailableReason string `json:"unavailable_reason,omitempty"`
}

// ResultPublication is what publication did.
type ResultPublication struct {
	Policy               string `json:"policy"`
	Status               string `json:"status"` // not_applicable | withheld | published | failed
	RemoteHeadBefore     string `json:"remote_head_before,omitempty"`
	RemoteHeadAfter      string `json:"remote_head_after,omitempty"`
	NonConvergedExposure bool   `json:"non_converged_exposure"`
}

// TerminalResult is the one result an invocation returns.
type TerminalResult struct {
	SchemaVersion                    string              `json:"schema_version"`
	InvocationID                     string              `json:"invocation_id"`
	TerminalState                    string              `json:"terminal_state"` // converged | changes_remaining | blocked
	Reason                           string              `json:"reason,omitempty"`
	Budget                           Budget              `json:"budget"`
	ResumeStatus                     string              `json:"resume_status"`
	Repository                       Repository          `json:"repository"`
	Branch                           string              `json:"branch"`
	Worktree                         Worktree            `json:"worktree"`
	PullRequest                      *PullRequestID      `json:"pull_request,omitempty"`
	Head                             HeadPair            `json:"head"`
	ComparisonBase                   BasePair            `json:"comparison_base"`
	HeadHistory                      []string            `json:"head_history"`
	BaseRevisionHistory              []BaseRef           `json:"base_revision_history"`
	ReviewRecords                    []ReviewRecord      `json:"review_records"`
	ValidationSummary                []ValidationOutcome `json:"validation_summary"`
	FindingDispositions              []ResultDisposition `json:"finding_dispositions"`
	CreatedCommits                   []string            `json:"created_commits"`
	PreservedFailedAttempts          []PreservedAttempt  `json:"preserved_failed_attempts"`
	Source                           ResultSource        `json:"source"`
	UnpushedCommits                  []string            `json:"unpushed_commits"`
	Publication                      ResultPublication   `json:"publication"`
	AcceptanceReconciliationRequired bool                `json:"acceptance_reconciliation_required"`
	UnresolvedOrDeferredFindings     []string            `json:"unresolved_or_deferred_findings"`
	OperatorAction                   string              `json:"operator_action"`
}

// Marshal writes v (one of the document types, or any value encoding/json
// accepts) in canonical form. Required lists left nil are written as [].
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(withEmptyLists(reflect.ValueOf(v)).Interface())
	if err != nil {
		return nil, fmt.Errorf("loopdoc: marshal: %w", err)
	}
	return Canonical(raw)
}

// withEmptyLists returns a copy of v in which every nil slice of a struct
// field without omitempty or omitzero is an empty slice, because a required list
// encodes as null otherwise and no schema allows null.
func withEmptyLists(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Elem().Type())
		p.Elem().Set(withEmptyLists(v.Elem()))
		return p
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			fv := withEmptyLists(v.Field(i))
			if fv.Kind() == reflect.Slice && fv.IsNil() && !strings.Contains(f.Tag.Get("json"), ",omit") {
				fv = reflect.MakeSlice(fv.Type(), 0, 0)
			}
			c.Field(i).Set(fv)
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			c.Index(i).Set(withEmptyLists(v.Index(i)))
		}
		return c
	}
	return v
}

// ParseInvocation decodes and validates an invocation into its Go type.
// Violations are returned as a *ValidationError.
func ParseInvocation(data []byte) (*Invocation, error) {
	var v Invocation
	if err := parseInto(KindInvocation, data, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ParseCheckpoint decodes and validates a checkpoint into its Go type.
func ParseCheckpoint(data []byte) (*Checkpoint, error) {
	var v Checkpoint
	if err := parseInto(KindCheckpoint, data, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ParseTerminalResult decodes and validates a terminal result.
func ParseTerminalResult(data []byte) (*TerminalResult, error) {
	var v TerminalResult
	if err := parseInto(KindTerminalResult, data, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ValidationError is a document that decoded but broke rules.
type ValidationError struct {
	Kind       Kind
	Violations []Violation
}

func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		lines[i] = v.String()
	}
	return fmt.Sprintf("invalid %s: %s", e.Kind, strings.Join(lines, "; "))
}

func parseInto(kind Kind, data []byte, v any) error {
	vs, err := Validate(kind, data)
	if err != nil {
		return err
	}
	if len(vs) > 0 {
		return &ValidationError{Kind: kind, Violations: vs}
	}
	// The document passed the strict decoder and the schema (no unknown
	// fields, no duplicates, integers are integers), so encoding/json reads
	// it into the struct without loss.
	return json.Unmarshal(data, v)
}

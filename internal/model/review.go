package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Schema versions of the peer's review-suite documents.
const (
	PacketSchemaVersion = "1.0"
	ResultSchemaVersion = "1.4"
)

// findingLenses are the lenses a finding, a lens execution or --lenses
// names; a review result may also be "aggregate", the whole suite's.
var findingLenses = []string{"correctness", "solution_simplicity", "code_simplicity"}

// Verdicts of a review result.
const (
	VerdictClean           = "clean"
	VerdictChangesRequired = "changes_required"
	VerdictBlocked         = "blocked"
)

// ReviewPacket is what a reviewer reads: the peer's review-packet 1.0.
type ReviewPacket struct {
	SchemaVersion  string          `json:"schema_version"`
	Repository     PacketRepo      `json:"repository"`
	Candidate      PacketCandidate `json:"candidate"`
	ChangeContract ChangeContract  `json:"change_contract"`
	Sources        Sources         `json:"sources"`
	Validation     []Validation    `json:"validation"`
	Context        *PacketContext  `json:"context,omitempty"`
	Worktree       *WorktreeState  `json:"worktree,omitempty"`
	BaseDrift      *BaseDrift      `json:"base_drift,omitempty"`
}

// PacketRepo names the repository under review.
type PacketRepo struct {
	Identity   string `json:"identity"`
	BaseBranch string `json:"base_branch"`
}

// PacketCandidate binds a packet to one head and base.
type PacketCandidate struct {
	HeadSHA           string     `json:"head_sha"`
	ComparisonBaseSHA string     `json:"comparison_base_sha"`
	Diff              PacketDiff `json:"diff"`
}

// PacketDiff is the complete base...head diff, inline (Content) or in a
// file the reviewer can read (Path); exactly one is set.
type PacketDiff struct {
	Format   string `json:"format"` // "unified_diff"
	Complete bool   `json:"complete"`
	Content  string `json:"content,omitempty"`
	Path     string `json:"path,omitempty"`
}

// ChangeContract is what the change is for and what it must not touch.
type ChangeContract struct {
	Goal               string   `json:"goal"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	NonGoals           []string `json:"non_goals"`
	PreservedBehaviors []string `json:"preserved_behaviors"`
}

// Sources are documents the reviewer should read.
type Sources struct {
	RepositoryInstructions []Source `json:"repository_instructions"`
	NamedDocuments         []Source `json:"named_documents"`
	NearbyPatterns         []Source `json:"nearby_patterns"`
}

// Source is one document reference.
type Source struct {
	Label    string `json:"label"`
	Location string `json:"location"`
	Summary  string `json:"summary,omitempty"`
}

// Validation is one validation command and its status at the head.
type Validation struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Scope   string `json:"scope"`  // "focused" | "full"
	Status  string `json:"status"` // "passed" | "failed" | "unavailable"
	Result  string `json:"result,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// PacketContext is optional context the caller knows about.
type PacketContext struct {
	PublicAPI     []string `json:"public_api,omitempty"`
	Data          []string `json:"data,omitempty"`
	Authorization []string `json:"authorization,omitempty"`
	Compatibility []string `json:"compatibility,omitempty"`
	Operational   []string `json:"operational,omitempty"`
}

// WorktreeState lists the worktree's paths by state.
type WorktreeState struct {
	Tracked   []string `json:"tracked"`
	Staged    []string `json:"staged"`
	Unstaged  []string `json:"unstaged"`
	Untracked []string `json:"untracked"`
	Ignored   []string `json:"ignored"`
}

// BaseDrift records how the base moved since evidence was captured.
type BaseDrift struct {
	CapturedBaseSHA         string `json:"captured_base_sha"`
	CurrentBaseSHA          string `json:"current_base_sha"`
	EffectiveDiffChanged    bool   `json:"effective_diff_changed"`
	ResultingTreeChanged    bool   `json:"resulting_tree_changed"`
	Conflict                bool   `json:"conflict"`
	RelevantOverlap         bool   `json:"relevant_overlap"`
	RepositoryRequiresReset bool   `json:"repository_requires_reset"`
	Decision                string `json:"decision"`
	Reason                  string `json:"reason"`
}

// ValidationFailed says whether any validation in the packet failed; a
// reviewer may then not say clean.
func (p *ReviewPacket) ValidationFailed() bool {
	for _, v := range p.Validation {
		if v.Status == "failed" {
			return true
		}
	}
	return false
}

// Marshal returns the packet's JSON after checking it against the schema:
// failpass never hands a reviewer a packet the peer would reject.
func (p *ReviewPacket) Marshal() ([]byte, error) {
	q := *p
	// Required arrays are [] on the wire, never null.
	q.ChangeContract.NonGoals = orEmpty(q.ChangeContract.NonGoals)
	q.ChangeContract.PreservedBehaviors = orEmpty(q.ChangeContract.PreservedBehaviors)
	q.Sources.RepositoryInstructions = orEmptySources(q.Sources.RepositoryInstructions)
	q.Sources.NamedDocuments = orEmptySources(q.Sources.NamedDocuments)
	q.Sources.NearbyPatterns = orEmptySources(q.Sources.NearbyPatterns)
	if q.Worktree != nil {
		w := *q.Worktree
		w.Tracked, w.Staged, w.Unstaged = orEmpty(w.Tracked), orEmpty(w.Staged), orEmpty(w.Unstaged)
		w.Untracked, w.Ignored = orEmpty(w.Untracked), orEmpty(w.Ignored)
		q.Worktree = &w
	}
	data, err := marshalJSON(&q)
	if err != nil {
		return nil, err
	}
	if _, err := ParsePacket(data); err != nil {
		return nil, err
	}
	return data, nil
}

// ParsePacket decodes and validates a review packet.
func ParsePacket(data []byte) (*ReviewPacket, error) {
	if err := validateSchema("review packet", packetSchema(), data); err != nil {
		return nil, err
	}
	var p ReviewPacket
	if err := decodeInto(data, &p); err != nil {
		return nil, &SchemaError{Doc: "review packet", Problems: []Problem{{Path: "$", Msg: err.Error()}}}
	}
	return &p, nil
}

// ReviewResult is what a reviewer writes: the peer's review-result 1.4.
type ReviewResult struct {
	SchemaVersion          string                `json:"schema_version"`
	Lens                   string                `json:"lens"`
	Candidate              ResultCandidate       `json:"candidate"`
	Verdict                string                `json:"verdict"`
	Findings               []Finding             `json:"findings"`
	BlockingReasons        []string              `json:"blocking_reasons"`
	LensExecutions         []LensExecution       `json:"lens_executions,omitempty"`
	ValidationLimitations  []string              `json:"validation_limitations,omitempty"`
	ConsumerImpactEvidence []ConsumerImpact      `json:"consumer_impact_evidence,omitempty"`
	ProposalDispositions   []ProposalDisposition `json:"proposal_dispositions,omitempty"`
	NextAction             string                `json:"next_action,omitempty"`
}

// ResultCandidate is the head and base a result is bound to.
type ResultCandidate struct {
	HeadSHA           string `json:"head_sha,omitempty"`
	ComparisonBaseSHA string `json:"comparison_base_sha,omitempty"`
}

// Finding is one reviewer finding, as the reviewer wrote it.
type Finding struct {
	ID                string     `json:"id"`
	Lens              string     `json:"lens"`
	Severity          string     `json:"severity"`   // blocking | strong_recommendation | defer
	Confidence        string     `json:"confidence"` // high | medium | low
	Rule              string     `json:"rule"`
	Evidence          []Evidence `json:"evidence"`
	Concern           string     `json:"concern"`
	Impact            string     `json:"impact"`
	ProposedChange    string     `json:"proposed_change"`
	ExpectedEffect    string     `json:"expected_effect"`
	Location          string     `json:"location,omitempty"`
	RelatedFindingIDs []string   `json:"related_finding_ids,omitempty"`
}

// Evidence is a location and what is there.
type Evidence struct {
	Location string `json:"location"`
	Detail   string `json:"detail"`
}

// LensExecution records that a lens ran, on which head, with what verdict.
type LensExecution struct {
	Lens              string `json:"lens"`
	HeadSHA           string `json:"head_sha"`
	ComparisonBaseSHA string `json:"comparison_base_sha"`
	Verdict           string `json:"verdict"`
	FreshlyExecuted   bool   `json:"freshly_executed"`
}

// ConsumerImpact is evidence about the consumers of a changed symbol.
type ConsumerImpact struct {
	ChangedSymbol          string     `json:"changed_symbol"`
	Location               string     `json:"location"`
	ConsumerSearchEvidence []Evidence `json:"consumer_search_evidence"`
	Disposition            string     `json:"disposition"`
}

// ProposalDisposition is the correctness lens's view of a simplicity proposal.
type ProposalDisposition struct {
	FindingID   string     `json:"finding_id"`
	SourceLens  string     `json:"source_lens"`
	Disposition string     `json:"disposition"`
	Reason      string     `json:"reason"`
	Evidence    []Evidence `json:"evidence"`
}

// Blocking returns the findings of severity "blocking".
func (r *ReviewResult) Blocking() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == "blocking" {
			out = append(out, f)
		}
	}
	return out
}

// Binding is what a review result must agree with: the exact head and base
// the packet named, whether its validation failed, and (with --lenses) the
// lenses that must each have a fresh execution on that head.
type Binding struct {
	HeadSHA           string
	ComparisonBaseSHA string
	ValidationFailed  bool
	Lenses            []string
}

// BindingOf is the binding a packet imposes.
func BindingOf(p *ReviewPacket, lenses []string) Binding {
	return Binding{HeadSHA: p.Candidate.HeadSHA, ComparisonBaseSHA: p.Candidate.ComparisonBaseSHA,
		ValidationFailed: p.ValidationFailed(), Lenses: lenses}
}

// ValidateResult parses a review result and refuses it, with the reason,
// when it fails its schema, is bound to another head or base, contradicts
// itself (clean with blocking findings or reasons, clean over failed
// validation, clean while a lens execution was not), or lacks a fresh
// current-head execution of a required lens. Nothing of a refused result is
// returned.
func ValidateResult(data []byte, b Binding) (*ReviewResult, error) {
	if err := validateSchema("review result", resultSchema(), data); err != nil {
		se := err.(*SchemaError)
		return nil, &RefusedError{Role: RoleReviewer, Reason: "the review result does not match its schema", Details: se.details()}
	}
	var r ReviewResult
	if err := decodeInto(data, &r); err != nil {
		return nil, refuse(RoleReviewer, "the review result cannot be decoded: %v", err)
	}
	if reason := resultRule(&r, b); reason != "" {
		return nil, &RefusedError{Role: RoleReviewer, Reason: reason}
	}
	return &r, nil
}

// resultRule is the pure cross-field policy; "" means acceptable.
func resultRule(r *ReviewResult, b Binding) string {
	// Binding. The schema leaves candidate's fields optional; a result that
	// omits them is not bound to anything and cannot certify this head.
	if r.Candidate.HeadSHA != b.HeadSHA {
		if r.Candidate.HeadSHA == "" {
			return "the result does not name the head it reviewed (candidate.head_sha)"
		}
		return fmt.Sprintf("the result is bound to head %s, not %s", r.Candidate.HeadSHA, b.HeadSHA)
	}
	if r.Candidate.ComparisonBaseSHA != b.ComparisonBaseSHA {
		if r.Candidate.ComparisonBaseSHA == "" {
			return "the result does not name the base it compared against (candidate.comparison_base_sha)"
		}
		return fmt.Sprintf("the result is bound to base %s, not %s", r.Candidate.ComparisonBaseSHA, b.ComparisonBaseSHA)
	}
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if seen[f.ID] {
			return fmt.Sprintf("finding id %q appears twice", f.ID)
		}
		seen[f.ID] = true
		if r.Lens != "aggregate" && f.Lens != r.Lens {
			return fmt.Sprintf("finding %q is from lens %s in a %s result", f.ID, f.Lens, r.Lens)
		}
	}
	for i, e := range r.LensExecutions {
		if e.HeadSHA != b.HeadSHA || e.ComparisonBaseSHA != b.ComparisonBaseSHA {
			return fmt.Sprintf("lens_executions[%d] (%s) is bound to another head or base", i, e.Lens)
		}
	}
	blocking := len(r.Blocking())
	switch r.Verdict {
	case VerdictClean:
		if blocking > 0 {
			return fmt.Sprintf("the verdict is clean but %d finding(s) are blocking", blocking)
		}
		if len(r.BlockingReasons) > 0 {
			return "the verdict is clean but blocking_reasons is not empty"
		}
		if b.ValidationFailed {
			return "the verdict is clean but the packet's validation failed"
		}
		for _, e := range r.LensExecutions {
			if e.Verdict != VerdictClean {
				return fmt.Sprintf("the verdict is clean but lens %s says %s", e.Lens, e.Verdict)
			}
		}
	case VerdictChangesRequired:
		if len(r.Findings) == 0 && len(r.BlockingReasons) == 0 {
			return "the verdict is changes_required but there are no findings and no blocking reasons"
		}
	case VerdictBlocked:
		if len(r.BlockingReasons) == 0 {
			return "the verdict is blocked but blocking_reasons is empty"
		}
	}
	for _, lens := range b.Lenses {
		fresh := false
		for _, e := range r.LensExecutions {
			if e.Lens == lens && e.FreshlyExecuted {
				fresh = true
			}
		}
		if !fresh {
			return fmt.Sprintf("lens %s has no fresh execution on head %s", lens, b.HeadSHA)
		}
	}
	return ""
}

// ParseLenses reads a --lenses list (a,b,c) of finding lenses.
func ParseLenses(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, l := range strings.Split(s, ",") {
		l = strings.TrimSpace(l)
		if !slices.Contains(findingLenses, l) {
			return nil, fmt.Errorf("unknown lens %q (want %s)", l, strings.Join(findingLenses, ", "))
		}
		if slices.Contains(out, l) {
			return nil, fmt.Errorf("lens %q listed twice", l)
		}
		out = append(out, l)
	}
	return out, nil
}

// decodeInto decodes already schema-checked JSON into v, refusing unknown
// fields as a second line of defence.
func decodeInto(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// marshalJSON encodes v without HTML escaping (diffs hold < and >).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptySources(s []Source) []Source {
	if s == nil {
		return []Source{}
	}
	return s
}

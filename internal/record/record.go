// Package record owns signed gate records: the in-toto statement a gate run leaves, its canonical bytes and signature, and the checks that verify one without running anything.
package record

// Design note. A record is an in-toto Statement v1 whose one subject is the
// git tree the candidate diff makes from the card's base, and whose
// predicate (type PredicateType) carries everything a reviewer needs to
// judge the run without rerunning it: the base, the card's digest and
// signers, the diff's digest and numstat, every command's argv, exit,
// duration and timeout flag, the sandbox layers, the verdict and the tool.
// The file holds the RFC 8785 (JCS) bytes of the statement and nothing
// else, so the bytes signed are the bytes on disk: a record that is not in
// canonical form was not written by failpass and is refused. The detached
// signature (FILE.sig) is an armored SSHSIG in sign.NamespaceRecord, which
// never verifies as a card signature, nor a card's as a record's.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"io"

	"github.com/gowebpki/jcs"
)

// Pinned names of the statement.
const (
	// StatementType is in-toto's Statement v1 type.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType names failpass's gate-record predicate, version 1.
	PredicateType = "https://failpass.dev/gate-record/v1"
	// SubjectTree names the subject when it is a git tree; its digest
	// algorithm is in-toto's "gitTree".
	SubjectTree = "git-tree"
	// SubjectDiff names the subject when no base tree is known (the card's
	// base is not a commit here): the diff itself, by "sha256".
	SubjectDiff = "diff"
)

// MaxSize bounds a record file. A record lists a few steps of a few runs
// and one numstat line per changed file; a megabyte is far beyond any
// honest record and refused as trouble before it is parsed.
const MaxSize = 1 << 20

// Statement is an in-toto Statement v1 carrying a gate record. Every field
// is always present in its JSON form except where noted, so decoding then
// encoding a record reproduces its bytes exactly.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

// Subject is one artifact the statement is about.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Predicate is the gate record proper.
type Predicate struct {
	// Tool is version.String() of the failpass that ran the gate.
	Tool string `json:"tool"`
	// FinishedAt is when the record was made, RFC 3339 in UTC.
	FinishedAt string `json:"finished_at"`
	// Base is the commit the card pins, "" when it is not a commit here.
	Base string  `json:"base"`
	Card CardRef `json:"card"`
	Diff DiffRef `json:"diff"`
	// Verdict is "pass" or "fail"; Rule the first broken rule (nil on
	// pass); Reason the gate's words for it.
	Verdict string  `json:"verdict"`
	Rule    *string `json:"rule"`
	Reason  string  `json:"reason"`
	Sandbox Sandbox `json:"sandbox"`
	// Cached says the command results came from failpass's result cache
	// (a run of the same tool, base, card, diff, sandbox and environment);
	// BaseCached says that of the base side alone. The runs recorded are
	// those of the run that filled the cache.
	Cached     bool `json:"cached"`
	BaseCached bool `json:"base_cached"`
	// HeldOut is the verdict's held_out: "ran", "skipped" (--skip-held-out)
	// or "not_given"; absent when the card has no held-out tests or the
	// gate stopped before patch.held_out.
	HeldOut string `json:"held_out,omitempty"`
	// RunOrder lists the patched rules whose commands ran, in the order
	// they ran (the canary's place is drawn at random); absent in records
	// made before it existed, whose runs ran in canonical order.
	RunOrder []string `json:"run_order,omitempty"`
	// Steps are the gate's rules in gate order, including those not run.
	Steps []Step `json:"steps"`
}

// CardRef identifies the card the gate ran.
type CardRef struct {
	ID string `json:"id"`
	// Digest is "sha256:<hex>" of the card's canonical signed bytes.
	Digest string `json:"digest"`
	// Signers are the principals whose signatures the gate verified.
	Signers []string `json:"signers"`
	// Unsigned is set when the gate ran the card under --allow-unsigned.
	Unsigned bool `json:"unsigned"`
}

// DiffRef identifies the candidate diff.
type DiffRef struct {
	// Name is the diff's path as given to the gate ("-" for stdin).
	Name string `json:"name"`
	// Digest is "sha256:<hex>" of the diff bytes as given.
	Digest string `json:"digest"`
	// Applied says whether git applied the diff to the base tree; when it
	// did not, the subject is the base tree itself.
	Applied bool `json:"applied"`
	// Files is the per-file numstat of git's reading of the diff; empty
	// when git's parser refused the diff.
	Files []FileStat `json:"files"`
}

// FileStat is one file of a numstat: its path (the new side; the old side
// for deletions), the old path when it differs, and the lines added and
// deleted (zero for binary changes, which are marked).
type FileStat struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary"`
}

// Sandbox is the containment the run used: the layers of the verdict's
// sandbox object that were applied and missing, and whether the sandbox
// was turned off by choice (--sandbox=off).
type Sandbox struct {
	Applied []string `json:"applied"`
	Missing []string `json:"missing"`
	Off     bool     `json:"off"`
	// Cache is how the candidate's runs saw the card's build cache:
	// "overlay" (read-only, a private upper layer) or "private-cold".
	Cache string `json:"cache"`
}

// Step is one gate rule as recorded. Expected and Runs are set for the
// rules that run card commands.
type Step struct {
	Rule     string `json:"rule"`
	Status   string `json:"status"`
	Expected *int   `json:"expected"`
	Runs     []Run  `json:"runs"`
	// Reason says why a rule that held was not run (patch.canary: the
	// card turned it off, or its runner is not recognized).
	Reason string `json:"reason,omitempty"`
	// Detail is patch.canary's cause when its runner or selection was
	// not recognized.
	Detail string `json:"detail,omitempty"`
	// Mutation is a patch.canary's verdict.Step.Mutation: whether it ran
	// the oracle's mutation, or why not. Records of earlier failpass
	// have none.
	Mutation string `json:"mutation,omitempty"`
}

// Run is one run of a card command.
type Run struct {
	Argv       []string `json:"argv"`
	Exit       int      `json:"exit"`
	Signal     string   `json:"signal"`
	TimedOut   bool     `json:"timed_out"`
	DurationMS int64    `json:"duration_ms"`
	// Environment is the cause when the run failed for its environment
	// rather than at a test (a package that did not build, a test module
	// that did not import).
	Environment string `json:"environment,omitempty"`
}

// Conclusive says whether the run proves anything: it did not time out,
// die by a signal or fail to start, did not exit 125, 126 or 127, and did
// not fail for its environment.
func (r Run) Conclusive() bool {
	return !r.TimedOut && r.Signal == "" && r.Exit >= 0 && r.Exit != 125 && r.Exit != 126 && r.Exit != 127 && r.Environment == ""
}

// Tree is the subject's git tree id, or "" when the subject is not a tree.
func (s *Statement) Tree() string {
	if len(s.Subject) != 1 || s.Subject[0].Name != SubjectTree {
		return ""
	}
	return s.Subject[0].Digest["gitTree"]
}

// Canonical returns the statement's signed bytes: RFC 8785 JSON.
func (s *Statement) Canonical() ([]byte, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("canonical record: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonical record: %w", err)
	}
	return out, nil
}

// Digest is "sha256:<hex>" of a record's bytes, as a merge note cites it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Parse decodes a record's bytes strictly. The bytes must be one JSON
// object in canonical form (RFC 8785), with exactly the fields a Statement
// has, each of the right type, and must encode back to themselves; the
// statement and predicate types must be failpass's and the subject one
// git tree or diff. Errors are *Error with Problem Malformed or
// NotCanonical; on error no statement is returned.
func Parse(data []byte) (*Statement, error) {
	if len(data) > MaxSize {
		return nil, errorf(ProblemMalformed, "", "the record is %d bytes, over the %d-byte limit", len(data), MaxSize)
	}
	if !json.Valid(data) {
		return nil, errorf(ProblemMalformed, "", "not JSON")
	}
	canon, err := jcs.Transform(data)
	if err != nil {
		return nil, errorf(ProblemMalformed, "", "%v", err)
	}
	if !bytes.Equal(canon, data) {
		return nil, notCanonical(data, canon)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Statement
	if err := dec.Decode(&s); err != nil {
		return nil, errorf(ProblemMalformed, "", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf(ProblemMalformed, "", "data after the statement")
	}
	again, err := s.Canonical()
	if err != nil {
		return nil, errorf(ProblemMalformed, "", "%v", err)
	}
	if !bytes.Equal(again, data) {
		// Canonical JSON that Statement does not reproduce: a missing
		// field, a null where a value belongs, a duplicate key.
		return nil, errorf(ProblemMalformed, "", "fields are missing, null or repeated: the record is not one failpass writes")
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// notCanonical says where data first departs from its canonical form.
func notCanonical(data, canon []byte) *Error {
	i := 0
	for i < len(data) && i < len(canon) && data[i] == canon[i] {
		i++
	}
	return &Error{Problem: ProblemNotCanonical, Field: fmt.Sprintf("byte %d", i),
		Msg:  fmt.Sprintf("the bytes differ from their RFC 8785 form at byte %d", i),
		Hint: "a record is written once, canonical, and signed as is; one reformatted or edited by hand is not the record that was signed"}
}

// check validates the statement's envelope: what Parse promises beyond
// JSON shape.
func (s *Statement) check() error {
	if s.Type != StatementType {
		return errorf(ProblemMalformed, "_type", "%q, want %q", s.Type, StatementType)
	}
	if s.PredicateType != PredicateType {
		return errorf(ProblemMalformed, "predicateType", "%q, want %q", s.PredicateType, PredicateType)
	}
	if len(s.Subject) != 1 {
		return errorf(ProblemMalformed, "subject", "%d subjects, want 1", len(s.Subject))
	}
	sub := s.Subject[0]
	switch sub.Name {
	case SubjectTree:
		if len(sub.Digest) != 1 || !isHex(sub.Digest["gitTree"], 40, 64) {
			return errorf(ProblemMalformed, "subject[0].digest", "want one gitTree digest of 40 or 64 hex digits")
		}
		if s.Predicate.Base == "" {
			return errorf(ProblemMalformed, "predicate.base", "a tree subject is made from a base; none is recorded")
		}
	case SubjectDiff:
		if len(sub.Digest) != 1 || !isHex(sub.Digest["sha256"], 64, 64) {
			return errorf(ProblemMalformed, "subject[0].digest", "want one sha256 digest")
		}
		if s.Predicate.Base != "" {
			return errorf(ProblemMalformed, "subject[0].name", "a record with a base names its tree, not the diff")
		}
	default:
		return errorf(ProblemMalformed, "subject[0].name", "%q, want %q or %q", sub.Name, SubjectTree, SubjectDiff)
	}
	p := &s.Predicate
	switch p.Verdict {
	case "pass":
		if p.Rule != nil {
			return errorf(ProblemMalformed, "predicate.rule", "a pass names no broken rule")
		}
	case "fail":
		if p.Rule == nil || *p.Rule == "" {
			return errorf(ProblemMalformed, "predicate.rule", "a fail names the broken rule")
		}
	default:
		return errorf(ProblemMalformed, "predicate.verdict", "%q, want pass or fail", p.Verdict)
	}
	if p.Base != "" && !isHex(p.Base, 40, 64) {
		return errorf(ProblemMalformed, "predicate.base", "%q is not a commit id", p.Base)
	}
	if !isDigest(p.Card.Digest) {
		return errorf(ProblemMalformed, "predicate.card.digest", "%q, want sha256:<64 hex>", p.Card.Digest)
	}
	if !isDigest(p.Diff.Digest) {
		return errorf(ProblemMalformed, "predicate.diff.digest", "%q, want sha256:<64 hex>", p.Diff.Digest)
	}
	if sub.Name == SubjectDiff && "sha256:"+sub.Digest["sha256"] != p.Diff.Digest {
		return errorf(ProblemMalformed, "subject[0].digest", "the subject is not the recorded diff")
	}
	if p.Card.Signers == nil || p.Diff.Files == nil || p.Sandbox.Applied == nil || p.Sandbox.Missing == nil || p.Steps == nil {
		return errorf(ProblemMalformed, "predicate", "a list is null; failpass writes [] for an empty list")
	}
	for i, st := range p.Steps {
		if st.Runs == nil {
			return errorf(ProblemMalformed, fmt.Sprintf("predicate.steps[%d].runs", i), "null; failpass writes [] for a step without runs")
		}
		for j, r := range st.Runs {
			if len(r.Argv) == 0 {
				return errorf(ProblemMalformed, fmt.Sprintf("predicate.steps[%d].runs[%d].argv", i, j), "empty argv")
			}
		}
		// The canary expects no one exit: any conclusive failure holds.
		if len(st.Runs) > 0 && st.Expected == nil && st.Rule != verdict.RulePatchCanary {
			return errorf(ProblemMalformed, fmt.Sprintf("predicate.steps[%d].expected", i), "a step with runs names its expected exit")
		}
	}
	return nil
}

func isDigest(s string) bool {
	return len(s) == len("sha256:")+64 && s[:7] == "sha256:" && isHex(s[7:], 64, 64)
}

func isHex(s string, lengths ...int) bool {
	ok := false
	for _, n := range lengths {
		if len(s) == n {
			ok = true
		}
	}
	if !ok {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

package record

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"slices"
	"time"

	"github.com/failpass/failpass/internal/card"
)

// New builds the record of one gate run: v is the gate's verdict on diff
// for card c, patched the tree the diff makes from the card's base (nil
// when the base is not a commit here: the subject is then the diff
// itself), files the diff's numstat (ReadNumstat), tool the version string
// and at the time the record is made.
func New(v *verdict.Verdict, c *card.Card, diff []byte, patched *Patched, files []FileStat, tool string, at time.Time) (*Statement, error) {
	if v.Verdict != verdict.Pass && v.Verdict != verdict.Fail {
		return nil, fmt.Errorf("record: verdict %q is neither pass nor fail", v.Verdict)
	}
	digest, err := c.Digest()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(diff)
	p := Predicate{
		Tool:       tool,
		FinishedAt: at.UTC().Format(time.RFC3339Nano),
		Card:       CardRef{ID: c.ID, Digest: digest, Signers: nonNil(v.Signers), Unsigned: v.Unsigned},
		Diff: DiffRef{Name: v.Candidate, Digest: "sha256:" + hex.EncodeToString(sum[:]),
			Files: files},
		Verdict:    v.Verdict,
		Reason:     v.Reason,
		Sandbox:    Sandbox{Applied: nonNil(v.Sandbox.Applied), Missing: nonNil(v.Sandbox.Missing), Off: v.Sandbox.Off, Cache: v.Sandbox.Cache},
		Cached:     v.Cached,
		BaseCached: v.BaseCached,
		HeldOut:    v.HeldOut,
		RunOrder:   slices.Clone(v.RunOrder),
		Steps:      []Step{},
	}
	if p.Diff.Files == nil {
		p.Diff.Files = []FileStat{}
	}
	if v.Rule != nil {
		r := *v.Rule
		p.Rule = &r
	}
	for _, s := range v.Steps {
		st := Step{Rule: s.Rule, Status: s.Status, Expected: s.Expected, Runs: []Run{}}
		if s.Status == verdict.StatusNotRun {
			st.Reason, st.Detail = s.Reason, s.Detail
		}
		st.Mutation = s.Mutation
		for _, r := range s.Runs {
			st.Runs = append(st.Runs, Run{Argv: append([]string{}, r.Argv...), Exit: r.Exit, Signal: r.Signal,
				TimedOut: r.TimedOut, DurationMS: r.DurationMS, Environment: r.Environment})
		}
		p.Steps = append(p.Steps, st)
	}
	s := &Statement{Type: StatementType, PredicateType: PredicateType, Predicate: p}
	if patched != nil {
		p := &s.Predicate
		p.Base = patched.Base
		p.Diff.Applied = patched.Applied
		s.Subject = []Subject{{Name: SubjectTree, Digest: map[string]string{"gitTree": patched.Tree}}}
	} else {
		s.Subject = []Subject{{Name: SubjectDiff, Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}}}
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("record: built a record failpass would refuse: %w", err)
	}
	return s, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string{}, s...)
}

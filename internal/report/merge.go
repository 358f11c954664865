package report

import (
	"fmt"
	"strings"

	"github.com/failpass/failpass/internal/shard"
)

// MergeError is a set of shard outputs that are not one run's: a
// candidate or a shard given twice, outputs of different runs, a shard
// missing.
type MergeError struct {
	Msg  string
	Hint []string
}

func (e *MergeError) Error() string { return e.Msg }

// Hints say how to give the outputs of one run.
func (e *MergeError) Hints() []string { return e.Hint }

func mergeError(msg string, hints ...string) *MergeError {
	return &MergeError{Msg: msg, Hint: hints}
}

// Merge combines the shard outputs of one gate run (results merge): Add
// each output ReadResults read, then Done. The outputs must be every
// shard of one run: either none says a shard (outputs of unsharded runs),
// or each says K/N with one N and every K from 0 to N-1 exactly once. No
// candidate (one card, one diff) may appear twice.
type Merge struct {
	results []Result
	seen    map[string]string // candidate -> the file it came from

	n         int
	unsharded string // an output without a shard, for the message
	have      map[int]string
}

// Add takes one output: file names it in errors, rs and s are what
// ReadResults returned for it.
func (m *Merge) Add(file string, rs []Result, s Summary) error {
	if err := m.addShard(file, s.Shard); err != nil {
		return err
	}
	if m.seen == nil {
		m.seen = map[string]string{}
	}
	for _, r := range rs {
		// One candidate is one (card, diff) pair; the same pair in two
		// outputs means a shard was merged twice or shards overlap.
		id := r.Verdict.CardDigest + " " + r.Verdict.DiffDigest + " " + r.Verdict.Candidate
		if prev, ok := m.seen[id]; ok {
			return mergeError(fmt.Sprintf("candidate %s appears in both %s and %s", r.Verdict.Candidate, prev, file),
				"give each shard's output once; shards of one run never overlap")
		}
		m.seen[id] = file
		m.results = append(m.results, r)
	}
	return nil
}

// Done returns every result added, in order, or names the shards missing
// from the outputs given.
func (m *Merge) Done() ([]Result, error) {
	if m.have != nil {
		var missing []string
		for k := 0; k < m.n; k++ {
			if _, ok := m.have[k]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", k, m.n))
			}
		}
		if len(missing) > 0 {
			return nil, mergeError(fmt.Sprintf("shard output missing: %s (%d of %d given)", strings.Join(missing, ", "), len(m.have), m.n),
				"a shard that did not finish left no output; rerun it with gate --shard K/N --json and merge every shard")
		}
	}
	return m.results, nil
}

func (m *Merge) addShard(file, slice string) error {
	if slice == "" {
		m.unsharded = file
		return m.mixed()
	}
	s, err := shard.Parse(slice)
	if err != nil {
		return mergeError(fmt.Sprintf("%s: the summary's shard %q is not K/N", file, slice))
	}
	if m.have == nil {
		m.have, m.n = map[int]string{}, s.N
	}
	if s.N != m.n {
		return mergeError(fmt.Sprintf("%s is shard %s, but another output is a shard of %d", file, s, m.n),
			"merge the outputs of one run: every shard K/N with the same N")
	}
	if prev, ok := m.have[s.K]; ok {
		return mergeError(fmt.Sprintf("shard %s appears twice: %s and %s", s, prev, file), "give each shard's output once")
	}
	m.have[s.K] = file
	return m.mixed()
}

func (m *Merge) mixed() error {
	if m.unsharded != "" && m.have != nil {
		return mergeError(fmt.Sprintf("%s is not a shard's output, but others are", m.unsharded),
			"merge the outputs of one sharded run (gate --shard K/N --json)")
	}
	return nil
}

package report

import (
	"errors"
	"github.com/failpass/failpass/internal/verdict"
	"strings"
	"testing"
)

// TestMerge: the outputs merged must be every shard of one run, each
// candidate once.
func TestMerge(t *testing.T) {
	type out struct {
		file, shard string
		cands       []string
	}
	for _, tc := range []struct {
		name string
		outs []out
		want string // the error's start; "" for success
		n    int    // results merged
	}{
		{"unsharded", []out{{"a", "", []string{"x"}}, {"b", "", []string{"y"}}}, "", 2},
		{"every shard", []out{{"a", "1/2", []string{"x"}}, {"b", "0/2", nil}}, "", 1},
		{"nothing", nil, "", 0},
		{"a shard missing", []out{{"a", "0/3", nil}, {"b", "2/3", nil}}, "shard output missing: 1/3 (2 of 3 given)", 0},
		{"shard twice", []out{{"a", "0/2", nil}, {"b", "0/2", nil}}, "shard 0/2 appears twice: a and b", 0},
		{"two runs", []out{{"a", "0/2", nil}, {"b", "1/3", nil}}, "b is shard 1/3, but another output is a shard of 2", 0},
		{"mixed", []out{{"a", "", nil}, {"b", "0/1", nil}}, "a is not a shard's output, but others are", 0},
		{"mixed the other way", []out{{"a", "0/1", nil}, {"b", "", nil}}, "b is not a shard's output, but others are", 0},
		{"bad shard", []out{{"a", "x", nil}}, `a: the summary's shard "x" is not K/N`, 0},
		{"candidate twice", []out{{"a", "0/2", []string{"x"}}, {"b", "1/2", []string{"x"}}}, "candidate x appears in both a and b", 0},
	} {
		var m Merge
		var err error
		for _, o := range tc.outs {
			var rs []Result
			for _, c := range o.cands {
				rs = append(rs, Result{Verdict: &verdict.Verdict{Candidate: c, CardDigest: "sha256:00", DiffDigest: "sha256:" + c}})
			}
			if err = m.Add(o.file, rs, Summary{Shard: o.shard}); err != nil {
				break
			}
		}
		var got []Result
		if err == nil {
			got, err = m.Done()
		}
		var me *MergeError
		switch {
		case tc.want == "" && (err != nil || len(got) != tc.n):
			t.Errorf("%s: merged %d, %v; want %d results", tc.name, len(got), err, tc.n)
		case tc.want != "" && (!errors.As(err, &me) || !strings.HasPrefix(me.Msg, tc.want)):
			t.Errorf("%s: merged %d, %v; want a *MergeError %q", tc.name, len(got), err, tc.want)
		}
	}
}

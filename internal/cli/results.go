package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/report"
)

func resultsCommands() []*command {
	return []*command{
		{name: "merge", summary: "combine shard outputs into one summary", run: runResultsMerge},
		{name: "annotate", summary: "show gate outputs as GitHub Actions annotations and a job summary", run: runResultsAnnotate},
	}
}

const resultsMergeUsage = `failpass results merge [--json] [--junit FILE] FILE...`

// runResultsMerge combines the `gate --json` outputs of shards into one
// summary with gate's exit codes: 0 every candidate passed, 1 any was
// refused, 2 a shard output is missing, malformed, cut short, ended in
// trouble, or repeats another's candidate, a shard of the run is missing
// (each `--shard K/N` output's summary names its slice, and the slices
// given must be every K of one N), or a candidate could not be gated.
func runResultsMerge(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "results merge", resultsMergeUsage)
	asJSON := fs.Bool("json", false, "print the verdicts as NDJSON and the summary line")
	junit := fs.String("junit", "", "also write the verdicts as JUnit XML to `FILE`")
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &UsageError{Msg: "no shard outputs given", Hint: "failpass results merge shard-0.ndjson shard-1.ndjson ..."}
	}
	err = mergeResults(env, files, *asJSON, *junit)
	if err != nil && *asJSON && !isExit(err) {
		report.JSONError(env.Stdout, err)
	}
	return err
}

func mergeResults(env *Env, files []string, asJSON bool, junit string) error {
	var all []report.Result
	seen := map[string]string{}
	var shards shardCover
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			return Errorf("cannot read shard output: %v", err).Hint("pass the files each shard's `failpass gate --json` wrote")
		}
		rs, got, err := report.ReadResults(name, fh)
		fh.Close()
		if err != nil {
			return err
		}
		if err := shards.add(name, got.Shard); err != nil {
			return err
		}
		for _, r := range rs {
			// One candidate is one (card, diff) pair; the same pair in two
			// outputs means a shard was merged twice or shards overlap.
			id := r.Verdict.CardDigest + " " + r.Verdict.DiffDigest + " " + r.Verdict.Candidate
			if prev, ok := seen[id]; ok {
				return Errorf("candidate %s appears in both %s and %s", r.Verdict.Candidate, prev, name).Hint("give each shard's output once; shards of one run never overlap")
			}
			seen[id] = name
			all = append(all, r)
		}
	}
	if err := shards.complete(); err != nil {
		return err
	}
	var sum report.Summary
	vs := make([]*gate.Verdict, len(all))
	for i, r := range all {
		vs[i] = r.Verdict
		sum.Add(r.Verdict)
		if asJSON {
			fmt.Fprintf(env.Stdout, "%s\n", r.Raw)
		}
	}
	if junit != "" {
		if err := writeJUnit(filepath.Clean(junit), vs); err != nil {
			return err
		}
	}
	if asJSON {
		if err := report.SummaryJSON(env.Stdout, sum); err != nil {
			return err
		}
	} else {
		report.Table(env.Stdout, vs)
	}
	if sum.Errors > 0 {
		printError(env.Stderr, "failpass: error: ", fmt.Sprintf("%d candidate(s) could not be gated (verdict error)", sum.Errors), nil)
		return Exit(ExitTrouble)
	}
	if sum.Failed > 0 {
		return Exit(ExitFail)
	}
	return nil
}

// shardCover checks that the outputs merged are every shard of one run:
// either none says a shard (outputs of unsharded runs), or each says K/N
// with one N and every K from 0 to N-1 exactly once.
type shardCover struct {
	n         int
	files     int
	unsharded string // an output without a shard, for the message
	have      map[int]string
}

func (c *shardCover) add(file, shard string) error {
	c.files++
	if shard == "" {
		c.unsharded = file
		return c.mixed()
	}
	s, err := gate.ParseShard(shard)
	if err != nil {
		return Errorf("%s: the summary's shard %q is not K/N", file, shard)
	}
	if c.have == nil {
		c.have, c.n = map[int]string{}, s.N
	}
	if s.N != c.n {
		return Errorf("%s is shard %s, but another output is a shard of %d", file, s, c.n).
			Hint("merge the outputs of one run: every shard K/N with the same N")
	}
	if prev, ok := c.have[s.K]; ok {
		return Errorf("shard %s appears twice: %s and %s", s, prev, file).Hint("give each shard's output once")
	}
	c.have[s.K] = file
	return c.mixed()
}

func (c *shardCover) mixed() error {
	if c.unsharded != "" && c.have != nil {
		return Errorf("%s is not a shard's output, but others are", c.unsharded).
			Hint("merge the outputs of one sharded run (gate --shard K/N --json)")
	}
	return nil
}

// complete names the shards missing from the outputs given.
func (c *shardCover) complete() error {
	if c.have == nil {
		return nil
	}
	var missing []string
	for k := 0; k < c.n; k++ {
		if _, ok := c.have[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, c.n))
		}
	}
	if len(missing) > 0 {
		return Errorf("shard output missing: %s (%d of %d given)", strings.Join(missing, ", "), len(c.have), c.n).
			Hint("a shard that did not finish left no output; rerun it with gate --shard K/N --json and merge every shard")
	}
	return nil
}

package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/failpass/failpass/internal/gate"
	"github.com/failpass/failpass/internal/report"
)

func resultsCommands() []*command {
	return []*command{
		{name: "merge", summary: "combine shard outputs into one summary", run: runResultsMerge},
	}
}

const resultsMergeUsage = `failpass results merge [--json] [--junit FILE] FILE...`

// runResultsMerge combines the `gate --json` outputs of shards into one
// summary with gate's exit codes: 0 every candidate passed, 1 any was
// refused, 2 a shard output is missing, malformed, cut short, ended in
// trouble, or repeats another's candidate.
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
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			return Errorf("cannot read shard output: %v", err).Hint("pass the files each shard's `failpass gate --json` wrote")
		}
		rs, _, err := report.ReadResults(name, fh)
		fh.Close()
		if err != nil {
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
	if sum.Failed > 0 {
		return Exit(ExitFail)
	}
	return nil
}

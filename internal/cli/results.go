package cli

import (
	"context"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"os"
	"path/filepath"

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
	var m report.Merge
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
		if err := m.Add(name, rs, got); err != nil {
			return err
		}
	}
	all, err := m.Done()
	if err != nil {
		return err
	}
	var sum report.Summary
	vs := make([]*verdict.Verdict, len(all))
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

package cli

import (
	"bytes"
	"context"
	"errors"
	"github.com/failpass/failpass/internal/verdict"
	"io"
	"os"

	"github.com/failpass/failpass/internal/report"
)

const resultsAnnotateUsage = `failpass results annotate [--summary FILE] FILE...`

// runResultsAnnotate turns `gate --json` outputs into what a GitHub
// Actions job shows: workflow commands on stdout that become annotations
// (an error on the file and line a broken rule points at, a warning for
// missing sandbox layers), and with --summary a Markdown section per
// verdict appended to FILE ($GITHUB_STEP_SUMMARY). It renders and judges
// nothing: exit 0 when every output was read, whatever the verdicts (the
// gate's exit code is the verdict), 2 when one is missing or malformed.
func runResultsAnnotate(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "results annotate", resultsAnnotateUsage)
	summary := fs.String("summary", "", "append a Markdown section per verdict to `FILE` (e.g. $GITHUB_STEP_SUMMARY)")
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &UsageError{Msg: "no gate outputs given", Hint: "failpass gate --json ... > verdict.json; failpass results annotate verdict.json"}
	}
	var vs []*verdict.Verdict
	for _, name := range files {
		got, err := readVerdicts(name)
		if err != nil {
			return err
		}
		vs = append(vs, got...)
	}
	var md bytes.Buffer
	for _, v := range vs {
		report.Annotations(env.Stdout, v)
		report.SummaryMarkdown(&md, v)
	}
	if *summary == "" {
		return nil
	}
	f, err := os.OpenFile(*summary, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return Errorf("cannot write the summary: %v", err)
	}
	_, err = f.Write(md.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Errorf("cannot write the summary: %v", err)
	}
	return nil
}

// readVerdicts reads one `gate --json` output (report.ReadVerdicts).
func readVerdicts(name string) ([]*verdict.Verdict, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, Errorf("cannot read gate output: %v", err).Hint("pass the file `failpass gate --json` wrote")
	}
	defer f.Close()
	vs, err := report.ReadVerdicts(name, io.LimitReader(f, 1<<30))
	var re *report.ResultsError
	if errors.As(err, &re) && re.Msg == report.NoVerdict {
		return nil, Errorf("%v", err).Hint("the gate printed nothing: see its exit code and stderr")
	}
	if err != nil {
		return nil, Errorf("%v", err)
	}
	return vs, nil
}

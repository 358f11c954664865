package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"

	"github.com/failpass/failpass/internal/gate"
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
	var vs []*gate.Verdict
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

// readVerdicts reads one `gate --json` output: a verdict object, or a
// batch's NDJSON with its summary line. Trouble (`{"verdict": "error"}`)
// is a verdict to show, not an error here.
func readVerdicts(name string) ([]*gate.Verdict, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, Errorf("cannot read gate output: %v", err).Hint("pass the file `failpass gate --json` wrote")
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<30))
	sc.Buffer(make([]byte, 64<<10), report.MaxResultLine)
	var out []*gate.Verdict
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v struct {
			gate.Verdict
			Summary json.RawMessage `json:"summary"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, Errorf("%s:%d: not a gate verdict: %v", name, n, err)
		}
		if v.Summary != nil {
			continue
		}
		switch v.Verdict.Verdict {
		case gate.Pass, gate.Fail, gate.Errored:
		default:
			return nil, Errorf("%s:%d: not a gate verdict: verdict %q", name, n, v.Verdict.Verdict)
		}
		out = append(out, &v.Verdict)
	}
	if err := sc.Err(); err != nil {
		return nil, Errorf("%s:%d: %v", name, n, err)
	}
	if len(out) == 0 {
		return nil, Errorf("%s: no verdict in it", name).Hint("the gate printed nothing: see its exit code and stderr")
	}
	return out, nil
}

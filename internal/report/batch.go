package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Summary counts a batch's candidates. Its JSON form is the last line of
// `gate --json` with several candidates.
type Summary struct {
	Total  int `json:"total"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	Cached int `json:"cached"`
	// Errors counts candidates that could not be gated (verdict "error");
	// written only when there are some.
	Errors int `json:"errors,omitempty"`
	// Shard is the "K/N" slice this output covers, under --shard; results
	// merge checks the shards given cover every K of N.
	Shard string `json:"shard,omitempty"`
}

// Add counts one verdict.
func (s *Summary) Add(v *verdict.Verdict) {
	s.Total++
	switch v.Verdict {
	case verdict.Pass:
		s.Passed++
	case verdict.Errored:
		s.Errors++
	default:
		s.Failed++
	}
	if v.Cached {
		s.Cached++
	}
}

// SummaryJSON writes `{"summary": {...}}` as one line.
func SummaryJSON(w io.Writer, s Summary) error {
	b, err := json.Marshal(struct {
		Summary Summary `json:"summary"`
	}{s})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// BatchLine is a candidate's one line as it finishes:
//
//	PASS fix-1.diff (1.2s)
//	FAIL fix-2.diff budget.files: files changed: 4 of 3 (0.0s, cached)
//	PASS fix-3.diff (2.5s, held-out tests SKIPPED)
func BatchLine(v *verdict.Verdict) string {
	extra := ""
	if v.Cached {
		extra = ", cached"
	}
	if v.HeldOut == verdict.HeldOutSkipped {
		extra += ", held-out tests SKIPPED"
	}
	switch v.Verdict {
	case verdict.Pass:
		return oneLine(fmt.Sprintf("PASS %s (%s%s)", v.Candidate, dur(v.DurationMS), extra))
	case verdict.Errored:
		return oneLine(fmt.Sprintf("ERROR %s: %s", v.Candidate, v.Error))
	}
	return oneLine(fmt.Sprintf("FAIL %s %s: %s (%s%s)", v.Candidate, v.Failed(), v.Reason, dur(v.DurationMS), extra))
}

func dur(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// Table writes the summary table: candidate, verdict, first broken rule,
// duration; then the totals line.
func Table(w io.Writer, vs []*verdict.Verdict) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tVERDICT\tRULE\tDURATION")
	var s Summary
	for _, v := range vs {
		s.Add(v)
		rule := v.Failed()
		if rule == "" {
			rule = "-"
		}
		d := dur(v.DurationMS)
		if v.Cached {
			d += " (cached)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(v.Candidate), v.Verdict, rule, d)
	}
	tw.Flush()
	fmt.Fprintln(w, TotalsLine(s))
}

// TotalsLine is `total 4, passed 2, failed 2, cached 1`, with `, errors
// N` when some candidates could not be gated.
func TotalsLine(s Summary) string {
	line := fmt.Sprintf("total %d, passed %d, failed %d, cached %d", s.Total, s.Passed, s.Failed, s.Cached)
	if s.Errors > 0 {
		line += fmt.Sprintf(", errors %d", s.Errors)
	}
	return line
}

// oneLine keeps a hostile candidate name or reason (a NUL, an escape
// sequence, a newline) from breaking the line or reaching the terminal.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// JUnit writes the verdicts as a JUnit XML test suite: one test case per
// candidate, a failure element naming the first broken rule.
func JUnit(w io.Writer, vs []*verdict.Verdict) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Error     *failure `xml:"error,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Time     string     `xml:"time,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	s := suite{Name: "failpass gate", Tests: len(vs)}
	var total int64
	for _, v := range vs {
		total += v.DurationMS
		tc := testcase{Name: xmlSafe(v.Candidate), Classname: "failpass." + strings.TrimPrefix(v.CardDigest, "sha256:")[:min(12, len(strings.TrimPrefix(v.CardDigest, "sha256:")))], Time: secs(v.DurationMS)}
		if v.Verdict == verdict.Errored {
			s.Errors++
			msg := xmlSafe(v.Error)
			tc.Error = &failure{Message: msg, Type: "error", Text: msg}
		} else if v.Verdict != verdict.Pass {
			s.Failures++
			msg := xmlSafe(v.Failed() + ": " + v.Reason)
			tc.Failure = &failure{Message: msg, Type: v.Failed(), Text: msg}
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Time = secs(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func secs(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// xmlSafe drops characters XML 1.0 cannot carry at all (encoding/xml
// escapes the rest).
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF) {
			return r
		}
		return '?'
	}, s)
}

// Result is one candidate line of a shard's NDJSON output: the verdict
// as parsed, and the line as written (merge re-emits it unchanged, so
// fields this version does not know survive).
type Result struct {
	Verdict *verdict.Verdict
	Raw     json.RawMessage
}

// ResultsError is a malformed shard output.
type ResultsError struct {
	File string
	Line int
	Msg  string
}

func (e *ResultsError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Hints says what merge reads.
func (e *ResultsError) Hints() []string {
	return []string{"results merge reads the output of `failpass gate --json` with several candidates: one verdict per line, then a summary line"}
}

// MaxResultLine bounds one NDJSON line.
const MaxResultLine = 16 << 20

// ReadResults parses one shard's `gate --json` output: verdict lines, then
// exactly one summary line that must agree with them. A shard that ended
// in trouble (a `"verdict": "error"` line) or was cut short (no summary)
// is an error. On error no results are returned.
func ReadResults(file string, r io.Reader) ([]Result, Summary, error) {
	var out []Result
	var got Summary
	var sum *Summary
	err := eachLine(file, r, func(n int, line []byte) error {
		if sum != nil {
			return &ResultsError{file, n, "a line after the summary line"}
		}
		summary, v, msg := decodeLine(line)
		switch {
		case msg != "":
			return &ResultsError{file, n, msg}
		case summary != nil:
			sum = summary
			return nil
		case v.Verdict == verdict.Errored && v.Candidate == "":
			return &ResultsError{file, n, "the shard ended in trouble: " + v.Error}
		case v.Candidate == "":
			return &ResultsError{file, n, "a verdict without a candidate"}
		case v.Verdict == verdict.Fail && v.Failed() == "":
			return &ResultsError{file, n, "a failing verdict without a rule"}
		case v.Verdict == verdict.Pass && v.Failed() != "":
			return &ResultsError{file, n, "a passing verdict with a broken rule"}
		}
		got.Add(v)
		out = append(out, Result{Verdict: v, Raw: append(json.RawMessage(nil), line...)})
		return nil
	})
	if err != nil {
		return nil, Summary{}, err
	}
	if sum == nil {
		return nil, Summary{}, &ResultsError{File: file, Msg: "no summary line: the shard's output is incomplete"}
	}
	got.Shard = sum.Shard
	if *sum != got {
		return nil, Summary{}, &ResultsError{File: file, Msg: fmt.Sprintf("the summary (%s) disagrees with the verdicts (%s)", TotalsLine(*sum), TotalsLine(got))}
	}
	return out, got, nil
}

// eachLine calls f with each non-blank line of r (trimmed) and its
// number, until f returns an error; a line over MaxResultLine, or a
// failed read, is a *ResultsError.
func eachLine(file string, r io.Reader, f func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxResultLine)
	n := 0
	for sc.Scan() {
		n++
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if err := f(n, line); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return &ResultsError{file, n, err.Error()}
	}
	return nil
}

// decodeLine reads one line of `gate --json` output: a summary line, or
// a verdict whose verdict is one the gate gives. msg says why it is
// neither.
func decodeLine(line []byte) (*Summary, *verdict.Verdict, string) {
	var probe struct {
		Summary *Summary `json:"summary"`
		Verdict *string  `json:"verdict"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, nil, "not JSON: " + err.Error()
	}
	switch {
	case probe.Summary != nil:
		return probe.Summary, nil, ""
	case probe.Verdict == nil:
		return nil, nil, "neither a verdict nor a summary"
	case *probe.Verdict != verdict.Pass && *probe.Verdict != verdict.Fail && *probe.Verdict != verdict.Errored:
		return nil, nil, fmt.Sprintf("unknown verdict %q", *probe.Verdict)
	}
	var v verdict.Verdict
	if err := json.Unmarshal(line, &v); err != nil {
		return nil, nil, "malformed verdict: " + err.Error()
	}
	return nil, &v, ""
}

// NoVerdict is ReadVerdicts's complaint about output that held none.
const NoVerdict = "no verdict in it"

// ReadVerdicts reads what one `gate --json` printed, to show it rather
// than merge it: a single gate's verdict object, or a batch's NDJSON
// (its summary line is skipped). Trouble (`{"verdict": "error"}`) is a
// verdict to show, not an error here.
func ReadVerdicts(file string, r io.Reader) ([]*verdict.Verdict, error) {
	var out []*verdict.Verdict
	err := eachLine(file, r, func(n int, line []byte) error {
		summary, v, msg := decodeLine(line)
		if msg != "" {
			return &ResultsError{file, n, "not a gate verdict: " + msg}
		}
		if summary == nil {
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &ResultsError{File: file, Msg: NoVerdict}
	}
	return out, nil
}

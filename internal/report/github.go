package report

import (
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"io"
	"sort"
	"strings"
)

// GitHub Actions output: workflow commands that become annotations on a
// pull request (`::error file=F,line=N,title=T::message`), and a Markdown
// section for the job summary. Every string a candidate can influence (a
// path, a reason, a candidate name) is escaped, so a hostile file name
// can neither end the command early nor start a command of its own.

// Annotations writes the workflow commands for one verdict: an error on
// the file and line a broken rule points at (a budget rule's path, and
// the line of the diff's first edit there), or an error without a file
// for a rule that names none; an error for a candidate that could not
// be gated; and a warning when sandbox layers were missing, naming them
// and why. A passing verdict with the whole sandbox writes nothing.
func Annotations(w io.Writer, v *verdict.Verdict) {
	switch v.Verdict {
	case verdict.Fail:
		props := []string{}
		if s := brokenStep(v); s != nil && s.Path != "" {
			props = append(props, "file="+ghProperty(s.Path))
			if s.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", s.Line))
			}
		}
		props = append(props, "title="+ghProperty("failpass "+v.Failed()))
		fmt.Fprintf(w, "::error %s::%s\n", strings.Join(props, ","), ghData(VerdictLine(v)))
	case verdict.Errored:
		msg := "failpass could not gate " + v.Candidate + ": " + v.Error
		if v.Candidate == "" {
			msg = "failpass: trouble: " + v.Error
		}
		fmt.Fprintf(w, "::error title=%s::%s\n", ghProperty("failpass error"), ghData(msg))
	}
	if msg := sandboxGap(v); msg != "" {
		fmt.Fprintf(w, "::warning title=%s::%s\n", ghProperty("failpass sandbox"), ghData(msg))
	}
}

// brokenStep is the step of the verdict's first broken rule.
func brokenStep(v *verdict.Verdict) *verdict.Step {
	for i := range v.Steps {
		if v.Steps[i].Rule == v.Failed() && v.Steps[i].Status == verdict.StatusFail {
			return &v.Steps[i]
		}
	}
	return nil
}

// sandboxGap says what the sandbox did not apply, or "" when nothing is
// missing (or nothing ran: a statically refused candidate probes nothing).
func sandboxGap(v *verdict.Verdict) string {
	r := v.Sandbox
	switch {
	case r.Off:
		return "the sandbox was off (--sandbox=off): nothing contained the card's commands"
	case len(r.Missing) == 0:
		return ""
	}
	why := make([]string, 0, len(r.Why))
	for f, reason := range r.Why {
		why = append(why, f+": "+reason)
	}
	sort.Strings(why)
	msg := "sandbox layers missing on this runner: " + strings.Join(r.Missing, ", ")
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return msg
}

// ghData escapes a workflow command's message as the runner unescapes it.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(oneLine(s))
}

// ghProperty escapes a workflow command's property value (file, title),
// where ':' and ',' also end the value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(oneLine(s))
}

// SummaryMarkdown writes one verdict as a Markdown section for a job
// summary: the verdict, where the broken rule points, what was gated on
// which base, the sandbox, and every rule in a collapsed table.
func SummaryMarkdown(w io.Writer, v *verdict.Verdict) {
	var b strings.Builder
	switch v.Verdict {
	case verdict.Pass:
		b.WriteString("### failpass: PASS\n\n")
	case verdict.Fail:
		fmt.Fprintf(&b, "### failpass: FAIL %s\n\n", mdCode(v.Failed()))
		fmt.Fprintf(&b, "**Reason:** %s\n\n", mdCode(v.Reason))
		if s := brokenStep(v); s != nil && s.Path != "" {
			where := mdCode(s.Path)
			if s.Line > 0 {
				where += fmt.Sprintf(", line %d", s.Line)
			}
			fmt.Fprintf(&b, "**Where:** %s\n\n", where)
		}
	default:
		b.WriteString("### failpass: ERROR\n\n")
		fmt.Fprintf(&b, "**Trouble:** %s\n\n", mdCode(v.Error))
	}
	if v.Candidate != "" {
		fmt.Fprintf(&b, "**Candidate:** %s", mdCode(v.Candidate))
		if v.Base != "" {
			fmt.Fprintf(&b, " on base %s", mdCode(v.Base))
		}
		if v.CardDigest != "" {
			fmt.Fprintf(&b, ", card %s", mdCode(v.CardDigest))
		}
		b.WriteString("\n\n")
	}
	if v.Verdict != verdict.Errored {
		if gap := sandboxGap(v); gap != "" {
			fmt.Fprintf(&b, "**Sandbox:** %s\n\n", mdCode(gap))
		} else if len(v.Sandbox.Applied) > 0 {
			fmt.Fprintf(&b, "**Sandbox:** %s\n\n", mdCode("applied: "+strings.Join(v.Sandbox.Applied, ", ")))
		}
	}
	if len(v.Steps) > 0 {
		b.WriteString("<details><summary>Rules</summary>\n\n")
		b.WriteString("| rule | status | exit | expected | reason |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range v.Steps {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(mdCode(s.Rule)), mdCell(s.Status),
				optInt(s.Exit), optInt(s.Expected), mdCell(mdCode(s.Reason)))
		}
		b.WriteString("\n</details>\n\n")
	}
	io.WriteString(w, b.String())
}

func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

// mdCode is s as a Markdown code span, which shows any text literally:
// no link, emphasis or HTML a candidate's file name could smuggle in.
func mdCode(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdCell keeps a table cell in its column: a '|' ends a cell even inside
// a code span unless escaped.
func mdCell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

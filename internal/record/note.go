package record

import (
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"io"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/shellquote"
	"github.com/failpass/failpass/internal/sign"
)

// Note is what a pull-request body or merge note is made of. Record and
// RecordPath are empty when no record is given (a PR opened before any
// gate ran).
type Note struct {
	CardPath string // as given on the command line
	CardYAML []byte // the card file's bytes, shown verbatim
	Card     *card.Card
	// Record is the parsed record, RecordPath where it lies and
	// RecordDigest "sha256:<hex>" of its bytes.
	Record       *Statement
	RecordPath   string
	RecordDigest string
	// Runner is who signed the record, when its signature was checked
	// against the runners' allowed_signers (note --runners); nil means
	// nobody checked it (note --unverified), and the note says so.
	Runner *sign.Verified
}

// signatureCell says whether the record's signature was checked.
func (n *Note) signatureCell() string {
	if n.Runner == nil {
		return "**not checked** (--unverified): this verdict rests on the record file alone; check it with `failpass record verify`"
	}
	return fmt.Sprintf("valid, runner %s (%s key %s)", cell(n.Runner.Principal), cell(n.Runner.KeyType), code(n.Runner.Fingerprint))
}

// base is the commit the note cites: the record's, else the card's pin.
func (n *Note) base() string {
	if n.Record != nil && n.Record.Predicate.Base != "" {
		return n.Record.Predicate.Base
	}
	if n.Card.BaseSHA != "" {
		return n.Card.BaseSHA
	}
	return n.Card.BaseRef
}

// WriteMarkdown writes the pull-request body: the contract id, base, card
// path and record digest, the rule table with exit codes, the commands
// that replay and verify the gate, and the card's YAML.
func (n *Note) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	c := n.Card
	fmt.Fprintf(&b, "## failpass contract %s\n\n", code(c.ID))
	b.WriteString("| | |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| contract | %s |\n", code(c.ID))
	fmt.Fprintf(&b, "| base | %s |\n", code(n.base()))
	digest, err := c.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "| card | %s (%s) |\n", code(n.CardPath), code(digest))
	if n.Record != nil {
		p := &n.Record.Predicate
		fmt.Fprintf(&b, "| record | %s (%s) |\n", code(n.RecordPath), code(n.RecordDigest))
		if t := n.Record.Tree(); t != "" {
			fmt.Fprintf(&b, "| patched tree | %s |\n", code(t))
		}
		line := "**PASS**"
		if n.Runner == nil {
			line = "**PASS** (unverified record)"
		}
		if p.Verdict != verdict.Pass {
			line = fmt.Sprintf("**FAIL** %s: %s", code(*p.Rule), cell(p.Reason))
		} else if p.HeldOut == verdict.HeldOutSkipped {
			line += " (held-out tests SKIPPED by --skip-held-out)"
		}
		fmt.Fprintf(&b, "| verdict | %s |\n", line)
		fmt.Fprintf(&b, "| record signature | %s |\n", n.signatureCell())
		if len(p.Card.Signers) > 0 {
			fmt.Fprintf(&b, "| card signed by | %s |\n", cell(strings.Join(p.Card.Signers, ", ")))
		}
		if p.Sandbox.Off {
			b.WriteString("| sandbox | off (--sandbox=off): nothing contained the commands |\n")
		} else {
			fmt.Fprintf(&b, "| sandbox | applied: %s; missing: %s |\n", list(p.Sandbox.Applied), list(p.Sandbox.Missing))
		}
		fmt.Fprintf(&b, "| tool | %s |\n", cell(p.Tool))
	}

	b.WriteString("\n### Rules\n\n")
	if n.Record != nil {
		b.WriteString("| rule | status | exit | expected |\n| --- | --- | --- | --- |\n")
		for _, s := range n.Record.Predicate.Steps {
			exp := ""
			if s.Expected != nil {
				exp = fmt.Sprint(*s.Expected)
			}
			status := s.Status
			if s.Rule == verdict.RulePatchHeldOut && n.Record.Predicate.HeldOut == verdict.HeldOutSkipped {
				// Passed loudly, never "ok": nothing ran.
				status = "skipped (--skip-held-out: the card's held-out tests did not run)"
			}
			if s.Reason != "" {
				status += " (" + s.Reason + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(s.Rule), cell(status), exits(s.Runs), exp)
		}
	} else {
		b.WriteString("No gate record yet: the rules the card's commands decide, and the exits it expects.\n\n")
		b.WriteString("| rule | command | expected |\n| --- | --- | --- |\n")
		for _, cr := range commandRules {
			cmd := c.Command(cr.role)
			fmt.Fprintf(&b, "| %s | %s | %d |\n", code(cr.rule), code(strings.Join(cmd.Cmd, " ")), cmd.ExpectExit)
		}
	}

	b.WriteString("\n### Replay\n\n```sh\n")
	diff := "CANDIDATE.diff"
	if n.Record != nil && n.Record.Predicate.Diff.Name != "" && n.Record.Predicate.Diff.Name != "-" {
		diff = n.Record.Predicate.Diff.Name
	}
	repeat := ""
	if n.Record != nil {
		// The gate runs every command --repeat times; the base's fail
		// step says how many the record's run used.
		for _, s := range n.Record.Predicate.Steps {
			if s.Rule == verdict.RuleBaseFail && len(s.Runs) > 1 {
				repeat = fmt.Sprintf(" --repeat %d", len(s.Runs))
			}
		}
	}
	if c.HeldOut != nil {
		// The maintainer's folder: its path is nobody else's to know.
		repeat += " --held-out HELD_OUT_DIR"
	}
	fmt.Fprintf(&b, "failpass gate --card %s --diff %s --allowed-signers ALLOWED_SIGNERS%s\n", shellquote.Quote(n.CardPath), shellquote.Quote(diff), repeat)
	if n.Record != nil {
		fmt.Fprintf(&b, "failpass record verify --record %s --runners RUNNERS --card %s --allowed-signers ALLOWED_SIGNERS --diff %s --repo .\n",
			shellquote.Quote(n.RecordPath), shellquote.Quote(n.CardPath), shellquote.Quote(diff))
	}
	b.WriteString("```\n")

	b.WriteString("\n### Contract card\n\n")
	fence := fenceFor(n.CardYAML)
	fmt.Fprintf(&b, "%syaml\n%s", fence, n.CardYAML)
	if len(n.CardYAML) > 0 && n.CardYAML[len(n.CardYAML)-1] != '\n' {
		b.WriteString("\n")
	}
	b.WriteString(fence + "\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteMerge writes the merge note: a subject naming the contract, then
// trailers citing the contract id, the base hash, the card path and the
// record's digest, so `git log --format=%(trailers)` finds them.
func (n *Note) WriteMerge(w io.Writer) error {
	if n.Record == nil {
		return fmt.Errorf("a merge note cites a gate record")
	}
	signed := "unverified"
	if n.Runner != nil {
		signed = "verified, runner " + oneLine(n.Runner.Principal) + " " + n.Runner.Fingerprint
	}
	gateSays := "pass"
	if n.Record.Predicate.HeldOut == verdict.HeldOutSkipped {
		gateSays = "pass, held-out skipped"
	}
	_, err := fmt.Fprintf(w, "Merge fix for %s (failpass gate: %s)\n\nFailpass-Contract: %s\nFailpass-Base: %s\nFailpass-Card: %s\nFailpass-Record: %s\nFailpass-Record-Signature: %s\n",
		oneLine(n.Card.ID), gateSays, oneLine(n.Card.ID), n.base(), oneLine(n.CardPath), n.RecordDigest, signed)
	return err
}

// exits renders a step's runs: "1", "1, 1, 1" under --repeat, and the
// inconclusive endings in words.
func exits(runs []Run) string {
	var out []string
	for _, r := range runs {
		switch {
		case r.TimedOut:
			out = append(out, "timed out")
		case r.Signal != "":
			out = append(out, "signal "+cell(r.Signal))
		default:
			out = append(out, fmt.Sprint(r.Exit))
		}
	}
	return strings.Join(out, ", ")
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return cell(strings.Join(s, ", "))
}

// code is s as a Markdown code span, whatever backticks it holds.
func code(s string) string {
	s = oneLine(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", "\\|") + pad + fence
}

// cell is s made safe for one table cell: one line, pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", "\\|")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// fenceFor returns a backtick fence longer than any run of backticks in
// data, so the card's YAML cannot close the block it is shown in.
func fenceFor(data []byte) string {
	longest, run := 0, 0
	for _, c := range data {
		if c == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	if longest < 3 {
		return "```"
	}
	return strings.Repeat("`", longest+1)
}

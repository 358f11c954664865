package record

import (
	"fmt"
	"github.com/failpass/failpass/internal/verdict"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/testrunner"
)

// commandRules are the gate rules that run a card command, in gate order,
// with the role each runs.
var commandRules = []struct {
	rule string
	role card.Role
}{
	{verdict.RuleBaseFail, card.RoleFail},
	{verdict.RuleBaseInvariant, card.RoleInvariant},
	{verdict.RulePatchPass, card.RolePass},
	{verdict.RulePatchInvariant, card.RoleInvariant},
}

func commandRole(rule string) (card.Role, bool) {
	for _, cr := range commandRules {
		if cr.rule == rule {
			return cr.role, true
		}
	}
	return "", false
}

// Judgement is what a step's recorded runs prove about its rule, judged
// as the gate judges them.
type Judgement string

// The judgements of Judge.
const (
	Holds        Judgement = "holds"        // every run conclusive and exiting the expected code
	NoRuns       Judgement = "no-runs"      // nothing recorded: the rule proves nothing
	Inconclusive Judgement = "inconclusive" // a run timed out, died by a signal, or exited 125/126/127
	Disagree     Judgement = "disagree"     // conclusive runs with different exits (flaky)
	WrongExit    Judgement = "wrong-exit"   // runs agree on another exit than expected
)

// Judge applies the gate's rule to recorded runs: an inconclusive run
// breaks it whatever the others say, runs that disagree are flaky, and
// agreeing runs must exit expect.
func Judge(runs []Run, expect int) Judgement {
	if len(runs) == 0 {
		return NoRuns
	}
	for _, r := range runs {
		if !r.Conclusive() {
			return Inconclusive
		}
	}
	for _, r := range runs[1:] {
		if r.Exit != runs[0].Exit {
			return Disagree
		}
	}
	if runs[0].Exit != expect {
		return WrongExit
	}
	return Holds
}

// Check verifies a parsed record against the card it claims, without
// running anything: the card's id and digest, the base, every recorded
// argv byte for byte and expected exit, and that the verdict follows from
// the recorded exits. It is pure; signatures, the tree and the numstat are
// Verify's. Errors are *Error.
func Check(s *Statement, c *card.Card) error {
	p := &s.Predicate
	digest, err := c.Digest()
	if err != nil {
		return err
	}
	if p.Card.Digest != digest {
		return &Error{Problem: ProblemCardDigest, Field: "predicate.card.digest",
			Msg:  fmt.Sprintf("the record is of card %s, not of this card (%s)", p.Card.Digest, digest),
			Hint: "pass the card the gate ran, unchanged since it was signed"}
	}
	if p.Card.ID != c.ID {
		return errorf(ProblemCardDigest, "predicate.card.id", "%q, but the card's id is %q", p.Card.ID, c.ID)
	}
	if c.BaseSHA != "" && p.Base != c.BaseSHA {
		return errorf(ProblemBase, "predicate.base", "%q, but the card pins base_sha %s", p.Base, c.BaseSHA)
	}
	seen := map[string]bool{}
	for i, st := range p.Steps {
		field := fmt.Sprintf("predicate.steps[%d]", i)
		if !slices.Contains(verdict.Rules, st.Rule) {
			return errorf(ProblemMalformed, field+".rule", "unknown rule %q", st.Rule)
		}
		if seen[st.Rule] {
			return errorf(ProblemMalformed, field+".rule", "rule %q recorded twice", st.Rule)
		}
		seen[st.Rule] = true
		if st.Rule == verdict.RulePatchHeldOut {
			if err := checkHeldOutStep(field, st, c); err != nil {
				return err
			}
			continue
		}
		role, isCmd := commandRole(st.Rule)
		if st.Rule == verdict.RulePatchCanary {
			if err := checkCanaryStep(field, st, c); err != nil {
				return err
			}
			continue
		}
		if !isCmd {
			if len(st.Runs) > 0 || st.Expected != nil {
				return errorf(ProblemMalformed, field, "rule %s runs no command, yet the record holds runs or an expected exit", st.Rule)
			}
			continue
		}
		cmd := c.Command(role)
		if st.Expected != nil && *st.Expected != cmd.ExpectExit {
			return errorf(ProblemExpected, field+".expected", "%d, but the card's %s.expect_exit is %d", *st.Expected, role, cmd.ExpectExit)
		}
		for j, r := range st.Runs {
			if !slices.Equal(r.Argv, cmd.Cmd) {
				return &Error{Problem: ProblemArgv, Field: fmt.Sprintf("%s.runs[%d].argv", field, j),
					Msg:  fmt.Sprintf("%s, but the card's %s.cmd is %s", quoteArgv(r.Argv), role, quoteArgv(cmd.Cmd)),
					Hint: "the record was not made by running this card's commands"}
			}
		}
	}
	if err := checkRunOrder(p); err != nil {
		return err
	}
	return checkVerdict(p, c)
}

// patchedRules are the rules whose runs a record's run_order lists.
var patchedRules = []string{verdict.RulePatchPass, verdict.RulePatchInvariant, verdict.RulePatchHeldOut, verdict.RulePatchCanary}

// checkRunOrder refuses a run_order the gate cannot produce: it lists
// exactly the patched rules that hold runs, each once, pass, invariant
// and held-out in their canonical order, the canary anywhere among them.
func checkRunOrder(p *Predicate) error {
	if len(p.RunOrder) == 0 {
		return nil // canonical order: a record made before run_order
	}
	ran := map[string]bool{}
	for _, st := range p.Steps {
		if slices.Contains(patchedRules, st.Rule) && len(st.Runs) > 0 {
			ran[st.Rule] = true
		}
	}
	last := -1
	seen := map[string]bool{}
	for i, r := range p.RunOrder {
		field := fmt.Sprintf("predicate.run_order[%d]", i)
		switch {
		case !slices.Contains(patchedRules, r):
			return errorf(ProblemMalformed, field, "%q is not a patched rule", r)
		case seen[r]:
			return errorf(ProblemMalformed, field, "%q listed twice", r)
		case !ran[r]:
			return errorf(ProblemVerdict, field, "%q, but the record holds no runs of it", r)
		}
		seen[r] = true
		if r == verdict.RulePatchCanary {
			continue
		}
		at := slices.Index(patchedRules, r)
		if at < last {
			return errorf(ProblemVerdict, field, "%q ran after a rule the gate runs after it", r)
		}
		last = at
	}
	for r := range ran {
		if !seen[r] {
			return errorf(ProblemVerdict, "predicate.run_order", "%q holds runs but is not listed", r)
		}
	}
	return nil
}

// canaryRan says the record's canary ran (and so, since the gate stops
// at the first broken rule, ran before the rule that broke, if any).
func canaryRan(p *Predicate) bool { return slices.Contains(p.RunOrder, verdict.RulePatchCanary) }

// notReached says rule, a patched rule, had not run when the canary,
// which ran before it, broke the gate: its place was after the canary's.
func notReached(p *Predicate, rule string) bool {
	return p.Rule != nil && *p.Rule == verdict.RulePatchCanary && canaryRan(p) && !slices.Contains(p.RunOrder, rule)
}

// checkVerdict refuses a verdict that does not follow from the recorded
// exits: a pass needs every command rule to hold; a fail at rule R needs
// every command rule before R to hold, R's own runs (for a command rule)
// to break it the way R says, and nothing after R to have run.
func checkVerdict(p *Predicate, c *card.Card) error {
	judge := func(rule string) (Judgement, []Run) {
		role, _ := commandRole(rule)
		for _, st := range p.Steps {
			if st.Rule == rule {
				return Judge(st.Runs, c.Command(role).ExpectExit), st.Runs
			}
		}
		return NoRuns, nil
	}
	if p.Verdict == verdict.Pass {
		for _, cr := range commandRules {
			if j, runs := judge(cr.rule); j != Holds {
				return &Error{Problem: ProblemVerdict, Field: "predicate.verdict",
					Msg:  fmt.Sprintf("the record says pass, but %s does not hold: %s", cr.rule, describe(j, runs, c.Command(cr.role).ExpectExit)),
					Hint: "a pass follows only from conclusive runs that exit what the card expects"}
			}
		}
		// The exits hold; the static rules must have held too, each one
		// recorded ok (the canary, ok or not run with its reason).
		for _, r := range verdict.Rules {
			i := slices.IndexFunc(p.Steps, func(s Step) bool { return s.Rule == r })
			if i < 0 && r == verdict.RulePatchHeldOut && c.HeldOut == nil {
				continue // a record made before the rule existed, of a card without held-out tests
			}
			if i >= 0 && r == verdict.RulePatchCanary {
				st := p.Steps[i]
				switch {
				case st.Status == verdict.StatusNotRun && st.Reason != "":
					continue
				case st.Status == verdict.StatusOK && canaryHeld(st.Runs):
					continue
				}
				return errorf(ProblemVerdict, "predicate.verdict", "the record says pass, but %s neither failed conclusively nor says why it did not run", r)
			}
			if i < 0 {
				// An older failpass's record: a rule it did not know it
				// did not check, so the pass does not show the diff held it.
				return &Error{Problem: ProblemVerdict, Field: "predicate.steps",
					Msg:  fmt.Sprintf("the record says pass, but has no step for rule %s (made by failpass %s)", r, p.Tool),
					Hint: "a record made before a rule existed does not show the diff held it: gate the candidate again with this failpass and record that"}
			}
			if p.Steps[i].Status != verdict.StatusOK {
				return errorf(ProblemVerdict, "predicate.verdict", "the record says pass, but rule %s is %s", r, p.Steps[i].Status)
			}
		}
		return checkHeldOutVerdict(p, c, -1)
	}
	broken := *p.Rule
	rank := slices.Index(verdict.Rules, broken)
	if broken == verdict.RulePatchFlaky {
		// Flakiness is judged on the patch's command rules.
		for _, r := range []string{verdict.RulePatchPass, verdict.RulePatchInvariant} {
			if j, _ := judge(r); j != Holds {
				rank = slices.Index(verdict.Rules, r)
				break
			}
		}
		if rank < 0 && heldOutDisagree(p, c) {
			rank = slices.Index(verdict.Rules, verdict.RulePatchHeldOut)
		}
		if rank < 0 {
			return errorf(ProblemVerdict, "predicate.rule", "the record says %s, but every patch run agrees", broken)
		}
	}
	if rank < 0 {
		return errorf(ProblemMalformed, "predicate.rule", "unknown rule %q", broken)
	}
	if i := slices.IndexFunc(p.Steps, func(s Step) bool { return s.Rule == verdict.RulePatchCanary }); i >= 0 {
		st := p.Steps[i]
		switch {
		case broken == verdict.RulePatchCanary && len(st.Runs) > 0 && canaryHeld(st.Runs):
			return errorf(ProblemVerdict, "predicate.rule", "the record says %s, but the canary failed conclusively, as it must", broken)
		case broken != verdict.RulePatchCanary && slices.Index(verdict.Rules, verdict.RulePatchCanary) > rank && len(st.Runs) > 0 &&
			!(canaryRan(p) && rank >= slices.Index(verdict.Rules, verdict.RulePatchPass)):
			// The canary ran before the broken rule when it drew an
			// earlier place (run_order); otherwise it came after it.
			return errorf(ProblemVerdict, "predicate.rule", "the record says %s broke, yet %s ran after it", broken, verdict.RulePatchCanary)
		}
	}
	for _, cr := range commandRules {
		j, runs := judge(cr.rule)
		at := slices.Index(verdict.Rules, cr.rule)
		exp := c.Command(cr.role).ExpectExit
		switch {
		case at < rank && j == NoRuns && notReached(p, cr.rule):
			// Its place came after the canary's, which broke the gate.
		case at < rank && j != Holds:
			return errorf(ProblemVerdict, "predicate.rule", "the record says %s broke first, but %s before it does not hold: %s", broken, cr.rule, describe(j, runs, exp))
		case at == rank:
			var want bool
			switch {
			case broken == verdict.RulePatchFlaky:
				want = j == Disagree
			case strings.HasPrefix(cr.rule, "patch."):
				// Patch runs that disagree are patch.flaky, never the rule.
				want = j != Holds && j != Disagree
			default:
				want = j != Holds
			}
			if !want {
				return errorf(ProblemVerdict, "predicate.rule", "the record says %s, but the recorded runs of %s say: %s", broken, cr.rule, describe(j, runs, exp))
			}
		case at > rank && len(runs) > 0:
			return errorf(ProblemVerdict, "predicate.rule", "the record says %s broke, yet %s ran after it", broken, cr.rule)
		}
	}
	return checkHeldOutVerdict(p, c, rank)
}

// checkCanaryStep checks what a patch.canary step may hold: no expected
// exit (a canary must exit non-zero, whatever code), runs of the pass
// command's program, a reason exactly when it did not run. The canary
// runs the pass command as signed now; records of earlier failpass ran it
// retargeted at a test of failpass's, and still verify.
func checkCanaryStep(field string, st Step, c *card.Card) error {
	switch {
	case st.Expected != nil:
		return errorf(ProblemMalformed, field+".expected", "the canary has no expected exit")
	case st.Status == verdict.StatusNotRun && len(st.Runs) > 0:
		return errorf(ProblemMalformed, field, "a canary that did not run has no runs")
	case st.Mutation != "" && st.Mutation != verdict.MutationRan && !strings.HasPrefix(st.Mutation, verdict.MutationNotRun):
		return errorf(ProblemMalformed, field+".mutation", "%q is neither %q nor %q and a reason", st.Mutation, verdict.MutationRan, verdict.MutationNotRun)
	case st.Mutation != "" && len(st.Runs) == 0:
		return errorf(ProblemMalformed, field+".mutation", "a canary that did not run says nothing of its mutation")
	case st.Mutation == verdict.MutationRan && (c.Signoff == nil || !strings.HasPrefix(c.Signoff.Mutation, "sha256:")):
		return errorf(ProblemVerdict, field+".mutation", "the record says the canary ran the oracle's mutation, but the card's sign-off never showed one failing on the reference fix")
	case st.Status == verdict.StatusNotRun && c.Canary != card.CanaryOff && st.Reason == verdict.CanaryOffReason:
		return errorf(ProblemVerdict, field+".reason", "the record says the card turned the canary off, but the card leaves it on")
	case st.Status == verdict.StatusNotRun && c.Canary != card.CanaryOff && st.Detail == "" && testrunner.CanaryArgv(c.Pass.Cmd, c.Pass.Workdir) == nil:
		// The gate records why the canary could not follow a command
		// whose argv it follows (the oracle's source); a record that
		// says only that it did not run hides a rule the card asked for.
		return &Error{Problem: ProblemVerdict, Field: field + ".reason",
			Msg:  fmt.Sprintf("the record says the canary did not run (%s), but the card's pass command %s is one it follows and the card leaves it on", st.Reason, quoteArgv(c.Pass.Cmd)),
			Hint: "gate the candidate again with this failpass and record that"}
	}
	for j, r := range st.Runs {
		if len(r.Argv) == 0 || len(c.Pass.Cmd) == 0 || r.Argv[0] != c.Pass.Cmd[0] {
			return &Error{Problem: ProblemArgv, Field: fmt.Sprintf("%s.runs[%d].argv", field, j),
				Msg:  fmt.Sprintf("%s does not run the card's pass command %s", quoteArgv(r.Argv), quoteArgv(c.Pass.Cmd)),
				Hint: "the record was not made by running this card's commands"}
		}
	}
	return nil
}

// canaryHeld says whether canary runs show a test that must fail failing:
// at least one run, each conclusive and exiting non-zero.
func canaryHeld(runs []Run) bool {
	for _, r := range runs {
		if !r.Conclusive() || r.Exit == 0 {
			return false
		}
	}
	return len(runs) > 0
}

// describe says in words what runs prove against expect.
func describe(j Judgement, runs []Run, expect int) string {
	switch j {
	case Holds:
		return fmt.Sprintf("every run exited %d as expected", expect)
	case NoRuns:
		return "no recorded runs"
	case Inconclusive:
		for i, r := range runs {
			if !r.Conclusive() {
				switch {
				case r.TimedOut:
					return fmt.Sprintf("run %d timed out", i+1)
				case r.Signal != "":
					return fmt.Sprintf("run %d died by signal %s", i+1, r.Signal)
				}
				return fmt.Sprintf("run %d exited %d, which is inconclusive", i+1, r.Exit)
			}
		}
	case Disagree:
		var ex []string
		for _, r := range runs {
			ex = append(ex, fmt.Sprint(r.Exit))
		}
		return "runs disagree (exits " + strings.Join(ex, ", ") + ")"
	case WrongExit:
		return fmt.Sprintf("runs exited %d, the card expects %d", runs[0].Exit, expect)
	}
	return string(j)
}

func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, " ") + "]"
}

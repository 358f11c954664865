package loop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/loopdoc"
	"github.com/failpass/failpass/internal/model"
	"github.com/failpass/failpass/internal/run"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/testrunner"
	"github.com/failpass/failpass/internal/worktree"
)

// step is one validation command ready to run: from the card (argv,
// workdir, expected exit, env, timeout) or from an invocation command
// string split by POSIX word rules.
type step struct {
	cmd     loopdoc.ValidationCommand
	argv    []string
	workdir string
	expect  int
	env     map[string]string
	card    *card.Command // the card's command behind it, nil for others
	timeout time.Duration
	err     error // the command string cannot be split: unavailable
}

func (e *engine) steps() []step {
	out := make([]step, 0, len(e.inv.Validation))
	for _, c := range e.inv.Validation {
		s := step{cmd: c, workdir: ".", timeout: e.cfg.ValidationTimeout}
		if cs, ok := e.cfg.Card.command(c); ok {
			s.argv, s.workdir, s.expect, s.env, s.timeout = cs.Cmd, cs.Workdir, cs.ExpectExit, cs.Env, cs.Timeout
			s.card = &cs
		} else {
			s.argv, s.err = SplitWords(c.Command)
		}
		out = append(out, s)
	}
	return out
}

// stepEnv is the environment of a validation command: a card's command
// gets the card's (Config.CardEnv, as the gate gives it), any other
// Config.Env with the card's signed env added when CardEnv is unset.
func (e *engine) stepEnv(s step) []string {
	if s.card != nil && e.cfg.CardEnv != nil {
		return e.cfg.CardEnv(*s.card)
	}
	env := e.cfg.Env
	for k, v := range s.env {
		env = append(append([]string(nil), env...), k+"="+v)
	}
	return env
}

// runValidation runs every validation command in dir (a worktree of the
// commit under test) and returns one outcome per command, in order, with
// the log path of each. tag names the logs; evidence is set for the
// candidate's own runs, before any attempt.
func (e *engine) runValidation(dir, tag string, evidence bool) ([]loopdoc.ValidationOutcome, map[string]string) {
	var outs []loopdoc.ValidationOutcome
	logs := map[string]string{}
	sess := run.NewSession() // the commands share one sandbox helper
	defer sess.Close()
	policy := e.cfg.Sandbox
	if policy != nil {
		// The commit under test is candidate code: it reads the card's
		// build cache through a private layer and never writes it.
		cc, err := sandbox.OpenCandidateCache(e.repo.CommonDir, policy.CacheDir)
		if err != nil {
			for _, c := range e.inv.Validation {
				outs = append(outs, loopdoc.ValidationOutcome{Name: c.Name, Command: c.Command, Scope: c.Scope,
					Status: "unavailable", Reason: err.Error()})
			}
			return outs, logs
		}
		defer cc.Close()
		p := *policy
		p.Candidate = cc
		policy = &p
	}
	for i, s := range e.steps() {
		o := loopdoc.ValidationOutcome{Name: s.cmd.Name, Command: s.cmd.Command, Scope: s.cmd.Scope}
		if s.err != nil {
			o.Status, o.Reason = "unavailable", s.err.Error()
			outs = append(outs, o)
			continue
		}
		logPath := filepath.Join(e.logDir(), fmt.Sprintf("%s-%d-%s.log", tag, i+1, s.cmd.Scope))
		res, err := run.Run(e.ctx, run.Spec{Argv: s.argv, Root: dir, Workdir: s.workdir, Env: e.stepEnv(s), Timeout: s.timeout, Log: logPath,
			Sandbox: policy, Session: sess, Disk: e.diskCap()})
		logs[s.cmd.Name] = logPath
		switch {
		case err != nil:
			o.Status, o.Reason = "unavailable", err.Error()
		case res.Inconclusive():
			o.Status, o.Reason = "unavailable", res.String()+" (log: "+logPath+")"
		case res.Exit == s.expect:
			o.Status, o.Result = "passed", fmt.Sprintf("%s as expected (log: %s)", res.String(), logPath)
		case evidence && s.card != nil && res.MissingDependency(testrunner.Recognize(s.card.Cmd, s.card.Workdir).Kind, logPath) != "":
			// The candidate's own runs, before any fix, failed for a
			// module or runner the machine lacks: no fixer can mend the
			// machine, so this is missing evidence, never a pass. An
			// attempt's runs are not read this way: there a missing
			// module is as likely the fixer's own import.
			o.Status, o.Reason = "unavailable", fmt.Sprintf("%s: it failed for its environment, not at a test: %s (log: %s)",
				res.String(), res.MissingDependency(testrunner.Recognize(s.card.Cmd, s.card.Workdir).Kind, logPath), logPath)
		default:
			o.Status, o.Result = "failed", fmt.Sprintf("%s, expected exit %d (log: %s)", res.String(), s.expect, logPath)
		}
		outs = append(outs, o)
	}
	return outs, logs
}

// establishEvidence makes sure the validation outcomes are about the
// current head and base: after a commit they are the attempt's own (the
// same tree); otherwise every command runs in a fresh worktree of the
// head. Unavailable evidence blocks: the loop never edits on a guess.
func (e *engine) establishEvidence() error {
	head := e.cp.CurrentHead
	if e.evidenceHead != head || e.evidenceBase != e.cp.ComparisonBase.SHA {
		e.logf("validating %s", short(head))
		w, err := worktree.Add(e.ctx, e.repo, head)
		if err != nil {
			return err
		}
		outs, logs := e.runValidation(w.Dir, "head-"+short(head), true)
		w.Remove(e.ctx)
		tree, err := e.repo.Tree(e.ctx, head)
		if err != nil {
			return err
		}
		e.validatedTrees[head] = tree
		e.cp.ValidationOutcomes = outs
		e.validationLogs = logs
		e.evidenceHead, e.evidenceBase = head, e.cp.ComparisonBase.SHA
	}
	if err := e.save("establish_evidence", "review "+short(head)); err != nil {
		return err
	}
	for _, o := range e.cp.ValidationOutcomes {
		if o.Status == "unavailable" {
			return blocked("validation_unavailable", "validation %q could not run at %s: %s", o.Name, short(head), o.Reason)
		}
	}
	return nil
}

// validationFailures are the failed validation outcomes of the current
// head, as the fixer reads them, with the tail of each log.
func (e *engine) validationFailures() []model.ValidationFailure {
	var out []model.ValidationFailure
	for _, o := range e.cp.ValidationOutcomes {
		if o.Status != "failed" {
			continue
		}
		out = append(out, model.ValidationFailure{Name: o.Name, Command: o.Command, Scope: o.Scope,
			LogExcerpt: tail(e.validationLogs[o.Name], 4096)})
	}
	return out
}

// tail returns the last n bytes of a log file, "" when it cannot be read.
func tail(path string, n int64) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := fi.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, fi.Size()-off)
	f.ReadAt(buf, off)
	return strings.ToValidUTF8(string(buf), "?")
}

// diskCap is the disk cap of a validation command: the card's, when the
// loop has one, else the default.
func (e *engine) diskCap() run.DiskCap {
	if e.cfg.Card == nil {
		return run.DiskCap{}
	}
	return run.CardDisk(e.cfg.Card.Card.DiskCap())
}

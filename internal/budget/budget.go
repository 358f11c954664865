// Package budget owns the card's budget rules: a pure check of a static change set against a budget and the oracle files, returning the first broken rule.
package budget

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/patch"
	"github.com/failpass/failpass/internal/pathglob"
)

// Rule ids, in the order Check applies them (the rule table of README.md).
const (
	RuleBinary  = "budget.binary"
	RuleSymlink = "budget.symlink"
	RuleDeny    = "budget.deny"
	RuleOracle  = "budget.oracle"
	RuleHarness = "budget.harness"
	RuleFiles   = "budget.files"
	RuleLines   = "budget.lines"
)

// Rules lists every budget rule id in check order.
var Rules = []string{RuleBinary, RuleSymlink, RuleDeny, RuleOracle, RuleHarness, RuleFiles, RuleLines}

// Finding is a broken budget rule: its id, a sentence for humans, and the
// path it concerns ("" for the counting rules).
type Finding struct {
	Rule, Reason, Path string
}

// Scope is what a card protects: its effective budget (the signed one
// with every annotation's tightening, card.EffectiveBudget), its oracle
// files (see OracleFiles) and the implicit inputs of its test runners.
// CardScope is its one computation; the gate, the draft and the loop all
// take it from there, so they cannot disagree on what a card protects.
type Scope struct {
	Budget card.Budget
	Oracle []string
	// Harness maps a path the change touches that is an implicit input
	// of the card's test runner to why (see internal/harness); paths
	// that are not have no entry.
	Harness map[string]string
}

// CardScope is c's scope for the card at cardPath (repository-relative,
// "" when outside the repository) over a base tree whose files isFile
// reports: its effective budget and its oracle files. Harness is left
// for the caller, who knows which paths a change touches.
func CardScope(c *card.Card, cardPath string, isFile func(repoPath string) bool) Scope {
	return Scope{
		Budget: c.EffectiveBudget(),
		Oracle: OracleFiles([]card.Command{c.Fail, c.Pass, c.Invariant}, cardPath, isFile),
	}
}

// Check is CheckScope of cs against the scope's own budget.
func (s Scope) Check(cs *patch.ChangeSet) *Finding {
	return CheckScope(cs, s.Budget, s)
}

// IsOracle reports whether p is one of the scope's oracle files.
func (s Scope) IsOracle(p string) bool {
	return slices.Contains(s.Oracle, p)
}

// Denied returns the deny glob of the scope's budget that matches p, as
// budget.deny matches it. A deny glob that does not compile denies every
// path, as budget.deny refuses every change under it.
func (s Scope) Denied(p string) (string, bool) {
	pats, bad := denyPatterns(s.Budget.DenyGlobs)
	if bad != "" {
		return bad, true
	}
	if g, ok := pathglob.MatchAny(pats, p); ok {
		return g.String(), true
	}
	return "", false
}

// Outside says why p lies outside the scope ("" when inside): it is an
// oracle file, or a deny glob matches it.
func (s Scope) Outside(p string) string {
	if s.IsOracle(p) {
		return "is an oracle file of the card"
	}
	if g, ok := s.Denied(p); ok {
		return fmt.Sprintf("is denied by the card's deny glob %q", g)
	}
	return ""
}

// CheckScope returns the first budget rule cs breaks, in the order binary,
// symlink, deny, oracle, harness, files, lines, or nil when the change set is
// within budget. cs should have been through gitpatch.ResolveModes, which
// knows symlinks the patch does not declare; a symlink whose target is
// unknown is refused rather than guessed.
//
// Counting: files are distinct changed files (a rename is one; mode-only
// changes count; see patch.ChangeSet.ChangedFiles); lines are added plus
// deleted lines. Deny globs apply to every path a change touches (both
// sides of renames and copies) and to every symlink target. Oracle files
// (see OracleFiles) may not be touched at all, nor may runner inputs
// (both sides of a rename) unless the budget's allow_harness globs name
// them. A deny glob that does not compile breaks budget.deny: a budget
// that cannot be read denies; an allow glob that does not compile allows
// nothing.
func CheckScope(cs *patch.ChangeSet, b card.Budget, s Scope) *Finding {
	if f := checkBinary(cs); f != nil {
		return f
	}
	targets, f := symlinkTargets(cs)
	if f != nil {
		return f
	}
	if f := checkDeny(cs, b.DenyGlobs, targets); f != nil {
		return f
	}
	if f := checkOracle(cs, s.Oracle); f != nil {
		return f
	}
	if f := checkHarness(cs, b.AllowHarness, s.Harness); f != nil {
		return f
	}
	if n := cs.ChangedFiles(); n > b.MaxFiles {
		return &Finding{Rule: RuleFiles, Reason: fmt.Sprintf("files changed: %d > %d", n, b.MaxFiles)}
	}
	if n := cs.ChangedLines(); n > b.MaxChangedLines {
		return &Finding{Rule: RuleLines, Reason: fmt.Sprintf("lines changed: %d > %d", n, b.MaxChangedLines)}
	}
	return nil
}

func name(f patch.File) string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

func checkBinary(cs *patch.ChangeSet) *Finding {
	for _, f := range cs.Files {
		if f.Binary {
			return &Finding{Rule: RuleBinary, Path: name(f), Reason: fmt.Sprintf("binary change to %s", name(f))}
		}
	}
	return nil
}

// target is a symlink the change set leaves behind and where it points,
// as a repository-relative path.
type target struct {
	link, resolved string
}

// symlinkTargets resolves every symlink the change creates, retargets,
// renames or copies, relative to the symlink's folder, and reports the
// first one that leaves the repository: an absolute target, one that
// climbs above the root, or one into a .git folder.
func symlinkTargets(cs *patch.ChangeSet) ([]target, *Finding) {
	var out []target
	for _, f := range cs.Files {
		if !f.Symlink || f.Status == patch.Deleted {
			continue
		}
		link := f.NewPath
		leaves := func(why string) *Finding {
			return &Finding{Rule: RuleSymlink, Path: link, Reason: fmt.Sprintf("symlink %s -> %s %s", link, f.SymlinkTarget, why)}
		}
		t := f.SymlinkTarget
		switch {
		case t == "":
			return nil, &Finding{Rule: RuleSymlink, Path: link, Reason: fmt.Sprintf("symlink %s has an unknown target", link)}
		case strings.HasPrefix(t, "/"):
			return nil, leaves("is absolute")
		}
		resolved := path.Join(path.Dir(link), t)
		if resolved == ".." || strings.HasPrefix(resolved, "../") {
			return nil, leaves("leaves the repository")
		}
		if resolved != "." {
			if err := patch.CheckPath(resolved); err != nil {
				return nil, leaves(fmt.Sprintf("points where no patch may reach (%v)", err))
			}
		}
		out = append(out, target{link: link, resolved: resolved})
	}
	return out, nil
}

// denyPatterns compiles deny globs; bad is the first that does not
// compile ("" when all do).
func denyPatterns(globs []string) (pats []*pathglob.Pattern, bad string) {
	for _, g := range globs {
		p, err := pathglob.Compile(g)
		if err != nil {
			return nil, g
		}
		pats = append(pats, p)
	}
	return pats, ""
}

func checkDeny(cs *patch.ChangeSet, globs []string, targets []target) *Finding {
	pats, bad := denyPatterns(globs)
	if bad != "" {
		_, err := pathglob.Compile(bad)
		return &Finding{Rule: RuleDeny, Reason: fmt.Sprintf("deny glob %q cannot be used: %v", bad, err)}
	}
	for _, p := range cs.Paths() {
		if g, ok := pathglob.MatchAny(pats, p); ok {
			return &Finding{Rule: RuleDeny, Path: p, Reason: fmt.Sprintf("%s matches deny glob %q", p, g)}
		}
	}
	for _, t := range targets {
		if g, ok := pathglob.MatchAny(pats, t.resolved); ok {
			return &Finding{Rule: RuleDeny, Path: t.link, Reason: fmt.Sprintf("symlink %s points at %s, which matches deny glob %q", t.link, t.resolved, g)}
		}
	}
	return nil
}

func checkOracle(cs *patch.ChangeSet, oracle []string) *Finding {
	set := map[string]bool{}
	for _, o := range oracle {
		set[o] = true
	}
	for _, p := range cs.Paths() {
		if set[p] {
			return &Finding{Rule: RuleOracle, Path: p, Reason: fmt.Sprintf("%s is named by the card (an oracle file) and may not change", p)}
		}
	}
	return nil
}

// HarnessAllowed says whether the scope's budget.allow_harness (the
// effective one: an annotation may have removed entries) names a path,
// as budget.harness reads it. The gate asks it of what a patched run
// adds to the tree too.
func (s Scope) HarnessAllowed() func(p string) bool {
	return harnessAllowed(s.Budget.AllowHarness)
}

// harnessAllowed says whether allow_harness globs, which the card's
// parser checked, name a path.
func harnessAllowed(allow []string) func(p string) bool {
	var pats []*pathglob.Pattern
	for _, g := range allow {
		if p, err := pathglob.Compile(g); err == nil {
			pats = append(pats, p)
		}
	}
	return func(p string) bool {
		_, ok := pathglob.MatchAny(pats, p)
		return ok
	}
}

func checkHarness(cs *patch.ChangeSet, allow []string, inputs map[string]string) *Finding {
	if len(inputs) == 0 {
		return nil
	}
	allowed := harnessAllowed(allow)
	for _, p := range cs.Paths() {
		why, ok := inputs[p]
		if !ok || allowed(p) {
			continue
		}
		return &Finding{Rule: RuleHarness, Path: p, Reason: fmt.Sprintf("%s: %s; a diff may not change the test runner's inputs (a card allows a path with budget.allow_harness)", p, why)}
	}
	return nil
}

// OracleFiles returns the files a card's verdict rests on: every argv
// token of cmds that names a file of the base tree, resolved against the
// command's workdir, plus cardPath (the card's repository-relative path, ""
// when the card lives outside the repository). isFile reports whether the
// base tree has a file (not a folder) at a repository-relative path.
//
// A token is read generously, since an oracle file missed lets a diff
// pass by gutting the test, while a file wrongly protected only refuses a
// diff: a pytest-style "::selector" suffix is stripped, the value of a
// "--flag=value" token is tried too, and a token with spaces (a shell
// script given to sh -c) is also tried word by word. Tokens that are
// absolute or leave the repository are not files of the base tree.
// The result is sorted and deduplicated.
func OracleFiles(cmds []card.Command, cardPath string, isFile func(repoPath string) bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, c := range cmds {
		wd := c.Workdir
		if wd == "" {
			wd = "."
		}
		for _, tok := range c.Cmd {
			for _, cand := range candidates(tok) {
				if cand == "" || strings.HasPrefix(cand, "/") {
					continue
				}
				p := path.Join(wd, cand)
				if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
					continue
				}
				if isFile(p) {
					add(p)
				}
			}
		}
	}
	if cardPath != "" {
		add(path.Clean(cardPath))
	}
	sort.Strings(out)
	return out
}

// candidates lists the paths one argv token may name.
func candidates(tok string) []string {
	words := []string{tok}
	if strings.ContainsAny(tok, " \t\n") {
		words = append(words, strings.Fields(tok)...)
	}
	var out []string
	for _, w := range words {
		out = append(out, stripSelector(w))
		if strings.HasPrefix(w, "-") {
			if _, v, ok := strings.Cut(w, "="); ok {
				out = append(out, stripSelector(v))
			}
		}
	}
	return out
}

// stripSelector drops a pytest node id's "::test_name[param]" suffix.
func stripSelector(s string) string {
	if i := strings.Index(s, "::"); i >= 0 {
		return s[:i]
	}
	return s
}

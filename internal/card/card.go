// Package card owns the contract card: its model, strict YAML decoding and
// validation, canonical signed bytes, digest and effective budget.
package card

import (
	"slices"
	"strconv"
	"time"
)

// MaxSize bounds a card file. A card names three commands and a budget;
// anything near this size is a mistake or an attack, refused as a
// *ParseError wrapping ErrTooLarge.
const MaxSize = 256 << 10

// Defaults for fields a card may leave out.
const (
	DefaultWorkdir = "."
	DefaultTimeout = 10 * time.Minute
)

// Bounds of numeric fields. Budgets fit in 32 bits; durations in
// milliseconds stay below 2^53 so the canonical JSON number (an IEEE double
// under RFC 8785) is exact.
const (
	MaxTimeout    = 24 * time.Hour
	MaxBudget     = 1<<31 - 1
	MaxDurationMS = 1<<53 - 1
)

// Role names one of the card's three commands.
type Role string

// The card's roles, in the order the gate runs them on the base.
const (
	RoleFail      Role = "fail"
	RolePass      Role = "pass"
	RoleInvariant Role = "invariant"
)

// Roles lists every role in card order.
var Roles = []Role{RoleFail, RolePass, RoleInvariant}

// CanaryOff is the one value of the card's canary field: the gate writes
// no canary test for this card (rule patch.canary is not run, and every
// verdict says so).
const CanaryOff = "off"

// Sandbox requirements a card may name in sandbox.require.
var SandboxRequirements = []string{"network", "filesystem", "processes", "resources"}

// Command is one of the card's commands: an argv run in a workdir relative
// to the repository root, with the exit code it must produce.
type Command struct {
	// Workdir is relative, clean, and has no ".." segment; "." is the root.
	Workdir string
	// Cmd is the argv; Cmd[0] is the program. Never run through a shell
	// unless the argv itself names one.
	Cmd        []string
	ExpectExit int
	// Timeout is positive and at most MaxTimeout; zero means DefaultTimeout
	// (Parse always fills it in).
	Timeout time.Duration
	// Env adds variables to the command's environment; nil when none.
	Env map[string]string
}

// Budget is the hard limit on what a patch may change.
type Budget struct {
	MaxFiles        int
	MaxChangedLines int
	// DenyGlobs are pathglob patterns no change may touch.
	DenyGlobs []string
	// AllowHarness are pathglob patterns of implicit runner inputs
	// (budget.harness) a change may touch all the same.
	AllowHarness []string
}

// Sandbox lists the isolation a gate must apply before running the card's
// commands (see SandboxRequirements), and the bounds of what one run of
// them may write to disk.
type Sandbox struct {
	Require []string
	// MaxDisk is sandbox.max_disk in bytes: what one run may write to
	// disk, its worktree and private folders together; 0 means the
	// default (run.DefaultMaxDisk).
	MaxDisk int64
	// MaxDiskFiles is sandbox.max_disk_files: how many files and folders
	// one run may create there; 0 means the default
	// (run.DefaultMaxDiskFiles).
	MaxDiskFiles int64
}

// Disk bounds of a card: the card's sandbox.max_disk and
// sandbox.max_disk_files, within [MinMaxDisk, MaxMaxDisk] and
// [MinMaxDiskFiles, MaxMaxDiskFiles]. The floor keeps a card from
// failing every run by a typo ("8KiB" for "8GiB"); the ceiling from
// naming a bound no disk has.
const (
	MinMaxDisk      = 1 << 20
	MaxMaxDisk      = 1 << 40
	MinMaxDiskFiles = 100
	MaxMaxDiskFiles = 100_000_000
)

// DiskCap is the card's bound on one run's disk writes, bytes and files;
// 0 for what the card leaves at its default.
func (c *Card) DiskCap() (bytes, files int64) {
	if c == nil || c.Sandbox == nil {
		return 0, 0
	}
	return c.Sandbox.MaxDisk, c.Sandbox.MaxDiskFiles
}

// Run is one run recorded at sign-off: the role, its exit code, how long it
// took.
type Run struct {
	Role       string
	Exit       int
	DurationMS int64
}

// Signoff records the decision table's outcome when the card was signed. It
// is part of the signed bytes.
type Signoff struct {
	// At is an RFC 3339 time, kept as written.
	At   string
	Tool string
	// Decision is always "sign": no other row of the table signs.
	Decision string
	// Reference is "sha256:<hex>" of the reference fix `card sign
	// --reference` applied and saw pass; "" when no reference was given.
	Reference string
	// Mutation is what `card sign --reference` found of the mutation
	// canary: "sha256:<hex>" of the oracle test file with its literal
	// expectation changed (testrunner.Mutation), which failed on the
	// reference fix, so the gate may run it in place of the inserted
	// assertion; or MutationNone and why it cannot run. "" for a card
	// signed without a reference, or before failpass knew of it.
	Mutation string
	Runs     []Run
}

// MutationNone starts a Signoff.Mutation that says the mutation canary
// cannot run for this card, and why.
const MutationNone = "none: "

// Signature is one SSHSIG over the card's canonical bytes. Signatures are
// not part of the signed bytes.
type Signature struct {
	Principal string
	Signature string
}

// Tightening is what an annotation does to the budget: it may only lower
// limits, add deny globs and remove allowed runner inputs. Nil limits
// leave the signed limit alone.
type Tightening struct {
	MaxFiles, MaxChangedLines *int
	DenyGlobs                 []string
	// AllowHarness, when not nil, is a subset of the signed
	// budget.allow_harness that replaces it; an empty (non-nil) list
	// allows no runner input. Nil leaves the list alone.
	AllowHarness []string
}

// Annotation is a reviewer's note on a signed card; not part of the signed
// bytes, so it may only tighten.
type Annotation struct {
	By, At, Note string
	Tighten      *Tightening
}

// Card is a decoded, validated contract card. Empty optional fields are
// zero (empty string, nil); Parse never returns empty non-nil slices or
// maps, so two cards that mean the same compare equal.
type Card struct {
	ID, Origin, BaseRef, BaseSHA string
	// Expires is in UTC.
	Expires               *time.Time
	Fail, Pass, Invariant Command
	Budget                Budget
	Sandbox               *Sandbox
	// Prepare fetches the commands' dependencies once per card and base,
	// with network; nil when the card has none.
	Prepare *Prepare
	// Canary is CanaryOff when the card turns the gate's canary off;
	// "" (the default) keeps it on.
	Canary      string
	HeldOut     *HeldOut // nil when the card has no held-out tests
	Signoff     *Signoff
	Signatures  []Signature
	Annotations []Annotation

	// loaded is what Load computed once for the card as read (see
	// loadedForm); nil for a card parsed or built in code.
	loaded *loadedForm
}

// Command returns the command of role r, or the zero Command for an
// unknown role.
func (c *Card) Command(r Role) Command {
	switch r {
	case RoleFail:
		return c.Fail
	case RolePass:
		return c.Pass
	case RoleInvariant:
		return c.Invariant
	}
	return Command{}
}

// EffectiveBudget is the signed budget after every annotation: each limit
// is the minimum of the signed one and every tightening, the deny globs
// are the union (signed first, then in annotation order, without repeats),
// and the allowed runner inputs are the signed ones every annotation that
// names allow_harness keeps (the intersection, in signed order).
func (c *Card) EffectiveBudget() Budget {
	b := Budget{
		MaxFiles:        c.Budget.MaxFiles,
		MaxChangedLines: c.Budget.MaxChangedLines,
		AllowHarness:    slices.Clone(c.Budget.AllowHarness),
	}
	add := func(globs []string) {
		for _, g := range globs {
			if !slices.Contains(b.DenyGlobs, g) {
				b.DenyGlobs = append(b.DenyGlobs, g)
			}
		}
	}
	add(c.Budget.DenyGlobs)
	for _, a := range c.Annotations {
		t := a.Tighten
		if t == nil {
			continue
		}
		if t.MaxFiles != nil && *t.MaxFiles < b.MaxFiles {
			b.MaxFiles = *t.MaxFiles
		}
		if t.MaxChangedLines != nil && *t.MaxChangedLines < b.MaxChangedLines {
			b.MaxChangedLines = *t.MaxChangedLines
		}
		add(t.DenyGlobs)
		if t.AllowHarness != nil {
			b.AllowHarness = slices.DeleteFunc(b.AllowHarness, func(g string) bool { return !slices.Contains(t.AllowHarness, g) })
		}
	}
	if len(b.AllowHarness) == 0 {
		b.AllowHarness = nil
	}
	return b
}

// Warnings lists what is valid but probably wrong with the card, in a fixed
// order. None of them stops a gate.
func (c *Card) Warnings() []string {
	var w []string
	if !slices.Equal(c.Pass.Cmd, c.Fail.Cmd) {
		w = append(w, "the pass command is not the fail command: the same test failing on the base and passing on the patch is the cheapest honest oracle")
	} else if workdir(c.Pass.Workdir) != workdir(c.Fail.Workdir) {
		w = append(w, "the pass command runs in another workdir than the fail command")
	}
	if slices.Equal(c.Invariant.Cmd, c.Pass.Cmd) && workdir(c.Invariant.Workdir) == workdir(c.Pass.Workdir) {
		w = append(w, "the invariant command is the pass command: it checks nothing more; name a nearby suite")
	}
	if c.Fail.ExpectExit == 0 {
		w = append(w, "fail.expect_exit is 0: the fail command should fail on the base")
	}
	if c.Pass.ExpectExit != 0 {
		w = append(w, "pass.expect_exit is not 0: the pass command should pass on the patch")
	}
	if c.Invariant.ExpectExit != 0 {
		w = append(w, "invariant.expect_exit is not 0: the invariant should pass on both trees")
	}
	for _, r := range Roles {
		switch e := c.Command(r).ExpectExit; e {
		case 125, 126, 127:
			w = append(w, string(r)+".expect_exit is "+strconv.Itoa(e)+": exits 125, 126 and 127 are inconclusive and never satisfy a rule")
		}
	}
	if c.HeldOut != nil && c.HeldOut.Digest == "" {
		w = append(w, "held_out has no digest: 'failpass card sign --held-out DIR' writes it; until then no gate can check the held-out folder")
	}
	if len(c.EffectiveBudget().DenyGlobs) == 0 {
		w = append(w, "budget.deny_globs is empty: build, CI and docs files are unprotected")
	}
	return w
}

func workdir(w string) string {
	if w == "" {
		return DefaultWorkdir
	}
	return w
}

func timeout(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultTimeout
	}
	return d
}

// BaseRev is the revision the card pins: base_sha once signed, else
// base_ref.
func (c *Card) BaseRev() string {
	if c.BaseSHA != "" {
		return c.BaseSHA
	}
	return c.BaseRef
}

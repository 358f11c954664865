package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gowebpki/jcs"
)

// The canonical form is JSON with the card's YAML field names. Optional
// fields that are absent are omitted; workdir, timeout and env are always
// present (env as {} when empty), so a card that spells out a default and
// one that leaves it out sign the same bytes.
type canonCard struct {
	ID        string        `json:"id"`
	Origin    string        `json:"origin,omitempty"`
	BaseRef   string        `json:"base_ref,omitempty"`
	BaseSHA   string        `json:"base_sha,omitempty"`
	Expires   string        `json:"expires,omitempty"`
	Fail      canonCommand  `json:"fail"`
	Pass      canonCommand  `json:"pass"`
	Invariant canonCommand  `json:"invariant"`
	Budget    canonBudget   `json:"budget"`
	Sandbox   *canonSandbox `json:"sandbox,omitempty"`
	Prepare   *canonPrepare `json:"prepare,omitempty"`
	Canary    string        `json:"canary,omitempty"`
	HeldOut   *canonHeldOut `json:"held_out,omitempty"`
	Signoff   *canonSignoff `json:"signoff,omitempty"`
}

type canonCommand struct {
	Workdir    string            `json:"workdir"`
	Cmd        []string          `json:"cmd"`
	ExpectExit int               `json:"expect_exit"`
	Timeout    string            `json:"timeout"`
	Env        map[string]string `json:"env"`
}

type canonBudget struct {
	MaxFiles        int      `json:"max_files"`
	MaxChangedLines int      `json:"max_changed_lines"`
	DenyGlobs       []string `json:"deny_globs,omitempty"`
	AllowHarness    []string `json:"allow_harness,omitempty"`
}

type canonSandbox struct {
	Require      []string `json:"require,omitempty"`
	MaxDisk      string   `json:"max_disk,omitempty"`
	MaxDiskFiles int64    `json:"max_disk_files,omitempty"`
}

type canonSignoff struct {
	At        string     `json:"at"`
	Tool      string     `json:"tool"`
	Decision  string     `json:"decision"`
	Reference string     `json:"reference,omitempty"`
	Mutation  string     `json:"mutation,omitempty"`
	Runs      []canonRun `json:"runs"`
}

type canonRun struct {
	Role       string `json:"role"`
	Exit       int    `json:"exit"`
	DurationMS int64  `json:"duration_ms"`
}

// Canonical returns the card's signed bytes: RFC 8785 (JCS) JSON of the
// card without signatures and annotations, so signing and annotating never
// change them. The card is validated first (it must survive Marshal and
// Parse), so only a card failpass would execute has canonical bytes. A
// card Load read and nobody changed since answers from what Load computed
// (see loadedForm).
func (c *Card) Canonical() ([]byte, error) {
	if l := c.unchanged(); l != nil {
		return bytes.Clone(l.canon), nil
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c.canonical()
}

// loadedForm is a loaded card's canonical bytes and digest, computed once
// by Load, so one run that needs them several times (card_digest, the
// card.signature check, the record) parses the card once instead of once
// per use. marshal is the key: a card whose fields changed since Load no
// longer marshals to it, and is validated and canonicalized afresh.
type loadedForm struct {
	marshal, canon []byte
	digest         string
}

// load fills c.loaded for a card Parse has just accepted. It skips
// Validate's Parse of Marshal's output: Parse accepts that output for
// every card it accepts, and reads it back as an equal card (FuzzParse
// holds both), so that second parse could only agree. A card that cannot
// be marshalled or canonicalized is left as it is: Canonical then reports
// why, as it always did.
func (c *Card) load() {
	m, err := Marshal(c)
	if err != nil {
		return
	}
	canon, err := c.canonical()
	if err != nil {
		return
	}
	c.loaded = &loadedForm{marshal: m, canon: canon, digest: digestOf(canon)}
}

// unchanged is c.loaded when c still marshals to the bytes Load saw.
func (c *Card) unchanged() *loadedForm {
	if c.loaded == nil {
		return nil
	}
	if m, err := Marshal(c); err != nil || !bytes.Equal(m, c.loaded.marshal) {
		return nil
	}
	return c.loaded
}

// canonical is Canonical of a card already validated.
func (c *Card) canonical() ([]byte, error) {
	cc := canonCard{
		ID: c.ID, Origin: c.Origin, BaseRef: c.BaseRef, BaseSHA: c.BaseSHA,
		Fail:      canonCmd(c.Fail),
		Pass:      canonCmd(c.Pass),
		Canary:    c.Canary,
		Invariant: canonCmd(c.Invariant),
		Budget: canonBudget{
			MaxFiles:        c.Budget.MaxFiles,
			MaxChangedLines: c.Budget.MaxChangedLines,
			DenyGlobs:       c.Budget.DenyGlobs,
			AllowHarness:    c.Budget.AllowHarness,
		},
	}
	if c.Expires != nil {
		cc.Expires = formatTime(*c.Expires)
	}
	if s := c.Sandbox; s != nil && (len(s.Require) > 0 || s.MaxDisk > 0 || s.MaxDiskFiles > 0) {
		cc.Sandbox = &canonSandbox{Require: s.Require, MaxDiskFiles: s.MaxDiskFiles}
		if s.MaxDisk > 0 {
			cc.Sandbox.MaxDisk = FormatSize(s.MaxDisk)
		}
	}
	cc.Prepare = canonPrep(c.Prepare)
	cc.HeldOut = canonHeld(c.HeldOut)
	if s := c.Signoff; s != nil {
		cs := &canonSignoff{At: s.At, Tool: s.Tool, Decision: s.Decision, Reference: s.Reference, Mutation: s.Mutation, Runs: []canonRun{}}
		for _, r := range s.Runs {
			cs.Runs = append(cs.Runs, canonRun(r))
		}
		cc.Signoff = cs
	}
	raw, err := json.Marshal(cc)
	if err != nil {
		return nil, fmt.Errorf("canonical card: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonical card: %w", err)
	}
	return out, nil
}

func canonCmd(c Command) canonCommand {
	env := map[string]string{}
	for k, v := range c.Env {
		env[k] = v
	}
	return canonCommand{
		Workdir:    workdir(c.Workdir),
		Cmd:        c.Cmd,
		ExpectExit: c.ExpectExit,
		Timeout:    formatDuration(timeout(c.Timeout)),
		Env:        env,
	}
}

// Digest is "sha256:<hex>" of Canonical: the card_digest of gate output.
func (c *Card) Digest() (string, error) {
	if l := c.unchanged(); l != nil {
		return l.digest, nil
	}
	b, err := c.Canonical()
	if err != nil {
		return "", err
	}
	return digestOf(b), nil
}

func digestOf(canon []byte) string {
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Validate reports whether the card, however it was built, is one Parse
// accepts: it parses the card's own Marshal output. Errors name the file
// "<card>" and positions in that output.
func (c *Card) Validate() error {
	b, err := Marshal(c)
	if err != nil {
		return err
	}
	_, err = Parse("<card>", b)
	return err
}

// formatDuration writes a duration the shortest way time.ParseDuration
// reads back: "10m" rather than Go's "10m0s".
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

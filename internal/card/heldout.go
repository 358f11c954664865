package card

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// HeldOutPlaceholder is the argv element of held_out.cmd that expands to
// the copied held-out files' paths, relative to held_out.workdir, one
// argv element each.
const HeldOutPlaceholder = "{held_out}"

// RoleHeldOut names the held-out command's run in signoff.runs (it is not
// one of Roles: a card's three commands).
const RoleHeldOut Role = "held_out"

// HeldOut is the card's held-out tests: files the maintainer keeps
// outside the repository, named by their digest. The gate copies them
// flat into Dest of the patched tree and runs Cmd in Workdir, which must
// exit ExpectExit. Every field is signed.
type HeldOut struct {
	// Digest is "sha256:<64 hex>" of the folder (see package heldout);
	// "" until `card sign --held-out DIR` writes it.
	Digest string
	// Dest and Workdir are clean relative paths inside the repository,
	// like a command's workdir; Workdir defaults to ".".
	Dest, Workdir string
	// Cmd is the argv; an element that is exactly HeldOutPlaceholder
	// expands to the copied files' paths.
	Cmd        []string
	ExpectExit int
	// Timeout is positive and at most MaxTimeout; Parse fills in
	// DefaultTimeout.
	Timeout time.Duration
	// ExpectStdout, when set, names a regular file at the root of the
	// held-out folder (one path element, no "/") holding the exact bytes
	// the held-out command must print on standard output. It is part of
	// the folder and its digest, but never copied into the tree, never a
	// {held_out} path and never shown: the run is judged outside the
	// sandbox, where the candidate cannot reach the expected bytes.
	ExpectStdout string
}

// MaxExpectStdout bounds the expected-output file and the standard output
// the held-out run is compared on.
const MaxExpectStdout = 1 << 20

// Command is the held-out command as a card command, with argv expanded
// for the copied files (paths relative to Workdir).
func (h *HeldOut) Command(paths []string) Command {
	var argv []string
	for _, a := range h.Cmd {
		if a == HeldOutPlaceholder {
			argv = append(argv, paths...)
			continue
		}
		argv = append(argv, a)
	}
	return Command{Workdir: workdir(h.Workdir), Cmd: argv, ExpectExit: h.ExpectExit, Timeout: timeout(h.Timeout)}
}

var heldOutKeys = []string{"digest", "dest", "workdir", "cmd", "expect_exit", "timeout", "expect_stdout"}

var heldOutDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

func (p *parser) heldOut(n *yaml.Node) (*HeldOut, error) {
	const field = "held_out"
	v, _, err := p.mapping(n, field, heldOutKeys)
	if err != nil {
		return nil, err
	}
	h := &HeldOut{Workdir: DefaultWorkdir, Timeout: DefaultTimeout}
	if dn, ok := v["digest"]; ok {
		if h.Digest, err = p.text(dn, join(field, "digest"), false); err != nil {
			return nil, err
		}
		if !heldOutDigest().MatchString(h.Digest) {
			return nil, p.errNode(dn, join(field, "digest"), fmt.Sprintf("%q is not \"sha256:\" and 64 lowercase hex digits", h.Digest),
				"remove the digest and let 'failpass card sign --held-out DIR' write it")
		}
	}
	dn, ok := v["dest"]
	if !ok {
		return nil, p.missing(n, join(field, "dest"), "add dest: the folder of the tree the held-out files are copied into, e.g. \"tests\"")
	}
	if h.Dest, err = p.workdir(dn, join(field, "dest")); err != nil {
		return nil, err
	}
	if wn, ok := v["workdir"]; ok {
		if h.Workdir, err = p.workdir(wn, join(field, "workdir")); err != nil {
			return nil, err
		}
	}
	cn, ok := v["cmd"]
	if !ok {
		return nil, p.missing(n, join(field, "cmd"), "add cmd: [\"program\", \"arg\", ..., \"{held_out}\"]")
	}
	if h.Cmd, err = p.argv(cn, join(field, "cmd")); err != nil {
		return nil, err
	}
	for i, a := range h.Cmd {
		f := index(join(field, "cmd"), i)
		switch {
		case i == 0 && a == HeldOutPlaceholder:
			return nil, p.errNode(cn.Content[i], f, "the program cannot be "+HeldOutPlaceholder,
				"name the test runner first: [\"python3\", \"-m\", \"pytest\", \"{held_out}\"]")
		case a != HeldOutPlaceholder && strings.Contains(a, HeldOutPlaceholder):
			return nil, p.errNode(cn.Content[i], f, HeldOutPlaceholder+" must be a whole argv element",
				"write it as an item of its own; it expands to one item per held-out file")
		}
	}
	en, ok := v["expect_exit"]
	if !ok {
		return nil, p.missing(n, join(field, "expect_exit"), "add expect_exit: the exit code the held-out command must produce on the patched tree (usually 0)")
	}
	e, err := p.integer(en, join(field, "expect_exit"), 0, 255, "an exit code is 0..255")
	if err != nil {
		return nil, err
	}
	h.ExpectExit = int(e)
	if tn, ok := v["timeout"]; ok {
		if h.Timeout, err = p.duration(tn, join(field, "timeout")); err != nil {
			return nil, err
		}
	}
	if sn, ok := v["expect_stdout"]; ok {
		f := join(field, "expect_stdout")
		if h.ExpectStdout, err = p.text(sn, f, false); err != nil {
			return nil, err
		}
		if !expectStdoutName().MatchString(h.ExpectStdout) || h.ExpectStdout == "." || h.ExpectStdout == ".." {
			return nil, p.errNode(sn, f, fmt.Sprintf("%q is not a file name at the root of the held-out folder", h.ExpectStdout),
				"name a file directly in the held-out folder, e.g. \"probe.out\"")
		}
		if h.Dest == "." {
			return nil, p.errNode(dn, join(field, "dest"), "with expect_stdout, dest must be a folder the base does not have, not the tree's top",
				"name a new folder, e.g. \"probe\"")
		}
	}
	return h, nil
}

// duration is a command timeout: a Go duration, positive, at most
// MaxTimeout, in whole milliseconds.
func (p *parser) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := p.text(n, field, false)
	if err != nil {
		return 0, err
	}
	d, perr := time.ParseDuration(s)
	switch {
	case perr != nil:
		return 0, p.errNode(n, field, fmt.Sprintf("%q is not a duration", s), "write a duration such as \"90s\", \"10m\" or \"1h30m\"")
	case d <= 0 || d > MaxTimeout:
		return 0, p.errNode(n, field, fmt.Sprintf("%s is out of range: a timeout is positive and at most %s", s, formatDuration(MaxTimeout)), "write a duration such as \"10m\"")
	case d%time.Millisecond != 0:
		return 0, p.errNode(n, field, fmt.Sprintf("%s is finer than a millisecond", s), "round the timeout to whole milliseconds")
	}
	return d, nil
}

// marshalHeldOut writes the held_out block as Marshal writes the rest.
func marshalHeldOut(b *strings.Builder, h *HeldOut) {
	kv := func(key, val string) { fmt.Fprintf(b, "  %s: %s\n", key, val) }
	b.WriteString("held_out:\n")
	if h.Digest != "" {
		kv("digest", q(h.Digest))
	}
	kv("dest", q(h.Dest))
	kv("workdir", q(workdir(h.Workdir)))
	kv("cmd", list(h.Cmd))
	kv("expect_exit", strconv.Itoa(h.ExpectExit))
	if t := timeout(h.Timeout); t != DefaultTimeout {
		kv("timeout", q(formatDuration(t)))
	}
	if h.ExpectStdout != "" {
		kv("expect_stdout", q(h.ExpectStdout))
	}
}

// expectStdoutName is one path element of the held-out folder: no
// separator, no NUL, not empty.
var expectStdoutName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^/\\\x00]{1,255}$`) })

// canonHeldOut is held_out in the signed bytes: workdir and timeout always
// present, so spelling out a default signs the same bytes.
type canonHeldOut struct {
	Digest     string   `json:"digest,omitempty"`
	Dest       string   `json:"dest"`
	Workdir    string   `json:"workdir"`
	Cmd        []string `json:"cmd"`
	ExpectExit int      `json:"expect_exit"`
	Timeout    string   `json:"timeout"`
	// ExpectStdout is omitted when unset, so a card without it signs
	// the bytes it signed before the field existed.
	ExpectStdout string `json:"expect_stdout,omitempty"`
}

func canonHeld(h *HeldOut) *canonHeldOut {
	if h == nil {
		return nil
	}
	return &canonHeldOut{Digest: h.Digest, Dest: h.Dest, Workdir: workdir(h.Workdir), Cmd: slices.Clone(h.Cmd),
		ExpectExit: h.ExpectExit, Timeout: formatDuration(timeout(h.Timeout)), ExpectStdout: h.ExpectStdout}
}

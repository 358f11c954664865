package card

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/failpass/failpass/internal/pathglob"
)

// ErrTooLarge is wrapped by the *ParseError for a card over MaxSize.
var ErrTooLarge = errors.New("card too large")

// ParseError is a refused card: where (1-based line and column, counted in
// characters), which field (a dotted path such as "fail.cmd[2]"; empty for
// the document as a whole), what is wrong, and the fix.
type ParseError struct {
	File      string
	Line, Col int
	Field     string
	Msg       string
	Hint      string
	err       error
}

// Error reads "FILE:LINE:COL: FIELD: MSG".
func (e *ParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Col)
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Hints returns the fix, for the CLI's hint: lines.
func (e *ParseError) Hints() []string {
	if e.Hint == "" {
		return nil
	}
	return []string{e.Hint}
}

// Unwrap returns ErrTooLarge for an oversized card, nil otherwise.
func (e *ParseError) Unwrap() error { return e.err }

// ReadError is a card file that could not be read at all.
type ReadError struct {
	File string
	Err  error
}

func (e *ReadError) Error() string {
	err := e.Err
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("cannot read card %s: %v", e.File, err)
}

// Unwrap returns the underlying error.
func (e *ReadError) Unwrap() error { return e.Err }

// Hints says how to get a card to read.
func (e *ReadError) Hints() []string {
	return []string{"give the path of a card file; 'failpass card init' writes a template"}
}

// Load reads at most MaxSize+1 bytes of the regular file path and parses
// them; a longer file is refused, never truncated. The card carries its
// canonical bytes and digest from here on: Canonical and Digest of a
// loaded card that nobody changed parse nothing again.
func Load(path string) (*Card, error) {
	_, c, err := Read(path)
	return c, err
}

// Read is Load that also returns the file's bytes, for a command that
// rewrites the card and must check nobody changed it meanwhile. The file
// must be a regular one before it is opened (opening a FIFO would block)
// and still after (one swapped in meanwhile is refused, not read).
func Read(path string) ([]byte, *Card, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, &ReadError{File: path, Err: err}
	} else if !fi.Mode().IsRegular() {
		return nil, nil, &ReadError{File: path, Err: errors.New("not a regular file")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, &ReadError{File: path, Err: err}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, nil, &ReadError{File: path, Err: errors.New("not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, nil, &ReadError{File: path, Err: err}
	}
	c, err := Parse(path, data)
	if err != nil {
		return nil, nil, err
	}
	c.load()
	return data, c, nil
}

// Parse decodes and validates a card. file names the card in errors. A
// refused card returns a nil *Card and a *ParseError.
//
// Decoding walks yaml.v3's node tree instead of unmarshalling, because
// plain decoding accepts what a signed contract must not: it follows
// anchors, aliases and merge keys, drops "~" list items, truncates floats
// into integer fields and ignores a second document.
func Parse(file string, data []byte) (*Card, error) {
	p := &parser{file: file, src: data}
	c, err := p.parse()
	if err != nil {
		return nil, err
	}
	return c, nil
}

type parser struct {
	file string
	src  []byte
}

func (p *parser) errAt(line, col int, field, msg, hint string) *ParseError {
	return &ParseError{File: p.file, Line: line, Col: col, Field: field, Msg: msg, Hint: hint}
}

func (p *parser) errNode(n *yaml.Node, field, msg, hint string) *ParseError {
	return p.errAt(n.Line, n.Column, field, msg, hint)
}

// position turns a byte offset into a 1-based line and character column.
func (p *parser) position(off int) (int, int) {
	before := p.src[:off]
	line := 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

func (p *parser) parse() (*Card, error) {
	if len(p.src) > MaxSize {
		line, col := p.position(MaxSize)
		e := p.errAt(line, col, "", fmt.Sprintf("card is larger than %d bytes", MaxSize),
			"a card names three commands and a budget; keep logs and long notes out of it")
		e.err = ErrTooLarge
		return nil, e
	}
	if err := p.checkBytes(); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(p.src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.errAt(1, 1, "", "the card is empty", "run 'failpass card init' for a template")
		}
		return nil, p.syntaxError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		// The document node sits at its "---" marker.
		line, col := extra.Line, extra.Column
		if line == 0 && len(extra.Content) > 0 {
			line, col = extra.Content[0].Line, extra.Content[0].Column
		}
		return nil, p.errAt(line, col, "", "a second YAML document", "a card file holds exactly one document: remove the \"---\" and what follows")
	} else if !errors.Is(err, io.EOF) {
		return nil, p.syntaxError(err)
	}
	if len(doc.Content) != 1 {
		return nil, p.errAt(1, 1, "", "the card is empty", "run 'failpass card init' for a template")
	}
	return p.card(doc.Content[0])
}

// checkBytes refuses, anywhere in the file including comments, what would
// make the card a human reads differ from the card failpass parses: invalid
// UTF-8, NUL and other control characters (tab, newline and carriage return
// excepted) and format characters such as bidi overrides.
func (p *parser) checkBytes() error {
	for off := 0; off < len(p.src); {
		r, size := utf8.DecodeRune(p.src[off:])
		switch {
		case r == utf8.RuneError && size <= 1:
			line, col := p.position(off)
			return p.errAt(line, col, "", "invalid UTF-8", "save the card as UTF-8")
		case r == '\t' || r == '\n' || r == '\r':
		case pathglob.IsBadRune(r):
			line, col := p.position(off)
			return p.errAt(line, col, "", fmt.Sprintf("the control, format or bidi character %U", r),
				"remove invisible characters; write needed ones as escapes in a double-quoted string (they are refused in commands, paths and globs)")
		}
		off += size
	}
	return nil
}

func (p *parser) syntaxError(err error) error {
	msg := err.Error()
	line := 1
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	// yaml.v3 reports a line but no column for syntax errors.
	return p.errAt(line, 1, "", "YAML syntax: "+msg, "fix the YAML syntax; 'failpass card init' writes a valid template")
}

// plain checks what every node must satisfy: no anchor, no alias, no
// explicit tag (yaml.v3 drops the non-specific tag "!" from the node, so
// the source is checked for it too).
func (p *parser) plain(n *yaml.Node, field string) error {
	if n.Kind == yaml.AliasNode {
		return p.errNode(n, field, "YAML aliases are not allowed", "write the value out in full")
	}
	if n.Anchor != "" {
		return p.errNode(n, field, "YAML anchors are not allowed", "remove &"+n.Anchor+" and write every value out in full")
	}
	if n.Style&yaml.TaggedStyle != 0 || (p.sourceAt(n) == '!' && !startsWithChild(n)) {
		return p.errNode(n, field, "explicit YAML tags are not allowed", "remove the tag; quote strings instead")
	}
	if n.Tag == "!!merge" {
		return p.errNode(n, field, "YAML merge keys (<<) are not allowed", "write every key out in full")
	}
	return nil
}

// startsWithChild reports a block collection that starts where its first
// child does: a "!" there belongs to the child, which is checked itself.
func startsWithChild(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) > 0 &&
		n.Content[0].Line == n.Line && n.Content[0].Column == n.Column
}

func (p *parser) sourceAt(n *yaml.Node) byte {
	if n.Line < 1 || n.Column < 1 {
		return 0
	}
	off := 0
	for l := 1; l < n.Line; l++ {
		i := bytes.IndexByte(p.src[off:], '\n')
		if i < 0 {
			return 0
		}
		off += i + 1
	}
	for c := 1; c < n.Column && off < len(p.src); c++ {
		_, size := utf8.DecodeRune(p.src[off:])
		off += size
	}
	if off < len(p.src) {
		return p.src[off]
	}
	return 0
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	case "!!int":
		return "the integer " + n.Value
	case "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	case "!!null":
		if n.Value == "" {
			return "nothing (null)"
		}
		return "null (" + n.Value + ")"
	case "!!timestamp":
		return "the unquoted timestamp " + n.Value
	}
	return "a " + strings.TrimPrefix(n.Tag, "!!")
}

// mapping checks n is a mapping of plain string keys without repeats or
// unknown names, and returns each key's value and key node.
func (p *parser) mapping(n *yaml.Node, field string, known []string) (map[string]*yaml.Node, map[string]*yaml.Node, error) {
	if err := p.plain(n, field); err != nil {
		return nil, nil, err
	}
	what := field
	if what == "" {
		what = "the card"
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil, p.errNode(n, field, "expected a mapping, got "+describe(n), fmt.Sprintf("write %s as keys and values: %s", what, strings.Join(known, ", ")))
	}
	vals := map[string]*yaml.Node{}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kf := join(field, k.Value)
		if err := p.plain(k, kf); err != nil {
			return nil, nil, err
		}
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			return nil, nil, p.errNode(k, field, "a key must be a plain name, got "+describe(k), "valid keys here: "+strings.Join(known, ", "))
		}
		if prev, ok := keys[k.Value]; ok {
			return nil, nil, p.errNode(k, kf, fmt.Sprintf("duplicate key (first at line %d)", prev.Line), "keep one of the two")
		}
		if !slices.Contains(known, k.Value) {
			hint := "valid keys here: " + strings.Join(known, ", ")
			if s := closest(k.Value, known); s != "" {
				hint = fmt.Sprintf("did you mean %q? %s", s, hint)
			}
			return nil, nil, p.errNode(k, kf, "unknown key", hint)
		}
		keys[k.Value] = k
		vals[k.Value] = v
	}
	return vals, keys, nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

func (p *parser) missing(n *yaml.Node, field, hint string) error {
	return p.errNode(n, field, "missing", hint)
}

// str decodes a string scalar: plain or quoted, never a number, boolean,
// null or timestamp that YAML would resolve to another type.
func (p *parser) str(n *yaml.Node, field string) (string, error) {
	if err := p.plain(n, field); err != nil {
		return "", err
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		hint := "write a double-quoted string"
		if n.Kind == yaml.ScalarNode && n.Value != "" {
			hint = fmt.Sprintf("quote it: %q", n.Value)
		}
		return "", p.errNode(n, field, "expected a string, got "+describe(n), hint)
	}
	return n.Value, nil
}

// text is a non-empty string free of control, format and bidi characters;
// newline (and tab) only where allowNewline says so.
func (p *parser) text(n *yaml.Node, field string, allowNewline bool) (string, error) {
	s, err := p.str(n, field)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", p.errNode(n, field, "must not be empty", "give a value or remove the key")
	}
	for _, r := range s {
		if allowNewline && (r == '\n' || r == '\t') {
			continue
		}
		if pathglob.IsBadRune(r) {
			return "", p.errNode(n, field, fmt.Sprintf("contains the control, format or bidi character %U", r), "remove invisible characters")
		}
	}
	return s, nil
}

var decimal = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`) })

// integer decodes a plain decimal integer in [lo, hi]. Hex, octal, "+1",
// "01", "1_000", floats and quoted numbers are refused: one spelling per
// number keeps the signed card and the executed card the same.
func (p *parser) integer(n *yaml.Node, field string, lo, hi int64, rangeMsg string) (int64, error) {
	if err := p.plain(n, field); err != nil {
		return 0, err
	}
	// yaml.v3 resolves a decimal too large for int64 as a float.
	isInt := n.Tag == "!!int" || (n.Tag == "!!float" && decimal().MatchString(n.Value))
	if n.Kind != yaml.ScalarNode || !isInt || n.Style != 0 {
		hint := "write a whole number in decimal, without quotes"
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && decimal().MatchString(n.Value) {
			hint = "remove the quotes: " + n.Value
		}
		return 0, p.errNode(n, field, "expected an integer, got "+describe(n), hint)
	}
	if !decimal().MatchString(n.Value) {
		return 0, p.errNode(n, field, fmt.Sprintf("integer %s is not in plain decimal", n.Value), "write it in decimal without sign, leading zeros or underscores")
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, p.errNode(n, field, fmt.Sprintf("%s is out of range: %s", n.Value, rangeMsg), fmt.Sprintf("use a value between %d and %d", lo, hi))
	}
	return v, nil
}

// list checks n is a sequence. Null ("key:" with nothing after it) is not
// an empty list: it is usually a mistake.
func (p *parser) list(n *yaml.Node, field, hint string) ([]*yaml.Node, error) {
	if err := p.plain(n, field); err != nil {
		return nil, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errNode(n, field, "expected a list, got "+describe(n), hint)
	}
	for i, item := range n.Content {
		if err := p.plain(item, index(field, i)); err != nil {
			return nil, err
		}
	}
	return n.Content, nil
}

func (p *parser) rfc3339(n *yaml.Node, field string) (string, time.Time, error) {
	if err := p.plain(n, field); err != nil {
		return "", time.Time{}, err
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!timestamp" {
		return "", time.Time{}, p.errNode(n, field, "expected a quoted RFC 3339 string, got "+describe(n), fmt.Sprintf("quote it: %q", n.Value))
	}
	s, err := p.text(n, field, false)
	if err != nil {
		return "", time.Time{}, err
	}
	t, perr := time.Parse(time.RFC3339, s)
	if perr != nil {
		return "", time.Time{}, p.errNode(n, field, fmt.Sprintf("%q is not an RFC 3339 time", s), "write e.g. \"2027-01-01T00:00:00Z\"")
	}
	return s, t, nil
}

// Fields lists the keys a card may hold, at the top and in its blocks,
// for help text: every key the parser accepts, in its order.
func Fields() [][2]string {
	join := func(keys []string) string { return strings.Join(keys, " ") }
	return [][2]string{
		{"card", join(rootKeys)},
		{"fail, pass, invariant", join(commandKeys)},
		{"budget", join(budgetKeys)},
		{"prepare", join(prepareKeys)},
		{"held_out", join(heldOutKeys)},
		{"signoff", join(signoffKeys)},
	}
}

var rootKeys = []string{"id", "origin", "base_ref", "base_sha", "expires", "fail", "pass", "invariant", "budget", "sandbox", "prepare", "canary", "held_out", "signoff", "signatures", "annotations"}

var (
	sha1Hex   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })
	sha256Hex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	envName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

func (p *parser) card(root *yaml.Node) (*Card, error) {
	v, _, err := p.mapping(root, "", rootKeys)
	if err != nil {
		return nil, err
	}
	c := &Card{}
	// Values are decoded in a fixed order, so the first error reported does
	// not depend on how the card orders its keys.
	n, ok := v["id"]
	if !ok {
		return nil, p.missing(root, "id", "add id: \"ISSUE-1234\" naming the issue")
	}
	if c.ID, err = p.text(n, "id", false); err != nil {
		return nil, err
	}
	if n, ok := v["origin"]; ok {
		if c.Origin, err = p.text(n, "origin", false); err != nil {
			return nil, err
		}
	}
	if n, ok := v["base_ref"]; ok {
		if c.BaseRef, err = p.text(n, "base_ref", false); err != nil {
			return nil, err
		}
		if err := p.checkRef(n, c.BaseRef); err != nil {
			return nil, err
		}
	}
	if n, ok := v["base_sha"]; ok {
		if c.BaseSHA, err = p.text(n, "base_sha", false); err != nil {
			return nil, err
		}
		if !sha1Hex().MatchString(c.BaseSHA) && !sha256Hex().MatchString(c.BaseSHA) {
			return nil, p.errNode(n, "base_sha", "must be a full commit id: 40 (or, in a SHA-256 repository, 64) lowercase hex digits",
				"write the output of 'git rev-parse HEAD', or remove base_sha and let 'failpass card sign' fill it in")
		}
	}
	if c.BaseRef == "" && c.BaseSHA == "" {
		return nil, p.missing(root, "base_ref", "add base_ref: \"main\" (required unless base_sha is given)")
	}
	if n, ok := v["expires"]; ok {
		_, t, err := p.rfc3339(n, "expires")
		if err != nil {
			return nil, err
		}
		t = t.UTC()
		c.Expires = &t
	}
	for _, r := range Roles {
		n, ok := v[string(r)]
		if !ok {
			return nil, p.missing(root, string(r), fmt.Sprintf("add a %s block with workdir, cmd and expect_exit", r))
		}
		cmd, err := p.command(n, string(r))
		if err != nil {
			return nil, err
		}
		switch r {
		case RoleFail:
			c.Fail = cmd
		case RolePass:
			c.Pass = cmd
		case RoleInvariant:
			c.Invariant = cmd
		}
	}
	n, ok = v["budget"]
	if !ok {
		return nil, p.missing(root, "budget", "add a budget block with max_files, max_changed_lines and deny_globs")
	}
	if c.Budget, err = p.budget(n); err != nil {
		return nil, err
	}
	if n, ok := v["sandbox"]; ok {
		if c.Sandbox, err = p.sandbox(n); err != nil {
			return nil, err
		}
	}
	if n, ok := v["prepare"]; ok {
		if c.Prepare, err = p.prepare(n); err != nil {
			return nil, err
		}
	}
	if n, ok := v["canary"]; ok {
		if c.Canary, err = p.str(n, "canary"); err != nil {
			return nil, err
		}
		if c.Canary != CanaryOff {
			return nil, p.errNode(n, "canary", fmt.Sprintf("%q is not a canary setting: the only one is \"off\"", c.Canary),
				"write canary: \"off\" to turn the canary test off, or remove the key to keep it on")
		}
	}
	if n, ok := v["held_out"]; ok {
		if c.HeldOut, err = p.heldOut(n); err != nil {
			return nil, err
		}
	}
	if n, ok := v["signoff"]; ok {
		if c.Signoff, err = p.signoff(n); err != nil {
			return nil, err
		}
	}
	if n, ok := v["signatures"]; ok {
		if c.Signatures, err = p.signatures(n); err != nil {
			return nil, err
		}
	}
	if n, ok := v["annotations"]; ok {
		if c.Annotations, err = p.annotations(n, c.Budget); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkRef keeps base_ref something git reads as one revision and never as
// an option or a path: no leading "-", no whitespace, no "..", ":" or "@{".
func (p *parser) checkRef(n *yaml.Node, ref string) error {
	switch {
	case strings.HasPrefix(ref, "-"):
		return p.errNode(n, "base_ref", "must not start with \"-\"", "name a branch, tag or commit, e.g. \"main\"")
	case strings.ContainsAny(ref, " \t\n:\\"):
		return p.errNode(n, "base_ref", "must not contain whitespace, \":\" or \"\\\"", "name a branch, tag or commit, e.g. \"main\"")
	case strings.Contains(ref, ".."), strings.Contains(ref, "@{"):
		return p.errNode(n, "base_ref", "must name one revision, not a range or reflog entry", "name a branch, tag or commit, e.g. \"main\"")
	}
	return nil
}

var commandKeys = []string{"workdir", "cmd", "expect_exit", "timeout", "env"}

func (p *parser) command(n *yaml.Node, field string) (Command, error) {
	v, _, err := p.mapping(n, field, commandKeys)
	if err != nil {
		return Command{}, err
	}
	c := Command{Workdir: DefaultWorkdir, Timeout: DefaultTimeout}
	if w, ok := v["workdir"]; ok {
		if c.Workdir, err = p.workdir(w, join(field, "workdir")); err != nil {
			return Command{}, err
		}
	}
	cn, ok := v["cmd"]
	if !ok {
		return Command{}, p.missing(n, join(field, "cmd"), "add cmd: [\"program\", \"arg\", ...]")
	}
	if c.Cmd, err = p.argv(cn, join(field, "cmd")); err != nil {
		return Command{}, err
	}
	en, ok := v["expect_exit"]
	if !ok {
		return Command{}, p.missing(n, join(field, "expect_exit"), "add expect_exit: the exit code the command must produce (0..255)")
	}
	e, err := p.integer(en, join(field, "expect_exit"), 0, 255, "an exit code is 0..255")
	if err != nil {
		return Command{}, err
	}
	c.ExpectExit = int(e)
	if tn, ok := v["timeout"]; ok {
		f := join(field, "timeout")
		s, err := p.text(tn, f, false)
		if err != nil {
			return Command{}, err
		}
		d, perr := time.ParseDuration(s)
		switch {
		case perr != nil:
			return Command{}, p.errNode(tn, f, fmt.Sprintf("%q is not a duration", s), "write a duration such as \"90s\", \"10m\" or \"1h30m\"")
		case d <= 0 || d > MaxTimeout:
			return Command{}, p.errNode(tn, f, fmt.Sprintf("%s is out of range: a timeout is positive and at most %s", s, formatDuration(MaxTimeout)), "write a duration such as \"10m\"")
		case d%time.Millisecond != 0:
			return Command{}, p.errNode(tn, f, fmt.Sprintf("%s is finer than a millisecond", s), "round the timeout to whole milliseconds")
		}
		c.Timeout = d
	}
	if envn, ok := v["env"]; ok {
		if c.Env, err = p.env(envn, join(field, "env")); err != nil {
			return Command{}, err
		}
	}
	return c, nil
}

// workdir is a clean relative path inside the repository. The runner
// confines it again at run time (symlinks); this is the static half.
func (p *parser) workdir(n *yaml.Node, field string) (string, error) {
	w, err := p.text(n, field, false)
	if err != nil {
		return "", err
	}
	hint := "write a path relative to the repository root, e.g. \".\" or \"tests\""
	switch {
	case strings.HasPrefix(w, "/"):
		return "", p.errNode(n, field, "must be relative to the repository root, not absolute", hint)
	case strings.Contains(w, `\`):
		return "", p.errNode(n, field, "must use \"/\" as separator, not \"\\\"", hint)
	case slices.Contains(strings.Split(w, "/"), ".."):
		return "", p.errNode(n, field, "must not contain \"..\": it would leave the repository", hint)
	}
	if clean := path.Clean(w); clean != w {
		return "", p.errNode(n, field, "is not in clean form", fmt.Sprintf("write %q", clean))
	}
	if first, _, _ := strings.Cut(w, "/"); first == ".git" {
		return "", p.errNode(n, field, "must not be inside .git", hint)
	}
	return w, nil
}

func (p *parser) argv(n *yaml.Node, field string) ([]string, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && p.plain(n, field) == nil {
		return nil, p.errNode(n, field, "must be a list of arguments, not a string",
			fmt.Sprintf("split it into argv items: [%s]", quoteWords(n.Value)))
	}
	items, err := p.list(n, field, "write cmd as a list: [\"program\", \"arg\", ...]")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, p.errNode(n, field, "must not be empty", "name the program and its arguments: [\"program\", \"arg\", ...]")
	}
	argv := make([]string, len(items))
	for i, it := range items {
		f := index(field, i)
		if it.Kind == yaml.ScalarNode && it.Tag == "!!null" {
			return nil, p.errNode(it, f, "argv item is null", "write the argument as a quoted string, or remove the item")
		}
		s, err := p.str(it, f)
		if err != nil {
			return nil, err
		}
		if r, bad := pathglob.BadRune(s); bad {
			return nil, p.errNode(it, f, fmt.Sprintf("contains the control, format or bidi character %U", r), "remove invisible characters; use a script file for multi-line programs")
		}
		argv[i] = s
	}
	if argv[0] == "" {
		return nil, p.errNode(items[0], index(field, 0), "the program name is empty", "name the program to run, e.g. \"python\"")
	}
	return argv, nil
}

func quoteWords(s string) string {
	var q []string
	for _, w := range strings.Fields(s) {
		q = append(q, strconv.Quote(w))
	}
	return strings.Join(q, ", ")
}

func (p *parser) env(n *yaml.Node, field string) (map[string]string, error) {
	if err := p.plain(n, field); err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errNode(n, field, "expected a mapping, got "+describe(n), "write env as NAME: \"value\" pairs")
	}
	env := map[string]string{}
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kf := join(field, k.Value)
		name, err := p.str(k, kf)
		if err != nil {
			return nil, err
		}
		if !envName().MatchString(name) {
			return nil, p.errNode(k, kf, "is not a valid variable name", "use letters, digits and underscores, not starting with a digit")
		}
		if l, ok := lines[name]; ok {
			return nil, p.errNode(k, kf, fmt.Sprintf("duplicate key (first at line %d)", l), "keep one of the two")
		}
		lines[name] = k.Line
		val, err := p.str(v, kf)
		if err != nil {
			return nil, err
		}
		if r, bad := pathglob.BadRune(val); bad {
			return nil, p.errNode(v, kf, fmt.Sprintf("contains the control, format or bidi character %U", r), "remove invisible characters")
		}
		env[name] = val
	}
	if len(env) == 0 {
		return nil, nil
	}
	return env, nil
}

var budgetKeys = []string{"max_files", "max_changed_lines", "deny_globs", "allow_harness"}

func (p *parser) budget(n *yaml.Node) (Budget, error) {
	v, _, err := p.mapping(n, "budget", budgetKeys)
	if err != nil {
		return Budget{}, err
	}
	var b Budget
	mf, ok := v["max_files"]
	if !ok {
		return Budget{}, p.missing(n, "budget.max_files", "add max_files: the files the stack names, plus one")
	}
	if b.MaxFiles, err = p.maxFiles(mf, "budget.max_files"); err != nil {
		return Budget{}, err
	}
	ml, ok := v["max_changed_lines"]
	if !ok {
		return Budget{}, p.missing(n, "budget.max_changed_lines", "add max_changed_lines: the size of the smallest plausible fix")
	}
	if b.MaxChangedLines, err = p.maxLines(ml, "budget.max_changed_lines"); err != nil {
		return Budget{}, err
	}
	if dn, ok := v["deny_globs"]; ok {
		if b.DenyGlobs, err = p.globs(dn, "budget.deny_globs"); err != nil {
			return Budget{}, err
		}
	}
	if an, ok := v["allow_harness"]; ok {
		if b.AllowHarness, err = p.globs(an, "budget.allow_harness"); err != nil {
			return Budget{}, err
		}
	}
	return b, nil
}

func (p *parser) maxFiles(n *yaml.Node, field string) (int, error) {
	v, err := p.integer(n, field, 1, MaxBudget, "max_files is at least 1 (a patch changes a file); negative budgets are refused")
	return int(v), err
}

func (p *parser) maxLines(n *yaml.Node, field string) (int, error) {
	v, err := p.integer(n, field, 0, MaxBudget, "negative budgets are refused")
	return int(v), err
}

func (p *parser) globs(n *yaml.Node, field string) ([]string, error) {
	items, err := p.list(n, field, "write a list of globs: [\"docs/**\", \"*.toml\"]")
	if err != nil {
		return nil, err
	}
	var out []string
	for i, it := range items {
		f := index(field, i)
		s, err := p.str(it, f)
		if err != nil {
			return nil, err
		}
		if _, err := pathglob.Compile(s); err != nil {
			var ge *pathglob.Error
			if errors.As(err, &ge) {
				return nil, p.errNode(it, f, ge.Msg, ge.Hint)
			}
			return nil, p.errNode(it, f, err.Error(), "")
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) sandbox(n *yaml.Node) (*Sandbox, error) {
	v, _, err := p.mapping(n, "sandbox", []string{"require", "max_disk", "max_disk_files"})
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{}
	if rn, ok := v["require"]; ok {
		if sb.Require, err = p.requirements(rn); err != nil {
			return nil, err
		}
	}
	if dn, ok := v["max_disk"]; ok {
		if sb.MaxDisk, err = p.maxDisk(dn); err != nil {
			return nil, err
		}
	}
	if fn, ok := v["max_disk_files"]; ok {
		if sb.MaxDiskFiles, err = p.integer(fn, "sandbox.max_disk_files", MinMaxDiskFiles, MaxMaxDiskFiles,
			"a run that may create fewer files than a build's own cannot pass"); err != nil {
			return nil, err
		}
	}
	if len(sb.Require) == 0 && sb.MaxDisk == 0 && sb.MaxDiskFiles == 0 {
		// No requirement and no bound is the same as no sandbox block.
		return nil, nil
	}
	return sb, nil
}

// maxDisk reads sandbox.max_disk: a quoted size within [MinMaxDisk,
// MaxMaxDisk].
func (p *parser) maxDisk(n *yaml.Node) (int64, error) {
	const field = "sandbox.max_disk"
	const hint = `write a quoted size in KiB, MiB, GiB or TiB, as max_disk: "8GiB"`
	s, err := p.str(n, field)
	if err != nil {
		return 0, err
	}
	v, err := ParseSize(s)
	if err != nil {
		return 0, p.errNode(n, field, err.Error(), hint)
	}
	if v < MinMaxDisk || v > MaxMaxDisk {
		return 0, p.errNode(n, field, fmt.Sprintf("%s is out of range", s),
			fmt.Sprintf("use a size between %s and %s", FormatSize(MinMaxDisk), FormatSize(MaxMaxDisk)))
	}
	return v, nil
}

func (p *parser) requirements(rn *yaml.Node) ([]string, error) {
	items, err := p.list(rn, "sandbox.require", "write a list: [network, filesystem, processes, resources]")
	if err != nil {
		return nil, err
	}
	var req []string
	for i, it := range items {
		f := index("sandbox.require", i)
		s, err := p.str(it, f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(SandboxRequirements, s) {
			return nil, p.errNode(it, f, fmt.Sprintf("unknown requirement %q", s), "use network, filesystem, processes or resources")
		}
		if slices.Contains(req, s) {
			return nil, p.errNode(it, f, fmt.Sprintf("%q is listed twice", s), "keep one")
		}
		req = append(req, s)
	}
	return req, nil
}

var signoffKeys = []string{"at", "tool", "decision", "reference", "mutation", "runs"}

func (p *parser) signoff(n *yaml.Node) (*Signoff, error) {
	v, _, err := p.mapping(n, "signoff", signoffKeys)
	if err != nil {
		return nil, err
	}
	hint := "the signoff block is written by 'failpass card sign'; remove it and sign again"
	s := &Signoff{}
	for _, k := range []string{"at", "tool", "decision", "runs"} {
		if _, ok := v[k]; !ok {
			return nil, p.missing(n, join("signoff", k), hint)
		}
	}
	if s.At, _, err = p.rfc3339(v["at"], "signoff.at"); err != nil {
		return nil, err
	}
	if s.Tool, err = p.text(v["tool"], "signoff.tool", false); err != nil {
		return nil, err
	}
	if s.Decision, err = p.text(v["decision"], "signoff.decision", false); err != nil {
		return nil, err
	}
	if s.Decision != "sign" {
		return nil, p.errNode(v["decision"], "signoff.decision", fmt.Sprintf("%q is not a signing decision", s.Decision), "only \"sign\" is written into a card; "+hint)
	}
	if rn, ok := v["reference"]; ok {
		if s.Reference, err = p.text(rn, "signoff.reference", false); err != nil {
			return nil, err
		}
		if d, ok := strings.CutPrefix(s.Reference, "sha256:"); !ok || !sha256Hex().MatchString(d) {
			return nil, p.errNode(rn, "signoff.reference", fmt.Sprintf("%q is not a digest", s.Reference), "the reference fix's digest is \"sha256:\" and 64 lowercase hex digits; "+hint)
		}
	}
	if mn, ok := v["mutation"]; ok {
		if s.Mutation, err = p.text(mn, "signoff.mutation", false); err != nil {
			return nil, err
		}
		d, isDigest := strings.CutPrefix(s.Mutation, "sha256:")
		why, isNone := strings.CutPrefix(s.Mutation, MutationNone)
		switch {
		case s.Reference == "":
			return nil, p.errNode(mn, "signoff.mutation", "is set without signoff.reference", "only card sign --reference checks the mutation canary; "+hint)
		case isDigest && sha256Hex().MatchString(d), isNone && why != "":
		default:
			return nil, p.errNode(mn, "signoff.mutation", fmt.Sprintf("%q is neither a digest nor %q and a reason", s.Mutation, MutationNone), hint)
		}
	}
	items, err := p.list(v["runs"], "signoff.runs", hint)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, p.errNode(v["runs"], "signoff.runs", "must not be empty", hint)
	}
	for i, it := range items {
		f := index("signoff.runs", i)
		rv, _, err := p.mapping(it, f, []string{"role", "exit", "duration_ms"})
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"role", "exit", "duration_ms"} {
			if _, ok := rv[k]; !ok {
				return nil, p.missing(it, join(f, k), hint)
			}
		}
		var r Run
		if r.Role, err = p.text(rv["role"], join(f, "role"), false); err != nil {
			return nil, err
		}
		if !slices.Contains(Roles, Role(r.Role)) && Role(r.Role) != RoleHeldOut {
			return nil, p.errNode(rv["role"], join(f, "role"), fmt.Sprintf("unknown role %q", r.Role), "use fail, invariant, pass or held_out")
		}
		e, err := p.integer(rv["exit"], join(f, "exit"), 0, 255, "an exit code is 0..255")
		if err != nil {
			return nil, err
		}
		r.Exit = int(e)
		if r.DurationMS, err = p.integer(rv["duration_ms"], join(f, "duration_ms"), 0, MaxDurationMS, "a duration is not negative"); err != nil {
			return nil, err
		}
		s.Runs = append(s.Runs, r)
	}
	return s, nil
}

func (p *parser) signatures(n *yaml.Node) ([]Signature, error) {
	items, err := p.list(n, "signatures", "signatures are written by 'failpass card sign'")
	if err != nil {
		return nil, err
	}
	var out []Signature
	for i, it := range items {
		f := index("signatures", i)
		v, _, err := p.mapping(it, f, []string{"principal", "signature"})
		if err != nil {
			return nil, err
		}
		var s Signature
		pn, ok := v["principal"]
		if !ok {
			return nil, p.missing(it, join(f, "principal"), "signatures are written by 'failpass card sign'")
		}
		if s.Principal, err = p.text(pn, join(f, "principal"), false); err != nil {
			return nil, err
		}
		sn, ok := v["signature"]
		if !ok {
			return nil, p.missing(it, join(f, "signature"), "signatures are written by 'failpass card sign'")
		}
		if s.Signature, err = p.text(sn, join(f, "signature"), true); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) annotations(n *yaml.Node, signed Budget) ([]Annotation, error) {
	items, err := p.list(n, "annotations", "annotations are written by 'failpass card annotate'")
	if err != nil {
		return nil, err
	}
	var out []Annotation
	for i, it := range items {
		f := index("annotations", i)
		v, _, err := p.mapping(it, f, []string{"by", "at", "note", "tighten"})
		if err != nil {
			return nil, err
		}
		var a Annotation
		for _, k := range []string{"by", "at", "note"} {
			if _, ok := v[k]; !ok {
				return nil, p.missing(it, join(f, k), "an annotation says who (by), when (at) and what (note)")
			}
		}
		if a.By, err = p.text(v["by"], join(f, "by"), false); err != nil {
			return nil, err
		}
		if a.At, _, err = p.rfc3339(v["at"], join(f, "at")); err != nil {
			return nil, err
		}
		if a.Note, err = p.text(v["note"], join(f, "note"), true); err != nil {
			return nil, err
		}
		if tn, ok := v["tighten"]; ok {
			if a.Tighten, err = p.tighten(tn, join(f, "tighten"), signed); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// tighten refuses an annotation that would raise a limit: annotations are
// not signed, so they may only make the budget stricter.
func (p *parser) tighten(n *yaml.Node, field string, signed Budget) (*Tightening, error) {
	v, _, err := p.mapping(n, field, budgetKeys)
	if err != nil {
		return nil, err
	}
	t := &Tightening{}
	if mf, ok := v["max_files"]; ok {
		x, err := p.maxFiles(mf, join(field, "max_files"))
		if err != nil {
			return nil, err
		}
		if x > signed.MaxFiles {
			return nil, p.errNode(mf, join(field, "max_files"), fmt.Sprintf("%d raises the signed limit %d", x, signed.MaxFiles), "an annotation may only lower limits; raising one needs a re-signed card")
		}
		t.MaxFiles = &x
	}
	if ml, ok := v["max_changed_lines"]; ok {
		x, err := p.maxLines(ml, join(field, "max_changed_lines"))
		if err != nil {
			return nil, err
		}
		if x > signed.MaxChangedLines {
			return nil, p.errNode(ml, join(field, "max_changed_lines"), fmt.Sprintf("%d raises the signed limit %d", x, signed.MaxChangedLines), "an annotation may only lower limits; raising one needs a re-signed card")
		}
		t.MaxChangedLines = &x
	}
	if dn, ok := v["deny_globs"]; ok {
		if t.DenyGlobs, err = p.globs(dn, join(field, "deny_globs")); err != nil {
			return nil, err
		}
	}
	if an, ok := v["allow_harness"]; ok {
		f := join(field, "allow_harness")
		if t.AllowHarness, err = p.globs(an, f); err != nil {
			return nil, err
		}
		for i, g := range t.AllowHarness {
			if !slices.Contains(signed.AllowHarness, g) {
				return nil, p.errNode(an.Content[i], index(f, i), fmt.Sprintf("%q is not in the signed budget.allow_harness", g),
					"an annotation may only remove entries of allow_harness; allowing another path needs a re-signed card")
			}
		}
		if t.AllowHarness == nil {
			t.AllowHarness = []string{} // allow_harness: [] allows none
		}
	}
	return t, nil
}

// closest returns the known key within edit distance 2 of s, if one.
func closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

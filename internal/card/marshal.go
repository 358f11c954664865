package card

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal writes c as YAML that Parse accepts and reads back as an equal
// card: fixed key order, every string double-quoted (so no value is ever
// read as a number, boolean, null or timestamp), defaults for timeout and
// env left out. Comments of the original file are not kept.
func Marshal(c *Card) ([]byte, error) {
	if c == nil {
		return nil, errors.New("marshal card: nil card")
	}
	var b strings.Builder
	kv := func(indent, key, val string) { fmt.Fprintf(&b, "%s%s: %s\n", indent, key, val) }
	kv("", "id", q(c.ID))
	if c.Origin != "" {
		kv("", "origin", q(c.Origin))
	}
	if c.BaseRef != "" {
		kv("", "base_ref", q(c.BaseRef))
	}
	if c.BaseSHA != "" {
		kv("", "base_sha", q(c.BaseSHA))
	}
	if c.Expires != nil {
		kv("", "expires", q(formatTime(*c.Expires)))
	}
	for _, r := range Roles {
		cmd := c.Command(r)
		b.WriteString(string(r) + ":\n")
		kv("  ", "workdir", q(workdir(cmd.Workdir)))
		kv("  ", "cmd", list(cmd.Cmd))
		kv("  ", "expect_exit", strconv.Itoa(cmd.ExpectExit))
		if t := timeout(cmd.Timeout); t != DefaultTimeout {
			kv("  ", "timeout", q(formatDuration(t)))
		}
		marshalEnv(&b, cmd.Env)
	}
	b.WriteString("budget:\n")
	kv("  ", "max_files", strconv.Itoa(c.Budget.MaxFiles))
	kv("  ", "max_changed_lines", strconv.Itoa(c.Budget.MaxChangedLines))
	if len(c.Budget.DenyGlobs) > 0 {
		kv("  ", "deny_globs", list(c.Budget.DenyGlobs))
	}
	if len(c.Budget.AllowHarness) > 0 {
		kv("  ", "allow_harness", list(c.Budget.AllowHarness))
	}
	if s := c.Sandbox; s != nil && (len(s.Require) > 0 || s.MaxDisk > 0 || s.MaxDiskFiles > 0) {
		b.WriteString("sandbox:\n")
		if len(s.Require) > 0 {
			kv("  ", "require", list(s.Require))
		}
		if s.MaxDisk > 0 {
			kv("  ", "max_disk", q(FormatSize(s.MaxDisk)))
		}
		if s.MaxDiskFiles > 0 {
			kv("  ", "max_disk_files", strconv.FormatInt(s.MaxDiskFiles, 10))
		}
	}
	if c.Prepare != nil {
		marshalPrepare(&b, c.Prepare)
	}
	if c.Canary != "" {
		kv("", "canary", q(c.Canary))
	}
	if c.HeldOut != nil {
		marshalHeldOut(&b, c.HeldOut)
	}
	if s := c.Signoff; s != nil {
		b.WriteString("signoff:\n")
		kv("  ", "at", q(s.At))
		kv("  ", "tool", q(s.Tool))
		kv("  ", "decision", q(s.Decision))
		if s.Reference != "" {
			kv("  ", "reference", q(s.Reference))
		}
		if s.Mutation != "" {
			kv("  ", "mutation", q(s.Mutation))
		}
		if len(s.Runs) == 0 {
			kv("  ", "runs", "[]")
		} else {
			b.WriteString("  runs:\n")
			for _, r := range s.Runs {
				fmt.Fprintf(&b, "    - {role: %s, exit: %d, duration_ms: %d}\n", q(r.Role), r.Exit, r.DurationMS)
			}
		}
	}
	if len(c.Signatures) > 0 {
		b.WriteString("signatures:\n")
		for _, s := range c.Signatures {
			kv("  - ", "principal", q(s.Principal))
			kv("    ", "signature", q(s.Signature))
		}
	}
	if len(c.Annotations) > 0 {
		b.WriteString("annotations:\n")
		for _, a := range c.Annotations {
			kv("  - ", "by", q(a.By))
			kv("    ", "at", q(a.At))
			kv("    ", "note", q(a.Note))
			if t := a.Tighten; t != nil {
				if t.MaxFiles == nil && t.MaxChangedLines == nil && len(t.DenyGlobs) == 0 && t.AllowHarness == nil {
					kv("    ", "tighten", "{}")
					continue
				}
				b.WriteString("    tighten:\n")
				if t.MaxFiles != nil {
					kv("      ", "max_files", strconv.Itoa(*t.MaxFiles))
				}
				if t.MaxChangedLines != nil {
					kv("      ", "max_changed_lines", strconv.Itoa(*t.MaxChangedLines))
				}
				if len(t.DenyGlobs) > 0 {
					kv("      ", "deny_globs", list(t.DenyGlobs))
				}
				if t.AllowHarness != nil {
					kv("      ", "allow_harness", list(t.AllowHarness))
				}
			}
		}
	}
	return []byte(b.String()), nil
}

// q double-quotes s. Go's escapes (\n, \t, \", \\, \xNN, \uNNNN,
// \UNNNNNNNN) are all valid in a YAML double-quoted scalar and mean the same.
// Invalid UTF-8 is written raw instead, so Parse refuses it rather than
// reading Go's byte escapes as different characters.
func q(s string) string {
	if !utf8.ValidString(s) {
		return `"` + s + `"`
	}
	return strconv.Quote(s)
}

func list(items []string) string {
	qs := make([]string, len(items))
	for i, s := range items {
		qs[i] = q(s)
	}
	return "[" + strings.Join(qs, ", ") + "]"
}

// marshalEnv writes a command's env block, keys sorted; nothing when env
// is empty.
func marshalEnv(b *strings.Builder, env map[string]string) {
	if len(env) == 0 {
		return
	}
	b.WriteString("  env:\n")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Fprintf(b, "    %s: %s\n", q(k), q(env[k]))
	}
}

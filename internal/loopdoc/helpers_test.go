package loopdoc

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/jsonschema"
)

// op is one edit of a decoded document: set a path to a JSON literal, or
// delete it (lit == "").
type op struct {
	path string
	lit  string
}

func set(path, lit string) op { return op{path, lit} }
func del(path string) op      { return op{path, ""} }

// j decodes a JSON literal for a test, failing loudly on a typo.
func j(t *testing.T, lit string) any {
	t.Helper()
	v, err := jsonschema.Decode([]byte(lit))
	if err != nil {
		t.Fatalf("bad test literal %s: %v", lit, err)
	}
	return v
}

var segRE = regexp.MustCompile(`[^.\[\]]+|\[\d+\]`)

// apply edits doc in place. Paths are a.b[1].c; the last segment is set or
// deleted, and an index one past the end of a list appends.
func apply(t *testing.T, doc map[string]any, ops ...op) {
	t.Helper()
	for _, o := range ops {
		segs := segRE.FindAllString(o.path, -1)
		var parent any = doc
		for _, s := range segs[:len(segs)-1] {
			parent = step(t, parent, s, o.path)
		}
		last := segs[len(segs)-1]
		if strings.HasPrefix(last, "[") {
			i, _ := strconv.Atoi(last[1 : len(last)-1])
			// A list that grows or shrinks is stored back through its holder.
			l := parent.([]any)
			switch {
			case o.lit == "":
				setAt(t, doc, segs[:len(segs)-1], append(l[:i:i], l[i+1:]...))
			case i == len(l):
				setAt(t, doc, segs[:len(segs)-1], append(l, j(t, o.lit)))
			default:
				l[i] = j(t, o.lit)
			}
			continue
		}
		m := parent.(map[string]any)
		if o.lit == "" {
			if _, ok := m[last]; !ok {
				t.Fatalf("delete %s: no such field", o.path)
			}
			delete(m, last)
		} else {
			m[last] = j(t, o.lit)
		}
	}
}

func step(t *testing.T, v any, seg, path string) any {
	t.Helper()
	if strings.HasPrefix(seg, "[") {
		i, _ := strconv.Atoi(seg[1 : len(seg)-1])
		l, ok := v.([]any)
		if !ok || i >= len(l) {
			t.Fatalf("path %s: no index %d", path, i)
		}
		return l[i]
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("path %s: %s is not in an object", path, seg)
	}
	c, ok := m[seg]
	if !ok {
		t.Fatalf("path %s: no field %s", path, seg)
	}
	return c
}

func setAt(t *testing.T, doc map[string]any, segs []string, v any) {
	t.Helper()
	var parent any = doc
	for _, s := range segs[:len(segs)-1] {
		parent = step(t, parent, s, strings.Join(segs, "."))
	}
	last := segs[len(segs)-1]
	if strings.HasPrefix(last, "[") {
		i, _ := strconv.Atoi(last[1 : len(last)-1])
		parent.([]any)[i] = v
		return
	}
	parent.(map[string]any)[last] = v
}

// example loads testdata/loop/<dir>/<kind>.json as a fresh generic value.
func example(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examplesDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeObject(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func ruleSet(vs []Violation) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v.Rule] {
			seen[v.Rule] = true
			out = append(out, v.Rule)
		}
	}
	sort.Strings(out)
	return out
}

func sameRules(vs []Violation, want []string) bool {
	got := ruleSet(vs)
	w := append([]string(nil), want...)
	sort.Strings(w)
	if len(got) != len(w) {
		return false
	}
	for i := range got {
		if got[i] != w[i] {
			return false
		}
	}
	return true
}

func hasPath(vs []Violation, path string) bool {
	for _, v := range vs {
		if v.Path == path {
			return true
		}
	}
	return false
}

// Example documents the tables mutate.
const (
	invLocal     = "local-commit-converged/invocation"
	invUpdate    = "update-pr-converged/invocation"
	cpLocalCR    = "local-commit-changes-remaining/checkpoint"
	cpUpdate     = "update-pr-converged/checkpoint"
	cpLocal      = "local-commit-converged/checkpoint"
	trLocal      = "local-commit-converged/terminal-result"
	trLocalCR    = "local-commit-changes-remaining/terminal-result"
	trLocalBlock = "local-commit-blocked/terminal-result"
	trUpdate     = "update-pr-converged/terminal-result"
	trUpdateCR   = "update-pr-changes-remaining/terminal-result"
	trUpdateBl   = "update-pr-blocked/terminal-result"
)

// kindOf names the kind of an example by its file name.
func kindOf(name string) Kind {
	return Kind(name[strings.LastIndex(name, "/")+1:])
}

// IsCanonical (tests) says whether data is already in canonical form. A document
// that does not decode is not canonical and its error is returned.
func IsCanonical(data []byte) (bool, error) {
	c, err := Canonical(data)
	if err != nil {
		return false, err
	}
	return bytes.Equal(c, data), nil
}

// ToDocument (tests) turns a Go document (or anything Marshal accepts) into the
// generic value the validators and cross-document checks take, so the loop
// engine can check what it is about to write exactly as a reader will.
func ToDocument(v any) (map[string]any, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return DecodeObject(b)
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

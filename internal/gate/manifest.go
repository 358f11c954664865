package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// ManifestEntry is one candidate of a manifest: a card and a diff, as
// paths relative to the manifest's folder (or absolute).
type ManifestEntry struct {
	Card string `json:"card"`
	Diff string `json:"diff"`
	Line int    `json:"-"` // 1-based line in the manifest
}

// ManifestError is a malformed manifest line.
type ManifestError struct {
	File string
	Line int
	Msg  string
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Hints says how a manifest line looks.
func (e *ManifestError) Hints() []string {
	return []string{`each line is one JSON object: {"card": "cards/issue-1.yml", "diff": "candidates/1.diff"}, paths relative to the manifest's folder`}
}

// MaxManifestEntries bounds a manifest (a shard takes a slice of it).
const MaxManifestEntries = 1 << 20

// ParseManifest reads JSON lines of {"card", "diff"}. Blank lines are
// skipped; unknown fields, missing fields and empty paths are errors. On
// error no entries are returned.
func ParseManifest(file string, data []byte) ([]ManifestEntry, error) {
	var out []ManifestEntry
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(out) >= MaxManifestEntries {
			return nil, &ManifestError{file, n, fmt.Sprintf("more than %d entries", MaxManifestEntries)}
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var e ManifestEntry
		if err := dec.Decode(&e); err != nil {
			return nil, &ManifestError{file, n, "not a manifest entry: " + err.Error()}
		}
		if dec.More() {
			return nil, &ManifestError{file, n, "more than one JSON value on the line"}
		}
		for _, f := range []struct{ name, v string }{{"card", e.Card}, {"diff", e.Diff}} {
			if f.v == "" {
				return nil, &ManifestError{file, n, fmt.Sprintf("field %q is missing or empty", f.name)}
			}
			if strings.ContainsRune(f.v, 0) {
				return nil, &ManifestError{file, n, fmt.Sprintf("field %q holds a NUL byte", f.name)}
			}
		}
		if e.Diff == "-" {
			return nil, &ManifestError{file, n, `"diff": "-" (standard input) is not allowed in a manifest`}
		}
		e.Line = n
		out = append(out, e)
	}
	return out, nil
}

// Resolve makes the entry's paths relative to dir (the manifest's folder)
// unless they are absolute.
func (e ManifestEntry) Resolve(dir string) ManifestEntry {
	if !filepath.IsAbs(e.Card) {
		e.Card = filepath.Join(dir, e.Card)
	}
	if !filepath.IsAbs(e.Diff) {
		e.Diff = filepath.Join(dir, e.Diff)
	}
	return e
}

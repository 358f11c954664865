package gitx

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// TreeEntry is one record of `git ls-tree -z` (with -l, Size is the
// blob's size; -1 otherwise and for a non-blob).
type TreeEntry struct {
	Mode, Type, OID string
	Size            int64
	Name            string
}

// ParseTree reads the output of `git ls-tree -z`, or of `git ls-tree -l
// -z` when long is set. A record of another shape is an error: git wrote
// something failpass does not understand, and guessing would misread a
// path.
func ParseTree(raw []byte, long bool) ([]TreeEntry, error) {
	want := 3
	if long {
		want = 4
	}
	var out []TreeEntry
	for _, rec := range bytes.Split(raw, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != want {
			return nil, fmt.Errorf("git ls-tree: unexpected record %q", rec)
		}
		e := TreeEntry{Mode: f[0], Type: f[1], OID: f[2], Size: -1, Name: name}
		if long {
			if n, err := strconv.ParseInt(f[3], 10, 64); err == nil {
				e.Size = n
			}
		}
		out = append(out, e)
	}
	return out, nil
}

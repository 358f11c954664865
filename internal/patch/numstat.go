package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRawNumstat reads `git diff --raw --numstat -z`: every raw record
// (":oldmode newmode oldoid newoid STATUS\0path\0[path2\0]"), then one
// numstat record per raw record, in the same order
// ("added\tdeleted\tpath\0" or "added\tdeleted\t\0old\0new\0").
// For a symlink it leaves the new object id in SymlinkTarget, for the
// caller to replace with the blob's content.
func ParseRawNumstat(out []byte) (*ChangeSet, error) {
	fields := strings.Split(string(out), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	bad := func(what string) error {
		return fmt.Errorf("git diff --raw --numstat: unexpected output near %q", what)
	}
	next := func() (string, bool) {
		if len(fields) == 0 {
			return "", false
		}
		f := fields[0]
		fields = fields[1:]
		return f, true
	}
	cs := &ChangeSet{}
	var sameContent []bool
	for len(fields) > 0 && strings.HasPrefix(fields[0], ":") {
		meta, _ := next()
		m := strings.Fields(meta[1:])
		if len(m) != 5 {
			return nil, bad(meta)
		}
		var f File
		f.OldMode, f.NewMode = rawMode(m[0]), rawMode(m[1])
		p1, ok := next()
		if !ok {
			return nil, bad(meta)
		}
		switch m[4][0] {
		case 'A':
			f.Status, f.NewPath = Added, p1
		case 'D':
			f.Status, f.OldPath = Deleted, p1
		case 'M', 'T':
			f.Status, f.OldPath, f.NewPath = Modified, p1, p1
		case 'R', 'C':
			p2, ok := next()
			if !ok {
				return nil, bad(meta)
			}
			f.Status, f.OldPath, f.NewPath = Renamed, p1, p2
			if m[4][0] == 'C' {
				f.Status = Copied
			}
		default:
			return nil, bad(meta)
		}
		switch {
		case f.Status == Deleted:
			f.Symlink = f.OldMode == ModeSymlink
		case f.NewMode == ModeSymlink:
			f.Symlink, f.SymlinkTarget = true, m[3]
		}
		f.Submodule = f.OldMode == ModeGitlink || f.NewMode == ModeGitlink
		cs.Files = append(cs.Files, f)
		sameContent = append(sameContent, m[2] == m[3])
	}
	for i := range cs.Files {
		rec, ok := next()
		if !ok {
			return nil, bad("end of output")
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return nil, bad(rec)
		}
		f := &cs.Files[i]
		if parts[2] == "" { // a rename or copy: both names follow
			if _, ok := next(); !ok {
				return nil, bad(rec)
			}
			if _, ok := next(); !ok {
				return nil, bad(rec)
			}
		}
		if parts[0] == "-" && parts[1] == "-" {
			// A pure rename or mode change of a binary file changes no
			// content; only a content change is a binary change.
			f.Binary = !sameContent[i]
			continue
		}
		a, err1 := strconv.Atoi(parts[0])
		d, err2 := strconv.Atoi(parts[1])
		if err1 != nil || err2 != nil {
			return nil, bad(rec)
		}
		f.Added, f.Deleted = a, d
	}
	if len(fields) != 0 {
		return nil, bad(fields[0])
	}
	return cs, nil
}

func rawMode(m string) string {
	if strings.Trim(m, "0") == "" {
		return ""
	}
	return m
}

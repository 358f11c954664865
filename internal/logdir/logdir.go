// Package logdir makes the folder one failpass run keeps its command logs
// in: under <git common dir>/failpass/logs, private to the user (a test's
// output holds whatever it read), named by when it began and what made
// it, and bounded, the least recently written beyond Keep removed when a
// new one is made. Gates, batches, loops, card sign and card from-commit
// all make theirs here.
package logdir

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Keep is how many runs' log folders stay in a repository's log folder.
const Keep = 50

// Mode is every log folder's mode: its owner's alone.
const Mode = 0o700

// New makes a fresh log folder for one run in the logs folder of state
// (a repository's <git common dir>/failpass, gitx.Repo.StateDir) and
// removes the least recently written beyond Keep. kind names what made
// it ("sign", "from-commit"); "" is a gate's.
func New(state, kind string) (string, error) {
	root := filepath.Join(state, "logs")
	if err := os.MkdirAll(root, Mode); err != nil {
		return "", fmt.Errorf("log folder: %w", err)
	}
	var b [4]byte
	rand.Read(b[:])
	name := time.Now().UTC().Format("20060102T150405.000000000") + "-" + hex.EncodeToString(b[:])
	if kind != "" {
		name = kind + "-" + name
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, Mode); err != nil {
		return "", fmt.Errorf("log folder: %w", err)
	}
	prune(root, dir)
	return dir, nil
}

// prune removes the folders of root beyond Keep, least recently written
// first, never keep.
func prune(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type folder struct {
		path string
		mod  time.Time
	}
	var all []folder
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && p != keep {
			all = append(all, folder{p, fi.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.Before(all[j].mod) })
	for len(all) >= Keep {
		os.RemoveAll(all[0].path)
		all = all[1:]
	}
}

package gate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/failpass/failpass/internal/atomicfile"
	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
	"github.com/failpass/failpass/internal/scratch"
	"github.com/failpass/failpass/internal/version"
)

// Key is everything a cached result is known to depend on. Two runs with
// equal keys would run the same commands on the same bytes with the same
// programs; anything the key cannot see is listed in docs/batch.md.
type Key struct {
	Kind       string   `json:"kind"` // "base" or "verdict"
	Tool       string   `json:"tool"` // failpass version and binary digest
	Base       string   `json:"base"` // base commit (its tree is fixed by it)
	CardDigest string   `json:"card_digest"`
	DiffDigest string   `json:"diff_digest,omitempty"`
	Sandbox    []string `json:"sandbox"`
	Env        string   `json:"env"` // EnvFingerprint
	Repeat     int      `json:"repeat"`
	// HeldOut is how the card's held-out tests were given (heldOutKey:
	// the mode and the folder's digest); "" for a card without them. A verdict
	// gated one way is never served to a gate that asked the other.
	HeldOut string `json:"held_out,omitempty"`
}

// ID is the entry's address: SHA-256 over the key's canonical JSON
// (encoding/json writes struct fields in declaration order).
func (k Key) ID() string {
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ToolID names the running failpass: its version and the SHA-256 of its
// own executable, so a rebuilt development binary (whose version names no
// exact build) never reuses results of the one before.
func ToolID() string {
	if d := version.Executable(); d != "" {
		return version.String() + " " + d
	}
	return version.String()
}

var digestMemo sync.Map // path+size+mtime -> digest

// fileDigest hashes a file's content, once per process for an unchanged
// file.
func fileDigest(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	memo := fmt.Sprintf("%s\x00%d\x00%d", p, fi.Size(), fi.ModTime().UnixNano())
	if d, ok := digestMemo.Load(memo); ok {
		return d.(string), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	d := "sha256:" + hex.EncodeToString(h.Sum(nil))
	digestMemo.Store(memo, d)
	return d, nil
}

// EnvFingerprint digests what the card's commands will run with outside
// the repository: for each command, the environment it gets and the
// program argv[0] resolves to (content digest, and its #! interpreter's),
// plus the digest of every absolute-path argument that is a file, the OS,
// architecture and kernel release. A program named by a relative path
// lives in the tree, which the base commit and the diff already pin.
func EnvFingerprint(c *card.Card, envOf func(card.Command) []string) (string, error) {
	type cmdFP struct {
		Role    string            `json:"role"`
		Env     []string          `json:"env"`
		Program string            `json:"program"`
		Files   map[string]string `json:"files"`
	}
	var fp struct {
		OS, Arch, Kernel string
		Cmds             []cmdFP
	}
	fp.OS, fp.Arch = runtime.GOOS, runtime.GOARCH
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		fp.Kernel = strings.TrimSpace(string(b))
	}
	for _, role := range []card.Role{card.RoleFail, card.RolePass, card.RoleInvariant} {
		cmd := c.Command(role)
		var env []string
		if envOf != nil {
			env = envOf(cmd)
		}
		env = append([]string(nil), env...)
		sort.Strings(env)
		cf := cmdFP{Role: string(role), Env: env, Files: map[string]string{}}
		if len(cmd.Cmd) > 0 {
			name := cmd.Cmd[0]
			switch {
			case filepath.IsAbs(name):
				cf.Program = name
			case strings.ContainsRune(name, '/'):
				cf.Program = "tree:" + name
			default:
				cf.Program = lookPath(name, env)
			}
			if filepath.IsAbs(cf.Program) {
				hashProgram(cf.Program, cf.Files)
			}
			for _, a := range cmd.Cmd[1:] {
				if filepath.IsAbs(a) {
					if fi, err := os.Stat(a); err == nil && fi.Mode().IsRegular() {
						cf.Files[a], _ = fileDigest(a)
					}
				}
			}
		}
		fp.Cmds = append(fp.Cmds, cf)
	}
	b, err := json.Marshal(fp)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// hashProgram records the digest of program (symlinks resolved) and of
// its #! interpreter, one level deep.
func hashProgram(p string, into map[string]string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		into[p] = "missing"
		return
	}
	d, err := fileDigest(real)
	if err != nil {
		into[p] = "unreadable"
		return
	}
	into[p] = real + " " + d
	f, err := os.Open(real)
	if err != nil {
		return
	}
	defer f.Close()
	line, _ := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if rest, ok := strings.CutPrefix(line, "#!"); ok {
		if fields := strings.Fields(rest); len(fields) > 0 && filepath.IsAbs(fields[0]) {
			if r, err := filepath.EvalSymlinks(fields[0]); err == nil {
				if d, err := fileDigest(r); err == nil {
					into[fields[0]] = r + " " + d
				}
			}
			// `#!/usr/bin/env python3`: the program env finds.
			if filepath.Base(fields[0]) == "env" && len(fields) > 1 && !strings.HasPrefix(fields[1], "-") {
				if q := lookPath(fields[1], nil); filepath.IsAbs(q) {
					if r, err := filepath.EvalSymlinks(q); err == nil {
						if d, err := fileDigest(r); err == nil {
							into[q] = r + " " + d
						}
					}
				}
			}
		}
	}
}

// lookPath resolves a bare program name as run does: on the PATH of the
// command's own environment, absolute entries only.
func lookPath(name string, env []string) string {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return "notfound:" + name
}

// cacheFormat names the cache's layout and the meaning of its keys. v2:
// verdicts are stored only when every run was contained by the
// filesystem layer, and candidates never write the build caches; every
// v1 entry may have been computed with a poisoned build cache, so none is
// read (RemoveOldCaches deletes them).
const cacheFormat = "v2"

// RemoveOldCaches removes the caches no current failpass reads: verdict
// caches of older formats, build caches of older formats, and the
// private folders of candidates whose process is gone. It returns the
// paths removed.
func RemoveOldCaches(repo *gitx.Repo) ([]string, error) {
	var removed []string
	var errs []error
	root := repo.StateDir("cache", "gate")
	entries, err := os.ReadDir(root)
	if _, theirs := scratch.OwnedByAnother(root, filepath.Dir(root)); err != nil && !errors.Is(err, fs.ErrNotExist) && !theirs {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == cacheFormat {
			continue
		}
		p := filepath.Join(root, e.Name())
		if _, theirs := scratch.OwnedByAnother(p); theirs {
			continue // gc says so through prune's scan
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	more, err := sandbox.RemoveOldCaches(repo.CommonDir)
	return append(removed, more...), errors.Join(append(errs, err)...)
}

// Cache defaults: a few thousand candidates' verdicts, a few megabytes.
const (
	DefaultMaxEntries = 20000
	DefaultMaxBytes   = 256 << 20
)

// Cache is a content-addressed store of base results and verdicts under
// <git common dir>/failpass/cache/gate. Entries are written atomically
// (temporary file, fsync, rename), so concurrent failpass processes see
// either a whole entry or none; an entry that does not parse or whose
// stored key differs from the one asked for is removed and treated as a
// miss. Pruning keeps the most recently used entries within bounds.
type Cache struct {
	dir        string
	lock       string
	MaxEntries int
	MaxBytes   int64

	puts           atomic.Int64
	hits, misses   atomic.Int64
	corruptRemoved atomic.Int64
}

// OpenCache returns the repository's cache.
func OpenCache(repo *gitx.Repo) *Cache {
	return &Cache{
		dir:        repo.StateDir("cache", "gate", cacheFormat),
		lock:       repo.StateDir("locks", "cache.lock"),
		MaxEntries: DefaultMaxEntries, MaxBytes: DefaultMaxBytes,
	}
}

type cacheEntry struct {
	Key   Key             `json:"key"`
	Value json.RawMessage `json:"value"`
}

func (c *Cache) path(id string) string { return filepath.Join(c.dir, id[:2], id+".json") }

// Get loads the value stored under k into v and reports whether it was
// there and intact.
func (c *Cache) Get(k Key, v any) bool {
	p := c.path(k.ID())
	b, err := os.ReadFile(p)
	if err != nil {
		c.misses.Add(1)
		return false
	}
	var e cacheEntry
	want, _ := json.Marshal(k)
	ok := json.Unmarshal(b, &e) == nil
	if ok {
		got, _ := json.Marshal(e.Key)
		ok = bytes.Equal(got, want) && json.Unmarshal(e.Value, v) == nil
	}
	if !ok {
		// Never trusted, and removed so the next run does not read it again.
		os.Remove(p)
		c.corruptRemoved.Add(1)
		c.misses.Add(1)
		return false
	}
	now := time.Now()
	os.Chtimes(p, now, now) // recency for pruning
	c.hits.Add(1)
	return true
}

// Put stores v under k.
func (c *Cache) Put(k Key, v any) error {
	val, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, err := json.Marshal(cacheEntry{Key: k, Value: val})
	if err != nil {
		return err
	}
	p := c.path(k.ID())
	if err := writeAtomic(p, b); err != nil {
		return err
	}
	if c.puts.Add(1)%256 == 0 {
		c.Prune()
	}
	return nil
}

// writeAtomic writes an entry with the one atomic writer: a reader sees
// a whole entry or none; a failed write (a full disk) leaves nothing, and
// a crash at most a temporary file (".<name>.tmp-*"), which Prune takes
// once it is old.
func writeAtomic(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(p, b, 0o600)
}

// tmpMaxAge is how old a temporary file must be before pruning takes it
// for what a crashed writer left (a live writer renames within seconds).
const tmpMaxAge = time.Hour

// Prune removes the least recently used entries beyond MaxEntries or
// MaxBytes (down to 90% of each, so pruning is not paid on every put) and
// temporary files crashed writers left. Processes prune one at a time.
func (c *Cache) Prune() error {
	if err := os.MkdirAll(filepath.Dir(c.lock), 0o700); err != nil {
		return err
	}
	unlock, err := lockedfile.MutexAt(c.lock).Lock()
	if err != nil {
		return err
	}
	defer unlock()
	type ent struct {
		path string
		size int64
		mod  time.Time
	}
	var ents []ent
	var total int64
	err = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if strings.Contains(d.Name(), ".tmp") {
			if time.Since(fi.ModTime()) > tmpMaxAge {
				os.Remove(p)
			}
			return nil
		}
		ents = append(ents, ent{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(ents) <= c.MaxEntries && total <= c.MaxBytes {
		return nil
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].mod.Before(ents[j].mod) })
	maxN, maxB := c.MaxEntries*9/10, c.MaxBytes*9/10
	n := len(ents)
	for _, e := range ents {
		if n <= maxN && total <= maxB {
			break
		}
		if os.Remove(e.path) == nil {
			n--
			total -= e.size
		}
	}
	return nil
}

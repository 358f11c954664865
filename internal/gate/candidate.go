package gate

import (
	"path/filepath"
	"runtime"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

// Candidate is the side every run of candidate code runs on: a gate's
// patched runs, and `card sign --reference`'s runs of a reference fix.
// None of them may write where another run reads. Contained, the runs see
// the card's build cache read-only through a private upper layer;
// uncontained (--sandbox=off), the go command sees the user's own build
// cache the same way, through failpass as its cache program, and every
// other tool gets an empty private cache (Env). The gate opens one per
// run that must not meet what an earlier run of the candidate wrote
// (gateRun.afresh), the others share it.
type Candidate struct {
	// Policy contains the candidate's runs: the base side's policy with
	// the candidate's layer; nil with the sandbox off.
	Policy *sandbox.Policy
	cache  *sandbox.CandidateCache
	// CacheKind is how uncontained runs see a build cache
	// (sandbox.CacheGoLayered or CachePrivateCold); "" when contained,
	// where each run's sandbox says.
	CacheKind string
}

// EnterCandidate opens a candidate's side next to the base side's policy
// base (nil: the sandbox is off). It takes the card build cache's lock
// shared, so it waits for a base run writing it. Close it once every run
// of the candidate has ended.
func EnterCandidate(repo *gitx.Repo, base *sandbox.Policy) (*Candidate, error) {
	lower := ""
	if base != nil {
		lower = base.CacheDir
	}
	cc, err := sandbox.OpenCandidateCache(repo.CommonDir, lower)
	if err != nil {
		return nil, err
	}
	c := &Candidate{cache: cc}
	if base != nil {
		p := *base
		p.Candidate = cc
		c.Policy = &p
		return c, nil
	}
	c.CacheKind = sandbox.CachePrivateCold
	if _, layered := cc.GoEnv(""); layered {
		c.CacheKind = sandbox.CacheGoLayered
	}
	return c, nil
}

// DiskAreas are the candidate's private folders, which count towards
// each of its runs' disk cap (run.DiskCap): its cache layers and, with
// the sandbox off, the private caches Env points the tools at.
func (c *Candidate) DiskAreas() []string { return c.cache.Areas() }

// Over makes c's runs read what the runs of prebuilt (the same
// candidate's prebuild side) compiled, beneath their own layer
// (sandbox.CandidateCache.Over). prebuilt must outlive c.
func (c *Candidate) Over(prebuilt *Candidate) { c.cache.Over(prebuilt.cache) }

// Uncontained says the candidate's runs have no sandbox (--sandbox=off),
// and so no overlay of a build cache: Env gives them private caches.
func (c *Candidate) Uncontained() bool { return c.Policy == nil }

// Env is env for a run of the candidate. Uncontained, it points the
// build caches at the candidate's own folder and keeps Python from
// writing bytecode at all, or reading it from a prefix folder: the
// user's GOCACHE and caches are never written through the tools'
// defaults (a shared cache would let the candidate plant what a later
// run reads), though the candidate's own code, uncontained, can still
// write anywhere the user can. The go command reads the user's GOCACHE
// (userGoCache) beneath the candidate's own layer (CandidateCache.GoEnv),
// so it does not build the standard library again each run; other tools
// start cold. Contained, the sandbox does all that and env is returned
// as it is.
func (c *Candidate) Env(env []string) []string {
	if !c.Uncontained() {
		return env
	}
	dir := c.cache.Cold()
	goEnv, _ := c.cache.GoEnv(userGoCache(env))
	set := map[string]string{
		"XDG_CACHE_HOME":          filepath.Join(dir, "xdg"),
		"PIP_CACHE_DIR":           filepath.Join(dir, "pip"),
		"npm_config_cache":        filepath.Join(dir, "npm"),
		"PYTHONDONTWRITEBYTECODE": "1",
	}
	keys := []string{"XDG_CACHE_HOME", "PIP_CACHE_DIR", "npm_config_cache", "PYTHONDONTWRITEBYTECODE"}
	for _, kv := range goEnv {
		k, v, _ := strings.Cut(kv, "=")
		set[k] = v
		keys = append(keys, k)
	}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok && k != "PYTHONPYCACHEPREFIX" && k != "GOCACHEPROG" {
			out = append(out, kv)
		}
	}
	for _, k := range keys {
		out = append(out, k+"="+set[k])
	}
	return out
}

// userGoCache is the GOCACHE folder the go command uses in env: its
// GOCACHE when that is a folder, else the default beneath the user's
// cache folder; "" when there is none. (A GOCACHE set with `go env -w`
// is not seen; the candidate's go command then starts cold.)
func userGoCache(env []string) string {
	get := func(k string) string {
		v := ""
		for _, kv := range env {
			if x, ok := strings.CutPrefix(kv, k+"="); ok {
				v = x
			}
		}
		return v
	}
	if v := get("GOCACHE"); v != "" {
		if filepath.IsAbs(v) {
			return v
		}
		return "" // "off", or nothing the go command would use
	}
	// os.UserCacheDir's rules, on the run's environment.
	if runtime.GOOS == "darwin" {
		if h := get("HOME"); filepath.IsAbs(h) {
			return filepath.Join(h, "Library", "Caches", "go-build")
		}
		return ""
	}
	if x := get("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "go-build")
	}
	if h := get("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "go-build")
	}
	return ""
}

// Close removes the candidate's private folder and releases the lock.
func (c *Candidate) Close() { c.cache.Close() }

// Keep moves the layer c's runs wrote to dir (a sandbox.KeptDir), with
// note, in place of removing it (sandbox.CandidateCache.Keep): only for a
// prebuild's side, which nothing but the go toolchain wrote.
func (c *Candidate) Keep(dir string, note []byte) error { return c.cache.Keep(dir, note) }

// openKept is the prebuild's side a gate kept in dir (Keep), to lie
// beneath the patched runs' sides (Over) in place of a prebuild, and
// its note; ok false when there is none.
func openKept(dir string) (c *Candidate, note []byte, ok bool) {
	cc, note, ok := sandbox.OpenKept(dir)
	if !ok {
		return nil, nil, false
	}
	return &Candidate{cache: cc}, note, true
}

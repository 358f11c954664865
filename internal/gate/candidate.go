package gate

import (
	"path/filepath"
	"strings"

	"github.com/failpass/failpass/internal/gitx"
	"github.com/failpass/failpass/internal/sandbox"
)

// Candidate is the side every run of candidate code runs on: a gate's
// patched runs, and `card sign --reference`'s runs of a reference fix.
// None of them may write where another run reads. Contained, the runs see
// the card's build cache read-only through a private upper layer;
// uncontained (--sandbox=off), they get an empty private cache (Env).
// The gate opens one per run that must not meet what an earlier run of
// the candidate wrote (gateRun.afresh), the others share it.
type Candidate struct {
	// Policy contains the candidate's runs: the base side's policy with
	// the candidate's layer; nil with the sandbox off.
	Policy *sandbox.Policy
	cache  *sandbox.CandidateCache
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
	}
	return c, nil
}

// Cold says the candidate's runs start from an empty private cache (the
// sandbox is off).
func (c *Candidate) Cold() bool { return c.Policy == nil }

// Env is env for a run of the candidate. Uncontained, it points the
// build caches at the candidate's own folder (cold: an empty cache costs
// a first build, a shared one would let the candidate plant what a later
// run reads) and keeps Python from writing bytecode at all, or reading it
// from a prefix folder: the user's GOCACHE and caches are never written
// through the tools' defaults, though the candidate's own code,
// uncontained, can still write anywhere the user can. Contained, the
// sandbox does that and env is returned as it is.
func (c *Candidate) Env(env []string) []string {
	if !c.Cold() {
		return env
	}
	dir := c.cache.Cold()
	set := map[string]string{
		"GOCACHE":                 filepath.Join(dir, "go-build"),
		"XDG_CACHE_HOME":          filepath.Join(dir, "xdg"),
		"PIP_CACHE_DIR":           filepath.Join(dir, "pip"),
		"npm_config_cache":        filepath.Join(dir, "npm"),
		"PYTHONDONTWRITEBYTECODE": "1",
	}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok && k != "PYTHONPYCACHEPREFIX" {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"GOCACHE", "XDG_CACHE_HOME", "PIP_CACHE_DIR", "npm_config_cache", "PYTHONDONTWRITEBYTECODE"} {
		out = append(out, k+"="+set[k])
	}
	return out
}

// Close removes the candidate's private folder and releases the lock.
func (c *Candidate) Close() { c.cache.Close() }

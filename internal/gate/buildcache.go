package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/card"
)

// buildCacheFormat is part of every build cache key: a new format gives
// every card a new, empty cache (sandbox.BuildCacheDir's folder changes
// with it too).
const buildCacheFormat = "failpass-build-cache-v2"

// BuildCacheKey names the build cache a card's base runs fill: what a
// build depends on, and nothing a signature changes. It covers the base
// commit, each of the card's commands (argv, workdir, and the exact
// environment envOf gives it: the allow-list of the tool's environment
// plus the card's signed env, less what changes no build: see
// buildCacheIgnores) and, when the card has one, its prepare
// command. It leaves out the card's digest, signatures, signoff, expected
// exits, timeouts and budget, so the first gate after `card sign` finds
// the cache the signing runs filled. This is the one place the key is
// computed: the gate, `card sign` and the loop all call it.
func BuildCacheKey(c *card.Card, base string, envOf func(card.Command) []string) string {
	type command struct {
		Role    string   `json:"role"`
		Argv    []string `json:"argv"`
		Workdir string   `json:"workdir"`
		Env     []string `json:"env"`
	}
	k := struct {
		Format   string    `json:"format"`
		Base     string    `json:"base"`
		Commands []command `json:"commands"`
	}{Format: buildCacheFormat, Base: base}
	// A card's prepare command joins the list as role "prepare": what
	// it fetched is what the builds read. A card without one keeps the
	// key it had before cards could have one.
	roles := []card.Role{card.RoleFail, card.RolePass, card.RoleInvariant}
	if c.Prepare != nil {
		roles = append(roles, card.RolePrepare)
	}
	for _, role := range roles {
		cmd := c.Command(role)
		if role == card.RolePrepare {
			cmd = c.Prepare.Command()
		}
		var env []string
		if envOf != nil {
			for _, kv := range envOf(cmd) {
				k, _, _ := strings.Cut(kv, "=")
				if !buildCacheIgnores[k] {
					env = append(env, kv)
				}
			}
		}
		slices.Sort(env)
		wd := cmd.Workdir
		if wd == "" {
			wd = "."
		}
		k.Commands = append(k.Commands, command{Role: string(role), Argv: cmd.Cmd, Workdir: wd, Env: env})
	}
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// buildCacheIgnores are variables of a command's environment that change
// no build: the sandbox replaces TMPDIR and GOCACHE with its own, and
// TERM differs between a terminal and CI (a maintainer signs at one, a
// pipeline gates at the other).
var buildCacheIgnores = map[string]bool{"TERM": true, "TMPDIR": true, "GOCACHE": true}

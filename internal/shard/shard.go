// Package shard is the K/N slice of a batch's candidates one job gates
// (`gate --shard K/N`), as Kubernetes' indexed Jobs count completions.
package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is K of N: the slice of candidates whose index i has i mod N == K.
// Round robin keeps shards balanced when a manifest lists one card's
// candidates together.
type Shard struct{ K, N int }

// Max bounds N.
const Max = 100000

// Parse parses "K/N" with 0 <= K < N (K as Kubernetes' completion
// index counts).
func Parse(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %q: want K/N, as 0/4", s)
	}
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	switch {
	case err1 != nil || err2 != nil || strings.HasPrefix(ks, "+") || strings.HasPrefix(ns, "+"):
		return Shard{}, fmt.Errorf("--shard %q: K and N are decimal numbers", s)
	case n < 1 || n > Max:
		return Shard{}, fmt.Errorf("--shard %q: N must be 1 to %d", s, Max)
	case k < 0 || k >= n:
		return Shard{}, fmt.Errorf("--shard %q: K must be 0 to N-1 (%d)", s, n-1)
	}
	return Shard{K: k, N: n}, nil
}

// String is the canonical "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Has reports whether candidate index i belongs to the shard.
func (s Shard) Has(i int) bool { return s.N <= 1 || i%s.N == s.K }

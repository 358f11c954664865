package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/failpass/failpass/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// The probe costs a helper process in fresh namespaces, and every failpass
// process that contains a command needs one. What it finds cannot change
// while the kernel, the binary, the user and the process's cgroups stay
// the same, so it is kept in the user's cache folder under a key made of
// exactly those, and reused.
//
// A cached answer is safe to be wrong: it only decides which layers the
// helper is asked to apply, and the helper fails closed on any it cannot
// (the command does not start; the run is inconclusive, and the cache is
// forgotten). The report is always derived from the facts, never stored,
// so an edited cache file cannot claim a layer the helper was not asked
// for.

// probeFacts is what a probe learned, and all a cached probe keeps.
type probeFacts struct {
	Key        string            `json:"key"`
	Namespaces bool              `json:"namespaces"`
	Have       []string          `json:"have"`
	Why        map[string]string `json:"why,omitempty"`
	Landlock   int               `json:"landlock_abi"`
}

// probeCacheVersion changes whenever what a probe checks changes.
const probeCacheVersion = "1"

// probeCachePath is the file of cached probes; "" when there is no
// cache folder.
func probeCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Join(dir, "failpass", "sandbox-probe.json")
}

// probeCacheEntries bounds the file: one entry per failpass binary (and
// boot, user, cgroups) that probed lately, newest first, so two builds
// used in turn do not evict each other and old builds fall off the end.
const probeCacheEntries = 8

// probeKey names this kernel boot, this binary, this user, this
// process's cgroups and seccomp state, and the kernel's settings for
// user namespaces. "" when one of the first four cannot be read: then
// nothing is cached. A process under a seccomp filter that denies
// namespaces (a container's profile, a sandbox around failpass) probes
// less than one without, and neither answer may stand for the other.
func probeKey() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	var exe unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &exe); err != nil {
		return ""
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d:%d\x00%d:%d:%d:%d.%d\x00%s", probeCacheVersion, boot,
		unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), os.Geteuid(), os.Getegid(),
		exe.Dev, exe.Ino, exe.Size, exe.Mtim.Sec, exe.Mtim.Nsec, cg)
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(line, "Seccomp") || strings.HasPrefix(line, "NoNewPrivs") {
				fmt.Fprintf(h, "\x00%s", line)
			}
		}
	}
	for _, f := range []string{"/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns"} {
		b, _ := os.ReadFile(f) // absent on many kernels: "" then
		fmt.Fprintf(h, "\x00%s", b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readProbes reads the cache file; a missing, oversized or damaged file
// is an empty cache.
func readProbes(path string) []probeFacts {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 256<<10 {
		return nil
	}
	var fs []probeFacts
	if json.Unmarshal(b, &fs) != nil {
		return nil
	}
	return fs
}

// writeProbes replaces the cache file with fs, at most probeCacheEntries
// of them; a cache that cannot be written is no error. Two processes
// writing at once lose one entry at worst: one more probe later.
func writeProbes(path string, fs []probeFacts) {
	if len(fs) > probeCacheEntries {
		fs = fs[:probeCacheEntries]
	}
	b, err := json.Marshal(fs)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	atomicfile.Write(path, b, 0o600)
}

// cachedProbe returns the facts cached under key, if any.
func cachedProbe(path, key string) (probeFacts, bool) {
	if key == "" {
		return probeFacts{}, false
	}
	for _, f := range readProbes(path) {
		if f.Key == key {
			return f, true
		}
	}
	return probeFacts{}, false
}

// keepProbe caches f first in the file.
func keepProbe(path string, f probeFacts) {
	if path == "" || f.Key == "" {
		return
	}
	fs := []probeFacts{f}
	for _, o := range readProbes(path) {
		if o.Key != f.Key {
			fs = append(fs, o)
		}
	}
	writeProbes(path, fs)
}

// forgetProbe drops this binary's cached probe: a helper failed to apply
// a layer the cache said this machine has.
func forgetProbe() {
	path, key := probeCachePath(), probeKey()
	if path == "" {
		return
	}
	old := readProbes(path)
	fs := slices.DeleteFunc(slices.Clone(old), func(f probeFacts) bool { return f.Key == key })
	if len(fs) != len(old) {
		writeProbes(path, fs)
	}
}

// factsOf is what c says about this machine.
func factsOf(c *caps, key string) probeFacts {
	return probeFacts{Key: key, Namespaces: c.namespaces, Have: c.report.Features, Why: c.report.Why, Landlock: c.report.Landlock}
}

// capsFrom rebuilds what the probe found from f. The cgroup folders are
// found again (they are this process's own), never read from the cache.
func capsFrom(f probeFacts) *caps {
	have := map[Feature]bool{}
	for _, s := range f.Have {
		have[Feature(s)] = true
	}
	why := map[Feature]string{}
	for k, v := range f.Why {
		why[Feature(k)] = v
	}
	c := &caps{namespaces: f.Namespaces, userns: os.Geteuid() != 0}
	c.landlock = have[FeatLandlock] && f.Landlock >= minLandlockABI
	if !c.landlock {
		have[FeatLandlock] = false
		f.Landlock = 0
	}
	if have[FeatCgroupMem] || have[FeatCgroupPids] {
		mem, pids, err := findCgroupParents()
		if err != nil {
			mem, pids = nil, nil
		}
		if have[FeatCgroupMem] && mem != nil {
			c.mem = mem
		} else if have[FeatCgroupMem] {
			have[FeatCgroupMem], why[FeatCgroupMem] = false, "memory cgroup no longer found"
		}
		if have[FeatCgroupPids] && pids != nil {
			c.pids = pids
		} else if have[FeatCgroupPids] {
			have[FeatCgroupPids], why[FeatCgroupPids] = false, "pids cgroup no longer found"
		}
	}
	if !c.namespaces {
		for f := range have {
			if slices.Contains(namespaceFeatures, f) {
				have[f] = false
			}
		}
	}
	c.report = reportFor(have, why, f.Landlock)
	return c
}

package gocache

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goEnv is a go command's environment for the tests: the machine's,
// minus every setting of the build cache, with modules off the network.
func goEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOCACHE", "GOCACHEPROG", "GOFLAGS", "GOTOOLCHAIN":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod"}, extra...)...)
}

func goCmd(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// module writes a module with a library and its test; add is its body.
func module(t *testing.T, add string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.org/m\n\ngo 1.21\n",
		"m.go":        "package m\n\nimport \"strings\"\n\nfunc Add(a, b int) int { " + add + " }\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n",
		"m_test.go":   "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(Add(1, 2))\n\t}\n}\n",
		"cmd/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.org/m\"\n)\n\nfunc main() { fmt.Println(m.Add(1, 2)) }\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lowerCache is a build cache that holds base's build and test: a
// snapshot, in hard links, of the machine's own GOCACHE once warmed with
// them, so the test builds no standard library (a cold one costs 20 s
// here). Where links cannot be made, it fills a cache of its own.
func lowerCache(t *testing.T, base string) string {
	t.Helper()
	lower := filepath.Join(t.TempDir(), "lower")
	fill := func(cache string) {
		env := goEnv(t)
		if cache != "" {
			env = goEnv(t, "GOCACHE="+cache)
		}
		for _, args := range [][]string{{"build", "./..."}, {"test", "-c", "-o", os.DevNull, "."}} {
			if out, err := goCmd(t, base, env, args...); err != nil {
				t.Fatalf("filling the lower cache: %v\n%s", err, out)
			}
		}
	}
	fill("")
	own, err := exec.Command("go", "env", "GOCACHE").Output()
	if err == nil {
		src := strings.TrimSpace(string(own))
		err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(lower, rel), 0o755)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			return os.Link(p, filepath.Join(lower, rel))
		})
	}
	if err != nil {
		t.Logf("no snapshot of the machine's build cache (%v): filling one, cold", err)
		os.RemoveAll(lower)
		fill(lower)
	}
	return lower
}

// tree is every file under dir with its size. (Not its modification
// time: the go command renews the time of the entries it uses in its
// own cache, whose files lowerCache links.)
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			m[p] = fmt.Sprint(fi.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLayers drives the real go command through the test binary as its
// cache program: a build of a changed module reads the standard library
// from the lower cache (nothing of it compiles again), writes what it
// compiles to the upper folder, and leaves the lower cache exactly as it
// was; a run that fails is not cached, and one that passes is, in upper.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real go command through the cache program: the full suite runs it")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := module(t, "return a + b - 1")
	lower := lowerCache(t, base)
	before := tree(t, lower)

	fixed := module(t, "return a + b")
	upper := filepath.Join(t.TempDir(), "upper")
	private := filepath.Join(t.TempDir(), "private")
	env, ok := Env(self, []string{lower}, upper, private)
	if !ok {
		t.Fatalf("Env(%q) could not name the program", self)
	}
	out, err := goCmd(t, fixed, goEnv(t, env...), "build", "-x", "./...")
	if err != nil {
		t.Fatalf("go build through the cache program: %v\n%s", err, out)
	}
	if !strings.Contains(out, "-p example.org/m ") {
		t.Errorf("the changed package did not compile: -x shows no compile of example.org/m:\n%s", out)
	}
	for _, pkg := range []string{"runtime", "fmt", "strings"} {
		if strings.Contains(out, "-p "+pkg+" ") {
			t.Errorf("%s compiled again: the lower cache was not read", pkg)
		}
	}
	if len(tree(t, upper)) == 0 {
		t.Error("nothing was written to the upper folder")
	}
	if after := tree(t, lower); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the lower cache changed: %d files before, %d after", len(before), len(after))
	}

	// go test's result cache goes through the program too.
	for i, want := range []string{"ok ", "(cached)"} {
		out, err := goCmd(t, fixed, goEnv(t, env...), "test", ".")
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("go test, run %d: %v, want %q in:\n%s", i+1, err, want, out)
		}
	}
	if out, err := goCmd(t, base, goEnv(t, env...), "test", "."); err == nil || strings.Contains(out, "(cached)") {
		t.Fatalf("the bug's test passed or was cached: %v\n%s", err, out)
	}
	if after := tree(t, lower); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the lower cache changed under go test")
	}
}

// putReq is the wire form of a put request and its body.
func putReq(id int64, action, body []byte) string {
	out := sha256.Sum256(body)
	req, _ := json.Marshal(map[string]any{"ID": id, "Command": "put", "ActionID": action, "OutputID": out[:], "BodySize": len(body)})
	s := string(req) + "\n"
	if len(body) > 0 {
		s += `"` + base64.StdEncoding.EncodeToString(body) + `"` + "\n"
	}
	return s
}

func getReq(id int64, action []byte) string {
	req, _ := json.Marshal(map[string]any{"ID": id, "Command": "get", "ActionID": action})
	return string(req) + "\n"
}

func responses(t *testing.T, out string) []response {
	t.Helper()
	var rs []response
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r response
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("response is not JSON: %v\n%s", err, out)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestServe speaks the protocol by hand: a put is read back from upper,
// larger than any buffer; a lower entry whose output is short or whose
// action file is malformed is a miss; lower is never written.
func TestServe(t *testing.T) {
	lower, upper := t.TempDir(), filepath.Join(t.TempDir(), "upper")
	act := func(b byte) []byte { return bytes.Repeat([]byte{b}, hashSize) }
	big := bytes.Repeat([]byte("0123456789abcdef\"\n"), 40000) // 720 KB, quotes and newlines in it

	// Lower: one good entry, one whose output is short, one malformed.
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good, short := []byte("lower body"), []byte("x")
	for _, e := range []struct {
		action []byte
		body   []byte
		size   int
	}{{act(1), good, len(good)}, {act(2), short, 5}} {
		out := sha256.Sum256(e.body)
		write(fileName(lower, out[:], "d"), string(e.body))
		write(fileName(lower, e.action, "a"), fmt.Sprintf("v1 %x %x %20d %20d\n", e.action, out[:], e.size, 1))
	}
	write(fileName(lower, act(3), "a"), "v1 nonsense\n")
	before := tree(t, lower)

	in := putReq(1, act(9), big) + putReq(2, act(8), nil) + getReq(3, act(9)) + getReq(4, act(1)) + getReq(5, act(2)) +
		getReq(6, act(3)) + getReq(7, act(4)) + getReq(8, []byte("short")) + `{"ID":9,"Command":"frob"}` + "\n" +
		`{"ID":11,"Command":"put","ActionID":"AAAA","BodySize":3}` + "\n\n\"YWJj\"\n" + getReq(12, act(9)) + `{"ID":10,"Command":"close"}` + "\n"
	var out bytes.Buffer
	if err := Serve(strings.NewReader(in), &out, []string{lower}, upper); err != nil {
		t.Fatal(err)
	}
	rs := responses(t, out.String())
	if len(rs) != 13 || len(rs[0].KnownCommands) != 3 {
		t.Fatalf("responses: %+v", rs)
	}
	byID := map[int64]response{}
	for _, r := range rs[1:] {
		byID[r.ID] = r
	}
	if r := byID[1]; r.Err != "" || r.DiskPath == "" {
		t.Fatalf("put: %+v", r)
	}
	if b, err := os.ReadFile(byID[1].DiskPath); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("put's file: %v, %d bytes, want %d", err, len(b), len(big))
	}
	if r := byID[2]; r.Err != "" || r.DiskPath == "" {
		t.Errorf("empty put: %+v", r)
	}
	if r := byID[3]; r.Miss || r.Size != int64(len(big)) || r.DiskPath != byID[1].DiskPath {
		t.Errorf("get of the put: %+v", r)
	}
	if r := byID[4]; r.Miss || r.Size != int64(len(good)) || !strings.HasPrefix(r.DiskPath, lower) {
		t.Errorf("get from lower: %+v", r)
	}
	for _, id := range []int64{5, 6, 7, 8} {
		if r := byID[id]; !r.Miss {
			t.Errorf("get %d: %+v, want a miss", id, r)
		}
	}
	if r := byID[9]; r.Err == "" {
		t.Errorf("unknown command: %+v", r)
	}
	// A put with bad ids is refused, its body read past: the next
	// request is answered.
	if r := byID[11]; r.Err == "" || r.DiskPath != "" {
		t.Errorf("put with bad ids: %+v", r)
	}
	if r := byID[12]; r.Miss || r.DiskPath != byID[1].DiskPath {
		t.Errorf("the get after a refused put: %+v", r)
	}
	if after := tree(t, lower); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("Serve wrote the lower cache")
	}
}

// TestServeLowers: a get looks in upper, then in each lower in the order
// given: a prebuild's layer above the card's cache hides the card's entry
// for the same action, and an action only the card's cache has is found
// there.
func TestServeLowers(t *testing.T) {
	middle, card, upper := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "upper")
	act := func(b byte) []byte { return bytes.Repeat([]byte{b}, hashSize) }
	entry := func(dir string, action []byte, body string) {
		out := sha256.Sum256([]byte(body))
		for p, s := range map[string]string{
			fileName(dir, out[:], "d"): body,
			fileName(dir, action, "a"): fmt.Sprintf("v1 %x %x %20d %20d\n", action, out[:], len(body), 1),
		} {
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entry(middle, act(1), "from the prebuild")
	entry(card, act(1), "from the card")
	entry(card, act(2), "only the card")
	in := getReq(1, act(1)) + getReq(2, act(2)) + getReq(3, act(3)) + `{"ID":4,"Command":"close"}` + "\n"
	var out bytes.Buffer
	if err := Serve(strings.NewReader(in), &out, []string{"", middle, card}, upper); err != nil {
		t.Fatal(err)
	}
	byID := map[int64]response{}
	for _, r := range responses(t, out.String())[1:] {
		byID[r.ID] = r
	}
	if r := byID[1]; r.Miss || !strings.HasPrefix(r.DiskPath, middle) {
		t.Errorf("get of an action both lowers hold: %+v, want the first lower's", r)
	}
	if r := byID[2]; r.Miss || !strings.HasPrefix(r.DiskPath, card) {
		t.Errorf("get of an action only the second lower holds: %+v", r)
	}
	if r := byID[3]; !r.Miss {
		t.Errorf("get of an action no layer holds: %+v, want a miss", r)
	}
}

// TestServeHostile: input that breaks the protocol ends Serve with an
// error, never a panic or a file outside upper.
func TestServeHostile(t *testing.T) {
	for name, in := range map[string]string{
		"not json":        "hello\n",
		"body not quoted": `{"ID":1,"Command":"put","ActionID":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `","OutputID":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `","BodySize":3}` + "\nabc\n",
		"body cut off":    `{"ID":1,"Command":"put","ActionID":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `","OutputID":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `","BodySize":3}` + "\n\"YWJ",
		"body wrong size": `{"ID":1,"Command":"put","ActionID":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `","OutputID":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `","BodySize":9}` + "\n\"YWJj\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			upper := filepath.Join(dir, "upper")
			var out bytes.Buffer
			if err := Serve(strings.NewReader(in), &out, nil, upper); err == nil {
				t.Errorf("Serve accepted it; responses:\n%s", out.String())
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("Serve left %d entries beside upper", len(entries))
			}
			filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("a broken put left %s", p)
				}
				return nil
			})
		})
	}
	if err := Serve(strings.NewReader(""), &bytes.Buffer{}, []string{"relative"}, "/abs"); err == nil {
		t.Error("a relative lower folder was accepted")
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/usr/bin/failpass", "/usr/bin/failpass"},
		{"/a b/failpass", "'/a b/failpass'"},
		{"/it's here", `"/it's here"`},
		{"", "''"},
	} {
		if got, ok := quote(c.in); !ok || got != c.want {
			t.Errorf("quote(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	if _, ok := quote(`/a'b"c`); ok {
		t.Error("a path with both quotes was quoted")
	}
}

// FuzzServe: whatever comes over the pipe, Serve returns (an error or
// not) without a panic, and writes nothing but under upper.
func FuzzServe(f *testing.F) {
	f.Add(putReq(1, bytes.Repeat([]byte{1}, hashSize), []byte("body")) + getReq(2, bytes.Repeat([]byte{1}, hashSize)) + `{"ID":3,"Command":"close"}` + "\n")
	f.Add(`{"ID":1,"Command":"put","ActionID":"AAAA","BodySize":3}` + "\n\n\"YWJj\"\n")
	f.Add("{\"ID\":1,\"Command\":\"get\"}\n\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		dir := t.TempDir()
		upper := filepath.Join(dir, "upper")
		Serve(strings.NewReader(in), io.Discard, nil, upper)
		if entries, _ := os.ReadDir(dir); len(entries) > 1 {
			t.Errorf("Serve wrote beside upper: %v", entries)
		}
	})
}

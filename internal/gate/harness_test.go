package gate

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/failpass/failpass/internal/card"
	"github.com/failpass/failpass/internal/gitx"
)

// The base-tree reader the harness rule uses, against a real repository:
// folders (the root too) list their files only, reads give the base's
// bytes, and what the base does not have is absent, not an error.
func TestBaseTree(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "go.mod", "module example.org/m\n")
	write(t, dir, "a/x.go", "package a\n")
	write(t, dir, "a/b/y.go", "package b\n")
	write(t, dir, "with space/z.txt", "z\n")
	write(t, dir, "big/huge.go", strings.Repeat("x", maxHarnessFile+1))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	write(t, dir, "a/x.go", "package changed\n") // the checkout is never read
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tr := &baseTree{ctx: context.Background(), repo: repo, base: base, blobs: map[string]blob{}}
	lists, err := tr.List([]string{".", "a", "with space", "nope", "big"})
	if err != nil {
		t.Fatal(err)
	}
	for _, names := range lists {
		sort.Strings(names)
	}
	want := map[string][]string{".": {"go.mod"}, "a": {"x.go"}, "with space": {"z.txt"}, "big": {"huge.go"}}
	if !reflect.DeepEqual(lists, want) {
		t.Errorf("List = %q, want %q", lists, want)
	}
	files, err := tr.Read([]string{"a/x.go", "a/b/y.go", "with space/z.txt", "missing.go", "a", "big/huge.go", "a/b"})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := map[string]string{"a/x.go": "package a\n", "a/b/y.go": "package b\n", "with space/z.txt": "z\n"}
	got := map[string]string{}
	for p, b := range files {
		got[p] = string(b)
	}
	if !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("Read = %q, want %q", got, wantFiles)
	}
}

// HarnessInputs reads the base, not the candidate: the helper a test
// imports is found from the base's imports, and an import-path target
// resolves through the base's go.mod.
func TestHarnessInputs(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "go.mod", "module example.org/m\n\ngo 1.21\n")
	write(t, dir, "p/p.go", "package p\n")
	write(t, dir, "p/p_test.go", "package p\n\nimport (\n\t\"testing\"\n\n\t\"example.org/m/th\"\n)\n\nfunc TestX(t *testing.T) { th.Check(t) }\n")
	write(t, dir, "th/th.go", "package th\n")
	write(t, dir, "lib/lib.go", "package lib\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"go", "test", "./p"}, {"go", "test", "example.org/m/p"}} {
		c := &card.Card{Fail: card.Command{Workdir: ".", Cmd: argv}, Pass: card.Command{Workdir: ".", Cmd: argv}, Invariant: card.Command{Workdir: ".", Cmd: []string{"true"}}}
		got, err := testBound(t, repo, c, base).HarnessInputs(context.Background(), []string{"th/th.go", "lib/lib.go", "p/p.go", "p/new_test.go"})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if want := []string{"p/new_test.go", "th/th.go"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("HarnessInputs(%q) = %q, want %q", argv, got, want)
		}
	}
}

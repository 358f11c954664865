package heldout

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDigestVector pins the digest to a value computed outside Go:
//
//	for p in $(LC_ALL=C find . -type f | sed 's|^\./||' | LC_ALL=C sort); do
//	  printf '%s\0%s\n' "$p" "$(sha256sum < "$p" | cut -d' ' -f1)"; done | sha256sum
//
// The folder puts "a.txt" before "a/b.py" (bytewise '.' < '/'), an order a
// directory walk does not give.
func TestDigestVector(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.txt": "hello\n", "a/b.py": "x = 1\n", "b/empty": ""})
	f, err := Load(dir)
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	const want = "sha256:b883efbb8f7ec19f0bd5d4ca17e22befe9224b6f479854598ce3e2109efa8df6"
	if f.Digest != want {
		t.Errorf("Load(...).Digest = %s, want %s", f.Digest, want)
	}
	var paths []string
	for _, fl := range f.Files {
		paths = append(paths, fl.Path)
	}
	if want := []string{"a.txt", "a/b.py", "b/empty"}; !slices.Equal(paths, want) {
		t.Errorf("Load(...).Files = %v, want %v", paths, want)
	}
	if err := f.Check(want); err != nil {
		t.Errorf("Check(own digest) = %v", err)
	}
	var me *MismatchError
	if err := f.Check("sha256:" + strings.Repeat("0", 64)); !errors.As(err, &me) {
		t.Errorf("Check(other digest) = %v, want *MismatchError", err)
	}
	// One changed byte, one renamed file: another digest.
	write(t, dir, map[string]string{"a.txt": "hello!\n"})
	if g, _ := Load(dir); g.Digest == want {
		t.Errorf("a changed file kept the digest")
	}
	write(t, dir, map[string]string{"a.txt": "hello\n"})
	os.Rename(filepath.Join(dir, "b", "empty"), filepath.Join(dir, "b", "empty2"))
	if g, _ := Load(dir); g.Digest == want {
		t.Errorf("a renamed file kept the digest")
	}
}

func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		msg   string
	}{
		{"empty folder", func(t *testing.T, dir string) {}, "holds no files"},
		{"symlink to a file", func(t *testing.T, dir string) {
			write(t, dir, map[string]string{"a.py": "x"})
			os.Symlink("a.py", filepath.Join(dir, "b.py"))
		}, "is a symlink"},
		{"symlink to a folder", func(t *testing.T, dir string) {
			write(t, dir, map[string]string{"a.py": "x"})
			os.Symlink("/etc", filepath.Join(dir, "etc"))
		}, "is a symlink"},
		{"fifo", func(t *testing.T, dir string) {
			write(t, dir, map[string]string{"a.py": "x"})
			if err := syscall.Mkfifo(filepath.Join(dir, "p"), 0o644); err != nil {
				t.Skip(err)
			}
		}, "is not a regular file"},
		{"file too large", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, MaxFileSize+1), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is larger than"},
		{"too deep", func(t *testing.T, dir string) {
			write(t, dir, map[string]string{strings.Repeat("d/", MaxDepth+1) + "a.py": "x"})
		}, "nested deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			f, err := Load(dir)
			var he *Error
			if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.msg) || f != nil {
				t.Errorf("Load = %v, %v; want *Error containing %q", f, err, tc.msg)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Errorf("Load(missing) = nil error")
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("Load(file) = %v, want not a folder", err)
	}
}

func TestLoadFollowsTheFolderItself(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"real/test_a.py": "x"})
	link := filepath.Join(dir, "link")
	os.Symlink("real", link)
	f, err := Load(link)
	if err != nil || len(f.Files) != 1 {
		t.Fatalf("Load(symlink to folder) = %v, %v", f, err)
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9]+)?$`)

func TestNames(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		taken []string
		want  []string
	}{
		{"kept as they are", []string{"test_parse.py", "parse_test.go", "helper.py"}, nil, []string{"test_parse.py", "parse_test.go", "helper.py"}},
		{"flat: the folder is dropped", []string{"a/b/test_x.py"}, nil, []string{"test_x.py"}},
		{"leading underscore and dot", []string{"_private.py", ".hidden", "__init__.py"}, nil, []string{"private.py", "hidden", "init__.py"}},
		{"dashes, spaces, dots", []string{"-k x.py", "my-test.case.py", "test_a-b.py"}, nil, []string{"k_x.py", "my_test_case.py", "test_a_b.py"}},
		{"leading digits", []string{"1st.py", "test_1.py"}, nil, []string{"st.py", "test_1.py"}},
		{"GOOS suffix", []string{"x_linux_test.go", "y_windows.go", "z_linux_amd64_test.go"}, nil,
			[]string{"x_linux_heldout_test.go", "y_windows_heldout.go", "z_linux_amd64_heldout_test.go"}},
		{"GOARCH suffix", []string{"x_386_test.go", "x_arm64_test.go", "x_Linux_test.go"}, nil,
			[]string{"x_386_heldout_test.go", "x_arm64_heldout_test.go", "x_Linux_heldout_test.go"}},
		{"no constraint on the first element", []string{"linux_test.go", "windows.go"}, nil, []string{"linux_test.go", "windows.go"}},
		{"only _test keeps the form", []string{"_test.go", "test_.py"}, nil, []string{"heldout_test.go", "test_.py"}},
		{"nothing usable", []string{"___", "-.py", "..."}, nil, []string{"heldout", "heldout.py", "heldout_2"}},
		{"extension sanitized", []string{"a.p-y", "b.-"}, nil, []string{"a.py", "b"}},
		{"collisions in the folder", []string{"a/test_x.py", "b/test_x.py", "c/Test_X.py"}, nil,
			[]string{"test_x.py", "test_x_2.py", "Test_X_3.py"}},
		{"collisions with dest", []string{"test_x.py", "x_test.go", "conftest.py"}, []string{"test_x.py", "test_x_2.py", "x_test.go", "conftest.py"},
			[]string{"test_x_3.py", "x_2_test.go", "conftest_2.py"}},
		{"a variant number that is a GOARCH", []string{"x_test.go"}, []string{"x_test.go", "x_2_test.go", "x_3_test.go"},
			[]string{"x_4_test.go"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Names(tc.files, func(n string) bool { return slices.Contains(tc.taken, n) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("Names(%q) = %q, want %q", tc.files, got, tc.want)
			}
			for i, n := range got {
				if !nameRE.MatchString(n) {
					t.Errorf("Names(%q)[%d] = %q: not [A-Za-z][A-Za-z0-9_]*.ext", tc.files, i, n)
				}
			}
		})
	}
}

// TestNamesGoBuild asks go/build itself: every Go name Names gives is
// built on every system, and a *_test.go name stays a test file.
func TestNamesGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the go command about every file name: the full suite runs it")
	}
	var files []string
	for os := range knownOS {
		for arch := range knownArch {
			files = append(files, "x_"+os+"_"+arch+"_test.go", "x_"+os+"_test.go", "x_"+arch+".go", os+"_"+arch+"_test.go")
		}
	}
	files = append(files, "x_386_test.go", "a/x_linux_test.go", "b/x_linux_test.go")
	names := Names(files, nil)
	dir := t.TempDir()
	for _, n := range names {
		os.WriteFile(filepath.Join(dir, n), []byte("package x\n"), 0o644)
	}
	for _, goos := range []string{"linux", "darwin", "windows", "plan9", "js"} {
		for _, goarch := range []string{"amd64", "386", "arm64", "wasm"} {
			ctx := build.Default
			ctx.GOOS, ctx.GOARCH = goos, goarch
			for i, n := range names {
				ok, err := ctx.MatchFile(dir, n)
				if err != nil || !ok {
					t.Fatalf("%s/%s: %s (from %s) is not built: %v", goos, goarch, n, files[i], err)
				}
				if strings.HasSuffix(files[i], "_test.go") != strings.HasSuffix(n, "_test.go") {
					t.Fatalf("%s (from %s) lost or gained the _test form", n, files[i])
				}
			}
		}
	}
}

func TestCopyInto(t *testing.T) {
	src := t.TempDir()
	write(t, src, map[string]string{"a/test_x.py": "new a", "b/test_x.py": "new b", "helper.py": "h"})
	f, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, root, map[string]string{"tests/test_x.py": "base", "tests/helper.py": "base helper"})
	got, err := f.CopyInto(root, "tests")
	if err != nil {
		t.Fatalf("CopyInto = %v", err)
	}
	want := []string{"tests/test_x_2.py", "tests/test_x_3.py", "tests/helper_2.py"}
	if !slices.Equal(got, want) {
		t.Errorf("CopyInto = %q, want %q", got, want)
	}
	for p, content := range map[string]string{"tests/test_x.py": "base", "tests/helper.py": "base helper",
		"tests/test_x_2.py": "new a", "tests/test_x_3.py": "new b", "tests/helper_2.py": "h"} {
		if b, _ := os.ReadFile(filepath.Join(root, p)); string(b) != content {
			t.Errorf("%s = %q, want %q", p, b, content)
		}
	}
	// A missing dest is made.
	if got, err := f.CopyInto(root, "new/deep"); err != nil || got[0] != "new/deep/test_x.py" {
		t.Errorf("CopyInto(new/deep) = %q, %v", got, err)
	}
	// A symlink or a file on the way is refused, and nothing is written through it.
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(root, "link"))
	write(t, root, map[string]string{"file": "x"})
	for _, dest := range []string{"link", "link/sub", "file", "file/sub", "../x", "/abs", "a/../b", ""} {
		var de *DestError
		if _, err := f.CopyInto(root, dest); !errors.As(err, &de) {
			t.Errorf("CopyInto(%q) = %v, want *DestError", dest, err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files written through a symlink: %v", ents)
	}
}

func TestRelPaths(t *testing.T) {
	copied := []string{"tests/test_a.py", "tests/test_b.py"}
	for _, tc := range []struct {
		workdir string
		want    []string
	}{
		{".", []string{"tests/test_a.py", "tests/test_b.py"}},
		{"tests", []string{"test_a.py", "test_b.py"}},
		{"src/pkg", []string{"../../tests/test_a.py", "../../tests/test_b.py"}},
	} {
		got, err := RelPaths(tc.workdir, copied)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("RelPaths(%q) = %q, %v, want %q", tc.workdir, got, err, tc.want)
		}
	}
	if got, _ := RelPaths(".", []string{"-x/test_a.py"}); got[0] != "./-x/test_a.py" {
		t.Errorf("RelPaths(-x/...) = %q, want ./-x/test_a.py", got)
	}
}

// FuzzNames: whatever the held-out folder's names, every name given is a
// plain name with the runner's form kept, no Go build constraint, and
// unique without case, however many files collide.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"test_a.py", "x_linux_test.go", "_test.go", "-k x.py", "..", "a/b/c_386.go", "\xff.py", "test_.py"} {
		f.Add(s, "test_a.py")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		files := []string{a, b, a, "sub/" + a}
		names := Names(files, func(n string) bool { return n == b })
		seen := map[string]bool{}
		for i, n := range names {
			base := files[i]
			if j := strings.LastIndexByte(base, '/'); j >= 0 {
				base = base[j+1:]
			}
			stem := strings.TrimSuffix(n, filepath.Ext(n))
			switch {
			case !nameRE.MatchString(n):
				t.Fatalf("Names(%q)[%d] = %q: not a plain name", files, i, n)
			case seen[strings.ToLower(n)] || n == b:
				t.Fatalf("Names(%q)[%d] = %q: taken", files, i, n)
			case constrained(strings.TrimSuffix(stem, "_test")):
				t.Fatalf("Names(%q)[%d] = %q: build-constrained", files, i, n)
			case strings.HasSuffix(base, "_test.go") && !strings.HasSuffix(n, "_test.go"):
				t.Fatalf("Names(%q)[%d] = %q: lost the _test.go form", files, i, n)
			case strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") && !(strings.HasPrefix(n, "test_") && strings.HasSuffix(n, ".py")):
				t.Fatalf("Names(%q)[%d] = %q: lost the test_*.py form", files, i, n)
			}
			seen[strings.ToLower(n)] = true
		}
	})
}

func TestSplitWith(t *testing.T) {
	f := &Folder{Dir: "d", Files: []File{{Path: "probe.go", Data: []byte("package main")}, {Path: "probe.out", Data: []byte("42\n")}}}
	f.Digest = Digest(f.Files)
	rest, want, err := f.Split("probe.out")
	if err != nil || string(want) != "42\n" || len(rest.Files) != 1 || rest.Files[0].Path != "probe.go" || rest.Digest != f.Digest {
		t.Fatalf("Split = %+v, %q, %v", rest, want, err)
	}
	for name, g := range map[string]*Folder{
		"missing":   {Dir: "d", Files: []File{{Path: "probe.go"}}},
		"only":      {Dir: "d", Files: []File{{Path: "probe.out"}}},
		"too large": {Dir: "d", Files: []File{{Path: "probe.go"}, {Path: "probe.out", Data: make([]byte, MaxExpected+1)}}},
		"not root":  {Dir: "d", Files: []File{{Path: "probe.go"}, {Path: "sub/probe.out"}}},
	} {
		var e *Error
		if _, _, err := g.Split("probe.out"); !errors.As(err, &e) {
			t.Errorf("Split(%s) = %v, want an *Error", name, err)
		}
	}
	// With writes the expected output and the digest of the whole.
	w := (&Folder{Dir: "d", Files: []File{{Path: "probe.go", Data: []byte("package main")}}}).With("probe.out", []byte("42\n"))
	if w.Digest != f.Digest || len(w.Files) != 2 {
		t.Errorf("With = %+v, want the folder of digest %s", w, f.Digest)
	}
}

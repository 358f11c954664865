package model

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestExampleAdapters drives the bundled scripted adapters
// (examples/adapters) through the same protocol code as any adapter: the
// reviewer's results must validate, and review → fix → review must
// converge on a real repository with no model at all.
func TestExampleAdapters(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "adapters"))
	if err != nil {
		t.Fatal(err)
	}
	reviewer := cmdAdapter(t, filepath.Join(dir, "reviewer.sh"), Options{})
	fixer := cmdAdapter(t, filepath.Join(dir, "fixer.sh"), Options{})
	repo := gitRepo(t, map[string]string{
		"src/app.py":     "def f():\n    return 1  # FIXME: handle None\n",
		"src/ok.py":      "x = 1\n",
		"docs/notes.txt": "FIXME later\n",
	})
	ctx := context.Background()
	lenses := []string{"correctness", "solution_simplicity", "code_simplicity"}

	r, err := Review(ctx, reviewer, testPacket(), repo, lenses)
	if err != nil {
		t.Fatalf("Review = %v", err)
	}
	if r.Verdict != VerdictChangesRequired || len(r.Findings) != 2 {
		t.Fatalf("Review = %s with %d findings, want changes_required with 2", r.Verdict, len(r.Findings))
	}
	if got := r.Findings[0].Evidence[0].Location; got != "docs/notes.txt:1" {
		t.Errorf("first finding at %s, want docs/notes.txt:1 (sorted)", got)
	}

	req := fixRequest(t)
	req.Findings = r.Findings
	out, err := Fix(ctx, fixer, req, repo)
	if err != nil || !out.Changed {
		t.Fatalf("Fix = %+v, %v; want a change", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(repo, "src/app.py"))
	if string(b) != "def f():\n    return 1  # handle None\n" {
		t.Errorf("src/app.py after fix = %q", b)
	}

	r, err = Review(ctx, reviewer, testPacket(), repo, lenses)
	if err != nil || r.Verdict != VerdictClean {
		t.Fatalf("second Review = %+v, %v; want clean", r, err)
	}

	// Nothing left to fix: the fixer says so with a non-zero exit.
	out, err = Fix(ctx, fixer, req, gitRepo(t, map[string]string{"a.txt": "fine\n"}))
	if err != nil || out.Changed {
		t.Fatalf("Fix with nothing to fix = %+v, %v; want no change", out, err)
	}

	// A failed validation is never clean.
	p := testPacket()
	p.Validation[0].Status = "failed"
	r, err = Review(ctx, reviewer, p, repo, nil)
	if err != nil || r.Verdict != VerdictChangesRequired || len(r.BlockingReasons) != 1 {
		t.Fatalf("Review over failed validation = %+v, %v; want changes_required with a reason", r, err)
	}
}

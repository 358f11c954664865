package model

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestDecideCommand(t *testing.T) {
	dir := t.TempDir()
	var f Finding
	if err := decodeInto(mustJSON(t, finding("todo-1", "blocking")), &f); err != nil {
		t.Fatal(err)
	}
	req := &DecideRequest{SchemaVersion: RequestSchemaVersion, Findings: []Finding{f},
		ChangeContract: []byte(`{"goal":"g"}`), Budget: FixBudget{RemainingCycles: 1}}
	tests := []struct {
		name, body, refuse string
	}{
		{name: "accepts", body: `[ "$FAILPASS_ROLE" = decider ] || exit 9
grep -q '"todo-1"' || exit 8
echo '{"dispositions":[{"finding_id":"todo-1","disposition":"accepted","rationale":"in scope"}]}'
`},
		{name: "fenced", body: "cat >/dev/null\nprintf '```json\\n{\"dispositions\":[{\"finding_id\":\"todo-1\",\"disposition\":\"rejected\",\"rationale\":\"no\"}]}\\n```\\n'\n"},
		{name: "empty", body: "cat >/dev/null\n", refuse: "empty"},
		{name: "extra key", body: "cat >/dev/null\necho '{\"dispositions\":[],\"note\":\"x\"}'\n", refuse: "schema"},
		{name: "prose and json", body: "cat >/dev/null\necho 'Sure: {\"dispositions\":[]}'\n", refuse: "not one JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := cmdAdapter(t, script(t, dir, strings.ReplaceAll(tt.name, " ", "_"), tt.body), Options{})
			ds, err := Decide(context.Background(), a, req)
			if tt.refuse == "" {
				if err != nil || len(ds) != 1 {
					t.Fatalf("Decide = %v, %v; want one disposition", ds, err)
				}
				return
			}
			var re *RefusedError
			if ds != nil || !errors.As(err, &re) || !strings.Contains(re.Error(), tt.refuse) {
				t.Fatalf("Decide = %v, %v; want refusal %q", ds, err, tt.refuse)
			}
		})
	}
}

func TestRequestMarshal(t *testing.T) {
	req := fixRequest(t)
	if _, err := req.Marshal(); err != nil {
		t.Fatalf("FixRequest.Marshal() = %v", err)
	}
	bad := *req
	bad.Cycle = 0
	if _, err := bad.Marshal(); err == nil {
		t.Errorf("FixRequest.Marshal() with cycle 0 = nil error")
	}
	bad = *req
	bad.Findings, bad.ValidationFailures = nil, nil
	if _, err := bad.Marshal(); err == nil || !strings.Contains(err.Error(), "nothing to fix") {
		t.Errorf("FixRequest.Marshal() with nothing to fix = %v", err)
	}
	bad = *req
	bad.ChangeContract = []byte(`[1]`)
	if _, err := bad.Marshal(); err == nil {
		t.Errorf("FixRequest.Marshal() with an array change contract = nil error")
	}
	d := &DecideRequest{SchemaVersion: RequestSchemaVersion, ChangeContract: []byte(`{}`)}
	if _, err := d.Marshal(); err == nil {
		t.Errorf("DecideRequest.Marshal() with no findings = nil error")
	}
}

// FuzzParseDispositions: a refusal returns no dispositions; accepted ones
// cover every finding exactly once.
func FuzzParseDispositions(f *testing.F) {
	f.Add([]byte(`{"dispositions":[{"finding_id":"a","disposition":"accepted","rationale":"r"}]}`))
	f.Add([]byte("```json\n{\"dispositions\":[]}\n```"))
	f.Add([]byte(`{"dispositions":[{"finding_id":"a","disposition":"accepted","rationale":"r"},{"finding_id":"a","disposition":"accepted","rationale":"r"}]}`))
	findings := []Finding{{ID: "a"}}
	f.Fuzz(func(t *testing.T, reply []byte) {
		ds, err := ParseDispositions(reply, findings)
		if err != nil {
			if ds != nil {
				t.Fatalf("ParseDispositions(%q) returned %v with error %v", reply, ds, err)
			}
			return
		}
		if len(ds) != 1 || ds[0].FindingID != "a" {
			t.Fatalf("ParseDispositions(%q) = %v, want exactly one for a", reply, ds)
		}
	})
}

// FuzzCheckProse: prose checks never panic, and every path ProsePaths
// reports is a relative path without "..".
func FuzzCheckProse(f *testing.F) {
	f.Add("Edit `src/a.py` and raise the budget.")
	f.Add("n/a and/or e.g. x.py ../y")
	f.Fuzz(func(t *testing.T, prose string) {
		CheckProse(prose, []string{"src/a.py"}, func(string) bool { return false }, nil)
		for _, p := range ProsePaths(prose) {
			if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
				t.Fatalf("ProsePaths(%q) reported %q", prose, p)
			}
		}
	})
}

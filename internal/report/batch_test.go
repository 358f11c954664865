package report

import (
	"bytes"
	"encoding/xml"
	"github.com/failpass/failpass/internal/verdict"
	"strings"
	"testing"
)

const (
	passLine = `{"verdict":"pass","rule":null,"reason":"every rule held","candidate":"a.diff","base":"b","card_digest":"sha256:00","diff_digest":"sha256:01","sandbox":{"applied":[],"missing":[]},"steps":[],"duration_ms":5,"future_field":1}`
	failLine = `{"verdict":"fail","rule":"patch.pass","reason":"exit 1, expected 0","candidate":"b.diff","base":"b","card_digest":"sha256:00","diff_digest":"sha256:02","sandbox":{"applied":[],"missing":[]},"steps":[],"cached":true,"duration_ms":7}`
)

func TestReadResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Summary
		ok   bool
	}{
		{"two and summary", passLine + "\n" + failLine + "\n" + `{"summary":{"total":2,"passed":1,"failed":1,"cached":1}}` + "\n", Summary{Total: 2, Passed: 1, Failed: 1, Cached: 1}, true},
		{"error verdict", `{"verdict":"error","candidate":"x.diff","error":"cannot read diff"}` + "\n" + `{"summary":{"total":1,"passed":0,"failed":0,"cached":0,"errors":1,"shard":"0/2"}}`, Summary{Total: 1, Errors: 1, Shard: "0/2"}, true},
		{"empty shard", `{"summary":{"total":0,"passed":0,"failed":0,"cached":0}}`, Summary{}, true},
		{"no summary", passLine + "\n", Summary{}, false},
		{"summary disagrees", passLine + "\n" + `{"summary":{"total":2,"passed":2,"failed":0,"cached":0}}`, Summary{}, false},
		{"line after summary", `{"summary":{"total":0,"passed":0,"failed":0,"cached":0}}` + "\n" + passLine, Summary{}, false},
		{"trouble", `{"verdict":"error","error":"not a repository"}`, Summary{}, false},
		{"unknown verdict", `{"verdict":"maybe","candidate":"x"}` + "\n" + `{"summary":{"total":1,"passed":0,"failed":1,"cached":0}}`, Summary{}, false},
		{"fail without rule", `{"verdict":"fail","rule":null,"candidate":"x"}` + "\n" + `{"summary":{"total":1,"passed":0,"failed":1,"cached":0}}`, Summary{}, false},
		{"pass with rule", `{"verdict":"pass","rule":"patch.pass","candidate":"x"}` + "\n" + `{"summary":{"total":1,"passed":1,"failed":0,"cached":0}}`, Summary{}, false},
		{"no candidate", `{"verdict":"pass","rule":null}` + "\n" + `{"summary":{"total":1,"passed":1,"failed":0,"cached":0}}`, Summary{}, false},
		{"not json", "GATE: PASS\n", Summary{}, false},
	} {
		rs, got, err := ReadResults("s.ndjson", strings.NewReader(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ReadResults(%s) = %v, %v; want %v ok=%v", tc.name, got, err, tc.want, tc.ok)
		}
		if err != nil && rs != nil {
			t.Errorf("ReadResults(%s) returned results with an error", tc.name)
		}
		if tc.ok && len(rs) == 2 && !bytes.Contains(rs[0].Raw, []byte("future_field")) {
			t.Errorf("ReadResults(%s) dropped an unknown field from the raw line", tc.name)
		}
	}
}

func FuzzReadResults(f *testing.F) {
	f.Add([]byte(passLine + "\n" + `{"summary":{"total":1,"passed":1,"failed":0,"cached":0}}`))
	f.Add([]byte(failLine))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, s, err := ReadResults("f", bytes.NewReader(data))
		if err != nil {
			if rs != nil || s != (Summary{}) {
				t.Fatalf("error %v with a value", err)
			}
			return
		}
		if s.Total != len(rs) || s.Passed+s.Failed != s.Total {
			t.Fatalf("summary %+v for %d results", s, len(rs))
		}
	})
}

func TestJUnitIsXML(t *testing.T) {
	rule := "patch.pass"
	vs := []*verdict.Verdict{
		{Verdict: verdict.Pass, Candidate: "ok.diff", CardDigest: "sha256:abcdef0123456789", DurationMS: 1500},
		{Verdict: verdict.Fail, Rule: &rule, Reason: "exit 1 <&> \x00\x1b", Candidate: "bad\x01.diff", CardDigest: "sha256:ab", DurationMS: 20},
	}
	var buf bytes.Buffer
	if err := JUnit(&buf, vs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Type string `xml:"type,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, buf.String())
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Cases) != 2 || doc.Cases[1].Failure == nil || doc.Cases[1].Failure.Type != "patch.pass" || doc.Cases[0].Failure != nil {
		t.Errorf("JUnit = %+v", doc)
	}
}

func TestTable(t *testing.T) {
	rule := "budget.files"
	var buf bytes.Buffer
	Table(&buf, []*verdict.Verdict{
		{Verdict: verdict.Pass, Candidate: "a.diff", DurationMS: 1200, Cached: true},
		{Verdict: verdict.Fail, Rule: &rule, Candidate: "b\n.diff"},
	})
	want := "CANDIDATE  VERDICT  RULE          DURATION\na.diff     pass     -             1.2s (cached)\nb?.diff    fail     budget.files  0s\ntotal 2, passed 1, failed 1, cached 1\n"
	if buf.String() != want {
		t.Errorf("Table =\n%s\nwant\n%s", buf.String(), want)
	}
}

package gate

import (
	"fmt"
	"testing"
)

func TestParseManifest(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string // entries as card|diff@line, or the error's line
		wantErr int
	}{
		{"", "[]", 0},
		{"\n\n", "[]", 0},
		{`{"card": "c.yml", "diff": "a.diff"}`, "[c.yml|a.diff@1]", 0},
		{"\n{\"card\": \"c.yml\", \"diff\": \"a.diff\"}\n\n{\"diff\": \"b.diff\", \"card\": \"d.yml\"}\n", "[c.yml|a.diff@2 d.yml|b.diff@4]", 0},
		{`{"card": "c.yml"}`, "", 1},
		{`{"card": "c.yml", "diff": ""}`, "", 1},
		{`{"card": "c.yml", "diff": "a", "extra": 1}`, "", 1},
		{`{"card": "c.yml", "diff": "-"}`, "", 1},
		{`{"card": "c.yml", "diff": "a"} {"card": "c.yml", "diff": "b"}`, "", 1},
		{"{\"card\": \"c.yml\", \"diff\": \"a\"}\n[1, 2]", "", 2},
		{`{"card": 1, "diff": "a"}`, "", 1},
		{"not json", "", 1},
	} {
		es, err := ParseManifest("m.jsonl", []byte(tc.in))
		if tc.wantErr != 0 {
			me, ok := err.(*ManifestError)
			if !ok || me.Line != tc.wantErr || es != nil {
				t.Errorf("ParseManifest(%q) = %v, %v; want an error on line %d and no entries", tc.in, es, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseManifest(%q) error %v", tc.in, err)
			continue
		}
		var got []string
		for _, e := range es {
			got = append(got, fmt.Sprintf("%s|%s@%d", e.Card, e.Diff, e.Line))
		}
		if s := fmt.Sprint(got); s != tc.want && !(tc.want == "[]" && len(got) == 0) {
			t.Errorf("ParseManifest(%q) = %v, want %v", tc.in, s, tc.want)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"card": "c.yml", "diff": "a.diff"}`))
	f.Add([]byte("\n{\"card\": \"c\", \"diff\": \"d\"}\nx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ParseManifest("m", data)
		if err != nil && es != nil {
			t.Fatalf("error %v with entries %v", err, es)
		}
		for _, e := range es {
			if e.Card == "" || e.Diff == "" || e.Diff == "-" || e.Line < 1 {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}

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

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true},
		{"3/4", Shard{3, 4}, true},
		{"4/4", Shard{}, false},
		{"-1/4", Shard{}, false},
		{"0/0", Shard{}, false},
		{"1", Shard{}, false},
		{"a/b", Shard{}, false},
		{"+1/4", Shard{}, false},
		{"1/4/5", Shard{}, false},
		{" 1/4", Shard{}, false},
	} {
		got, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// Every index lands in exactly one shard.
func TestShardPartition(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for i := 0; i < 50; i++ {
			c := 0
			for k := 0; k < n; k++ {
				if (Shard{k, n}).Has(i) {
					c++
				}
			}
			if c != 1 {
				t.Errorf("index %d is in %d of %d shards", i, c, n)
			}
		}
	}
}

func FuzzParseShard(f *testing.F) {
	f.Add("0/4")
	f.Add("9/10")
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if sh != (Shard{}) {
				t.Fatalf("error with value %v", sh)
			}
			return
		}
		if sh.K < 0 || sh.K >= sh.N {
			t.Fatalf("ParseShard(%q) = %v out of range", s, sh)
		}
		again, err := ParseShard(sh.String())
		if err != nil || again != sh {
			t.Fatalf("canonical form %q does not parse back: %v %v", sh.String(), again, err)
		}
	})
}

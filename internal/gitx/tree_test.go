package gitx

import "testing"

func TestParseTree(t *testing.T) {
	raw := []byte("100644 blob 1111111111111111111111111111111111111111\ta b.txt\x00040000 tree 2222222222222222222222222222222222222222\tdir\x00")
	es, err := ParseTree(raw, false)
	if err != nil || len(es) != 2 || es[0].Name != "a b.txt" || es[0].Mode != "100644" || es[1].Type != "tree" || es[0].Size != -1 {
		t.Fatalf("ParseTree = %+v, %v", es, err)
	}
	long := []byte("100644 blob 1111111111111111111111111111111111111111      12\tx\x00")
	if es, err := ParseTree(long, true); err != nil || len(es) != 1 || es[0].Size != 12 {
		t.Fatalf("ParseTree(long) = %+v, %v", es, err)
	}
	for _, bad := range []string{"100644 blob\tx\x00", "100644 blob 1111 x\x00", "100644 blob 1111 12 9\tx\x00"} {
		if _, err := ParseTree([]byte(bad), false); err == nil {
			t.Errorf("ParseTree(%q) accepted a record of the wrong shape", bad)
		}
	}
	if _, err := ParseTree(raw, true); err == nil {
		t.Error("ParseTree(short records, long) accepted them")
	}
}

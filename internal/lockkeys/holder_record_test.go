package lockkeys

import (
	"testing"
	"time"
)

func TestParseHolder(t *testing.T) {
	at := time.UnixMilli(1_764_000_000_123)
	for _, c := range []struct {
		in   string
		want HolderRecord
	}{
		{"host pid 7\t1764000000123", HolderRecord{"host pid 7", at}},
		{"host pid 7", HolderRecord{Description: "host pid 7"}}, // a record from before the time was kept
		{"odd\tvalue", HolderRecord{Description: "odd\tvalue"}},
		{"neg\t-5", HolderRecord{Description: "neg\t-5"}},
		{"", HolderRecord{}},
	} {
		if got := ParseHolder(c.in); got != c.want {
			t.Errorf("ParseHolder(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

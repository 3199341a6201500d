package config

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"512", 512}, {"512B", 512}, {"1k", 1 << 10}, {"1K", 1 << 10}, {"1KiB", 1 << 10}, {"1kb", 1 << 10},
		{"64M", 64 << 20}, {"64MiB", 64 << 20}, {"3G", 3 << 30}, {"2GiB", 2 << 30}, {"64T", 64 << 40},
		{"64TiB", 64 << 40}, {"1P", 1 << 50}, {"1PiB", 1 << 50}, {" 10M ", 10 << 20}, {"7E", 7 << 60},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "M", "-1", "1.5G", "1X", "1iB", "1MM", "8E", "99999999999999999999", "1 2"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

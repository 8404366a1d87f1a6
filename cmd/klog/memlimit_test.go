package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestParseMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"448MiB", 448 << 20},
		{"2GiB", 2 << 30},
		{"1048576", 1 << 20},
		{"64KiB", 64 << 10},
		{"512B", 512},
		{"off", math.MaxInt64},
	} {
		if got, err := parseMemoryLimit(tc.in); err != nil || got != tc.want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "-1MiB", "12MB", "MiB", "1.5GiB", "99999999999TiB"} {
		if got, err := parseMemoryLimit(bad); err == nil {
			t.Errorf("parseMemoryLimit(%q) = %d, want an error", bad, got)
		}
	}
}

// The default limit applies unless GOMEMLIMIT is set; an explicit
// --memory-limit wins over both.
func TestSetMemoryLimit(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name     string
		value    string
		explicit bool
		env      string
		want     int64
	}{
		{"default", defaultMemoryLimit, false, "", 448 << 20},
		{"GOMEMLIMIT over the default", defaultMemoryLimit, false, "1GiB", 123},
		{"flag over GOMEMLIMIT", "1GiB", true, "2GiB", 1 << 30},
		{"off", "off", true, "", math.MaxInt64},
	} {
		debug.SetMemoryLimit(123) // stands for what the runtime read from GOMEMLIMIT
		if err := setMemoryLimit(tc.value, tc.explicit, env(tc.env)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%s: limit %d, want %d", tc.name, got, tc.want)
		}
	}
	if err := setMemoryLimit("lots", true, env("")); err == nil {
		t.Error("--memory-limit lots accepted")
	}
}

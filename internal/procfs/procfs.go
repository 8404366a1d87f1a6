// Package procfs reads what klog's benchmarks and hostile-client tools
// measure of a node process from Linux's /proc: its CPU seconds and its
// resident memory now and at its peak, and the machine's load and steal
// time. Elsewhere than Linux every read fails (or reads 0 for the
// machine's figures).
package procfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrFormat means a /proc file did not have the expected layout.
var ErrFormat = errors.New("unexpected /proc format")

// Memory returns the VmRSS and VmHWM of process pid, in kB.
func Memory(pid int) (rssKB, hwmKB int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return ParseStatus(f)
}

// ParseStatus reads VmRSS and VmHWM (kB) from the text of a
// /proc/PID/status file.
func ParseStatus(r io.Reader) (rssKB, hwmKB int64, err error) {
	sc := bufio.NewScanner(r)
	found := 0
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, 0, fmt.Errorf("%w: status %s", ErrFormat, key)
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: status %s: %v", ErrFormat, key, err)
		}
		if key == "VmRSS" {
			rssKB = v
		} else {
			hwmKB = v
		}
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if found < 2 {
		return 0, 0, fmt.Errorf("%w: status without VmRSS/VmHWM", ErrFormat)
	}
	return rssKB, hwmKB, nil
}

// clockTicks is USER_HZ, the unit of the CPU times in /proc on Linux.
const clockTicks = 100

// Sample is one process's CPU seconds and memory at one instant.
type Sample struct {
	UserS, SysS  float64
	RSSKB, HWMKB int64
}

// CPU is the process's CPU seconds, user and system.
func (s Sample) CPU() float64 { return s.UserS + s.SysS }

// Read samples process pid from /proc/PID/stat and /proc/PID/status.
func Read(pid int) (Sample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Sample{}, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	s, err := ParseStat(string(stat))
	if err != nil {
		return Sample{}, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	s.RSSKB, s.HWMKB, err = Memory(pid)
	if err != nil {
		return Sample{}, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	return s, nil
}

// ParseStat extracts utime and stime (fields 14 and 15) from a
// /proc/PID/stat line. The command name in parentheses may hold spaces, so
// fields are counted from the last ')'.
func ParseStat(line string) (Sample, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 || i+2 > len(line) {
		return Sample{}, fmt.Errorf("%w: stat %q", ErrFormat, line)
	}
	f := strings.Fields(line[i+1:])
	// f[0] is field 3 (state), so utime (14) is f[11] and stime (15) f[12].
	if len(f) < 13 {
		return Sample{}, fmt.Errorf("%w: stat has %d fields", ErrFormat, len(f)+2)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return Sample{}, fmt.Errorf("%w: stat times %q %q", ErrFormat, f[11], f[12])
	}
	return Sample{UserS: ut / clockTicks, SysS: st / clockTicks}, nil
}

// Loadavg1 is the one-minute load average, 0 if unreadable.
func Loadavg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// StealSeconds is the machine's total steal time so far, 0 if unreadable.
func StealSeconds() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	v, _ := strconv.ParseFloat(f[8], 64)
	return v / clockTicks
}

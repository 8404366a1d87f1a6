// Package procfs reads what klog's benchmark and hostile-client tools
// measure of a node process from Linux's /proc: its resident memory now and
// at its peak.
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

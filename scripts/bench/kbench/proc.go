package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/klogdev/klog/scripts/internal/procfs"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc on Linux.
const clockTicks = 100

// procSample is one process's CPU seconds and memory at one instant.
type procSample struct {
	userS, sysS  float64
	rssKB, hwmKB int64
}

// sampleProc reads /proc/<pid>/stat and /proc/<pid>/status.
func sampleProc(pid int) (procSample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procSample{}, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	s, err := parseStat(string(stat))
	if err != nil {
		return procSample{}, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	s.rssKB, s.hwmKB, err = procfs.Memory(pid)
	if err != nil {
		return procSample{}, fmt.Errorf("sample pid %d: %w", pid, err)
	}
	return s, nil
}

// parseStat extracts utime and stime (fields 14 and 15) from a
// /proc/<pid>/stat line. The command name in parentheses may hold spaces, so
// fields are counted from the last ')'.
func parseStat(line string) (procSample, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 || i+2 > len(line) {
		return procSample{}, fmt.Errorf("%w: stat %q", errBadProc, line)
	}
	f := strings.Fields(line[i+1:])
	// f[0] is field 3 (state), so utime (14) is f[11] and stime (15) f[12].
	if len(f) < 13 {
		return procSample{}, fmt.Errorf("%w: stat has %d fields", errBadProc, len(f)+2)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return procSample{}, fmt.Errorf("%w: stat times %q %q", errBadProc, f[11], f[12])
	}
	return procSample{userS: ut / clockTicks, sysS: st / clockTicks}, nil
}

// loadavg1 is the one-minute load average, 0 if unreadable.
func loadavg1() float64 {
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

// stealSeconds is the machine's total steal time so far, 0 if unreadable.
func stealSeconds() float64 {
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

func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cpuWindow measures the client's and the broker's CPU over one phase.
type cpuWindow struct {
	pid        int
	start      time.Time
	client0    float64
	server0    procSample
	serverErr  error
	steal0     float64
	loadBefore float64
}

func startWindow(serverPID int) *cpuWindow {
	w := &cpuWindow{pid: serverPID, loadBefore: loadavg1(), steal0: stealSeconds()}
	if serverPID > 0 {
		w.server0, w.serverErr = sampleProc(serverPID)
	}
	w.client0 = selfCPU()
	w.start = time.Now()
	return w
}

// stop closes the window and records its figures in m; valueBytes is the
// record payload moved during the window, for CPU seconds per GB.
func (w *cpuWindow) stop(m map[string]any, valueBytes int64) error {
	wall := time.Since(w.start).Seconds()
	client := selfCPU() - w.client0
	m["wall_s"] = round3(wall)
	m["client_cpu_s"] = round3(client)
	m["client_cores"] = round3(client / wall)
	m["steal_s"] = round3(stealSeconds() - w.steal0)
	m["loadavg_before"] = w.loadBefore
	if w.pid <= 0 {
		return nil
	}
	if w.serverErr != nil {
		return w.serverErr
	}
	s1, err := sampleProc(w.pid)
	if err != nil {
		return err
	}
	cpu := s1.userS - w.server0.userS + s1.sysS - w.server0.sysS
	m["server_cpu_s"] = round3(cpu)
	m["server_cpu_sys_s"] = round3(s1.sysS - w.server0.sysS)
	m["server_cores"] = round3(cpu / wall)
	m["server_rss_mb"] = round3(float64(s1.rssKB) / 1024)
	m["server_hwm_mb"] = round3(float64(s1.hwmKB) / 1024)
	if valueBytes > 0 {
		m["server_cpu_s_per_gb"] = round3(cpu / (float64(valueBytes) / 1e9))
		m["client_cpu_s_per_gb"] = round3(client / (float64(valueBytes) / 1e9))
	}
	return nil
}

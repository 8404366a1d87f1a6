package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/klogdev/klog/internal/procfs"
)

// sampleEvery is how often the sampler reads /proc.
const sampleEvery = 25 * time.Millisecond

// sampler watches one process's memory and descriptors until it exits.
type sampler struct {
	pid int
	mu  struct {
		sync.Mutex
		peakRSSKB int64 // largest VmRSS seen
		hwmKB     int64 // VmHWM at the last sample: the kernel's peak
		peakFDs   int
		rssKB     int64 // last VmRSS
		fds       int   // last count of /proc/PID/fd
	}
}

func startSampler(pid int, exited <-chan struct{}) *sampler {
	s := &sampler{pid: pid}
	s.sample()
	go func() {
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-exited:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	rss, hwm, err := procfs.Memory(s.pid)
	if err != nil {
		return // the process is gone; the last sample stands
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.rssKB, s.mu.fds = rss, len(ents)
	s.mu.hwmKB = max(s.mu.hwmKB, hwm)
	s.mu.peakRSSKB = max(s.mu.peakRSSKB, rss)
	s.mu.peakFDs = max(s.mu.peakFDs, len(ents))
}

// peakMB is the process's peak resident memory: VmHWM, or the largest
// VmRSS sampled if that is larger.
func (s *sampler) peakMB() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(max(s.mu.hwmKB, s.mu.peakRSSKB)) / 1024
}

func (s *sampler) peakFDs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.peakFDs
}

// now takes a sample and returns its VmRSS in bytes and descriptor count.
func (s *sampler) now() (rssBytes int64, fds int) {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.rssKB * 1024, s.mu.fds
}

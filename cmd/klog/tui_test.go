package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// screenText is what the TUI wrote so far, as text.
func screenText(out *testkit.Buffer) string { return ansi.Strip(out.String()) }

// TestTUIStarts: klog tui starts against a node, shows its cluster
// screen, switches to the topics screen on :topics, and quits on q.
func TestTUIStarts(t *testing.T) {
	n := brokertest.Start(t)
	createTopic(t, n.Addr(), "tui-topic", 2)
	in, keys := io.Pipe()
	var out testkit.Buffer
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		args := []string{"-b", n.Addr(), "--admin", n.AdminAddr(), "tui", "--readonly", "--refresh", "100ms"}
		done <- run(context.Background(), args, in, &out, &stderr, func(string) string { return "" })
	}()
	testkit.WaitFor(t, "the cluster screen", func() (bool, string) {
		s := screenText(&out)
		return strings.Contains(s, "controller") && strings.Contains(s, n.Addr()) && strings.Contains(s, "readonly"), s
	})
	if _, err := io.WriteString(keys, ":topics\r"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the topics screen", func() (bool, string) {
		return strings.Contains(screenText(&out), "tui-topic"), screenText(&out)
	})
	quitTUI(t, keys, done, &out, &stderr)
}

// quitTUI presses q and waits for klog tui to exit 0 with its code on
// done.
func quitTUI(t *testing.T, keys io.Writer, done <-chan int, out *testkit.Buffer, stderr *bytes.Buffer) {
	t.Helper()
	if _, err := io.WriteString(keys, "q"); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("klog tui exit %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(testkit.WaitTimeout):
		t.Fatalf("klog tui did not quit on q; screen:\n%s", screenText(out))
	}
}

// TestTUIUsage: an unknown screen and a bad interval are usage errors.
func TestTUIUsage(t *testing.T) {
	for _, args := range [][]string{{"tui", "nope"}, {"tui", "--refresh", "0s"}} {
		if r := klogRun(t, "127.0.0.1:1", "", args...); r.code != exitUsage {
			t.Errorf("klog %q: exit %d, want %d; stderr:\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
}

//go:build linux

package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/klogdev/klog/internal/testkit"
)

// openPTY opens a pseudo-terminal: the side a test types into and reads
// the echo from, and the terminal klog reads.
func openPTY(t *testing.T) (control, terminal *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { control.Close() })
	if err := unix.IoctlSetPointerInt(int(control.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(control.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { terminal.Close() })
	return control, terminal
}

// TestUserCreatePrompt checks user create asks for the password at a
// terminal and does not echo it.
func TestUserCreatePrompt(t *testing.T) {
	b := startBroker(t)
	control, terminal := openPTY(t)
	done := make(chan result, 1)
	go func() { done <- klogRunReader(t, b, terminal, "user", "create", "alice") }()
	// Type only once klog has turned the echo off, as a person would
	// after the prompt.
	testkit.WaitFor(t, "the terminal's echo to be off", func() (bool, string) {
		tio, err := unix.IoctlGetTermios(int(terminal.Fd()), unix.TCGETS)
		return err == nil && tio.Lflag&unix.ECHO == 0, "echo on"
	})
	if _, err := control.WriteString("typed-secret\n"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 || !strings.Contains(r.stderr, "Password for alice: ") || strings.Contains(r.stdout+r.stderr, "typed-secret") {
		t.Fatalf("prompted create: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// What the terminal shows, all there by now: nothing typed came back.
	// (Fd puts the file in blocking mode: it is called once, before.)
	fd := int(control.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	if n, _ := unix.Read(fd, buf); n > 0 && strings.Contains(string(buf[:n]), "typed-secret") {
		t.Errorf("the password was echoed: %q", buf[:n])
	}
	if got := describedUsers(t, b); !slices.Equal(got, []string{"alice SCRAM-SHA-512/8192"}) {
		t.Errorf("described %q", got)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// detachReadyTimeout bounds how long klog up --detach waits for the cluster
// it starts to be ready: the nodes' start, the readiness probe and the
// seeds.
const detachReadyTimeout = 2 * time.Minute

// detachLogName is the detached cluster's output file in its data
// directory.
const detachLogName = "klog.log"

// runDetached is klog up --detach: it starts the same klog up in the
// background, in a session of its own with its output in a log file, and
// returns once that process says it is ready (on a pipe, file descriptor
// 3), printing its ready line. When the process exits first, the log's
// tail says why.
func runDetached(cmd *cobra.Command, g *globals, o upOptions) error {
	logFile, err := detachedLogFile(g, o)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, secretPerm(o.secure))
	if err != nil {
		return fmt.Errorf("open the log file: %w", err)
	}
	defer out.Close()
	if o.secure {
		// The log gets the ready lines, the users' passwords among them.
		if err := out.Chmod(0o600); err != nil {
			return fmt.Errorf("the log file: %w", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the klog binary: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	child := exec.Command(exe, append(append([]string{"up"}, detachedArgs(cmd.Flags())...), "--detached-log", logFile)...)
	child.Env = detachedEnv(g)
	child.Stdout, child.Stderr = out, out
	child.ExtraFiles = []*os.File{w} // readyFD
	child.SysProcAttr = detachAttr()
	err = child.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("start klog up in the background: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		child.Wait()
		close(exited)
	}()
	lines := make(chan []byte, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadBytes('\n')
		lines <- line
	}()
	ctx, cancel := context.WithTimeout(cmd.Context(), detachReadyTimeout)
	defer cancel()
	var line []byte
	select {
	case line = <-lines:
	case <-ctx.Done():
		child.Process.Kill()
		<-exited
		return fmt.Errorf("klog up not ready: %w; its output (%s):\n%s", ctx.Err(), logFile, logTail(logFile))
	}
	var info readyInfo
	if len(line) == 0 || json.Unmarshal(line, &info) != nil {
		<-exited // the pipe closed: the process ended
		return fmt.Errorf("klog up exited before it was ready (%v); its output (%s):\n%s", child.ProcessState, logFile, logTail(logFile))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "klog: running in the background, pid %d, output in %s; klog down stops it\n", info.PID, logFile)
	return printReady(cmd.OutOrStdout(), g.format, info)
}

// detachedLogFile is where a detached klog up writes its output:
// DATA-DIR/klog.log, or for --memory a new file in the state directory.
func detachedLogFile(g *globals, o upOptions) (string, error) {
	if o.memory {
		stateDir, err := defaultStateDir(g.getenv)
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			return "", fmt.Errorf("create state directory: %w", err)
		}
		f, err := os.CreateTemp(stateDir, "memory-*.log")
		if err != nil {
			return "", err
		}
		f.Close()
		return f.Name(), nil
	}
	dir := o.dataDir
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(g.getenv); err != nil {
			return "", err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	return filepath.Join(dir, detachLogName), nil
}

// detachedArgs are the klog up flags given, but --detach, for the
// background process.
func detachedArgs(flags *pflag.FlagSet) []string {
	var args []string
	flags.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "detach", "detached-log":
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return args
}

// detachedEnv is this process's environment with the variables klog reads
// as the command was given them (they differ when klog runs in-process in
// tests).
func detachedEnv(g *globals) []string {
	env := os.Environ()
	for _, k := range []string{"XDG_STATE_HOME", "XDG_DATA_HOME", "GOMEMLIMIT", "KLOG_TEST_AS_KLOG"} {
		if v := g.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// logTailLines is how much of a detached klog up's output an error shows.
const logTailLines = 20

// logTail is the last lines of the file at path.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

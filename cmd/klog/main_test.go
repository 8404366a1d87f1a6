package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestExitCodes(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "exists", 1)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"ok", []string{"topic", "list"}, 0, ""},
		{"help", []string{"--help"}, 0, ""},
		{"bare group prints help", []string{"topic"}, 0, ""},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command \"frobnicate\" for \"klog\"\nRun 'klog --help' for usage."},
		{"unknown subcommand", []string{"topic", "frob"}, 2, "unknown command \"frob\" for \"klog topic\"\nRun 'klog topic --help' for usage."},
		{"unknown flag", []string{"consume", "exists", "--nope"}, 2, "unknown flag: --nope\nRun 'klog consume --help' for usage."},
		{"missing argument", []string{"produce"}, 2, "accepts 1 arg"},
		{"usage of a subcommand", []string{"topic", "create"}, 2, "Run 'klog topic create --help' for usage."},
		{"bad offset", []string{"consume", "exists", "-o", "yesterday"}, 2, "-o"},
		{"bad format", []string{"--format", "yaml", "topic", "list"}, 2, "--format"},
		{"bad codec", []string{"produce", "exists", "-z", "brotli"}, 2, "-z"},
		{"bad acks", []string{"produce", "exists", "--acks", "2"}, 2, "--acks"},
		{"bad header", []string{"produce", "exists", "-H", "novalue"}, 2, "-H"},
		{"bad partitions", []string{"consume", "exists", "-p", "a,b"}, 2, "-p"},
		{"missing topic", []string{"consume", "absent", "-e"}, 1, `"absent"`},
		{"data dir and memory", []string{"up", "--data-dir", "x", "--memory"}, 2, "--data-dir and --memory"},
		{"durable and memory", []string{"up", "--durable", "--memory"}, 2, "--durable and --memory"},
		{"durable disagrees", []string{"up", "--durable", "--listen", "127.0.0.1:0", "-X", "klog.produce.durable=false"}, 2, "disagree"},
		{"bad admin listen", []string{"up", "--memory", "--listen", "127.0.0.1:0", "--admin-listen", "nope"}, 2, "--admin-listen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := klogRun(t, b, "", tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	old := version
	version = "1.2.3-test"
	defer func() { version = old }()
	r := klogRun(t, "", "", "--version")
	if r.code != 0 || r.stdout != "klog 1.2.3-test\n" {
		t.Errorf("--version: exit %d stdout %q", r.code, r.stdout)
	}
}

func TestBrokersFromEnv(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "envtopic", 1)
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if k == "KLOG_BROKERS" {
			return b
		}
		return ""
	}
	code := run(context.Background(), []string{"topic", "list"}, strings.NewReader(""), &stdout, &stderr, getenv)
	if code != 0 || !strings.Contains(stdout.String(), "envtopic") {
		t.Errorf("KLOG_BROKERS not used: exit %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
}

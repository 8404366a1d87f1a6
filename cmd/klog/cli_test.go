package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// result is the outcome of one in-process klog run.
type result struct {
	stdout, stderr string
	code           int
}

// klogRun runs the klog command line in-process against bootstrap with the
// given stdin. Every run is bounded so a hang fails the test instead of
// stalling it.
func klogRun(t *testing.T, bootstrap, stdin string, args ...string) result {
	t.Helper()
	return klogRunReader(t, bootstrap, strings.NewReader(stdin), args...)
}

func klogRunReader(t *testing.T, bootstrap string, stdin io.Reader, args ...string) result {
	t.Helper()
	if bootstrap != "" {
		args = append([]string{"-b", bootstrap}, args...)
	}
	return klogRunEnv(t, nil, stdin, args...)
}

// klogRunEnv runs the klog command line in-process with env as its whole
// environment, bounded as klogRun is.
func klogRunEnv(t *testing.T, env map[string]string, stdin io.Reader, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, stdin, &stdout, &stderr, func(k string) string { return env[k] })
	if ctx.Err() != nil {
		t.Fatalf("klog %q did not finish in time; stderr:\n%s", args, stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// mustRun runs klog and fails the test unless it exits 0.
func mustRun(t *testing.T, bootstrap, stdin string, args ...string) result {
	t.Helper()
	r := klogRun(t, bootstrap, stdin, args...)
	if r.code != 0 {
		t.Fatalf("klog %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// createTopic creates a topic directly with the admin API, independent of
// the command under test, with configs given as name, value pairs.
func createTopic(t *testing.T, bootstrap, topic string, partitions int32, configs ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cfg map[string]*string // name, value pairs
	for i := 0; i+1 < len(configs); i += 2 {
		if cfg == nil {
			cfg = map[string]*string{}
		}
		cfg[configs[i]] = &configs[i+1]
	}
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, 1, cfg, topic)
	if err == nil {
		err = resp.Err
	}
	if errors.Is(err, kerr.TopicAlreadyExists) {
		// On a busy machine the first CreateTopics can time out while the
		// topic is being created, as on Kafka, and the client's retry is
		// told it exists. The node is the test's own, so it is this
		// topic if its partitions are the ones asked for.
		details, derr := adm.ListTopics(ctx, topic)
		if derr == nil && len(details[topic].Partitions) == int(partitions) {
			return
		}
	}
	if err != nil {
		t.Fatalf("create topic %q: %v", topic, err)
	}
}

// produceRecords produces records directly with franz-go, synchronously.
func produceRecords(t *testing.T, bootstrap string, rs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// lines splits output into lines, dropping the final empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

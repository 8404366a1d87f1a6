package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/secure"
	"github.com/klogdev/klog/seed"
	"github.com/klogdev/klog/supervisor"
)

// readyInfo is what klog up says once it is ready: on stdout with
// --format json, in --ready-file, and to the klog up --detach that started
// it. Its JSON is versioned with klog up's output.
type readyInfo struct {
	Brokers []string `json:"brokers"`
	// ClusterID is the cluster's id, as its brokers report it.
	ClusterID string `json:"cluster_id,omitempty"`
	// Bootstrap is Brokers comma-separated, as clients take it.
	Bootstrap string `json:"bootstrap"`
	// Admin is the nodes' admin API addresses (host:port, as --admin and
	// $KLOG_ADMIN take them), AdminURLs the same as URLs.
	Admin     []string                `json:"admin,omitempty"`
	AdminURLs []string                `json:"admin_urls,omitempty"`
	DataDir   string                  `json:"data_dir,omitempty"`
	Memory    bool                    `json:"memory"`
	PID       int                     `json:"pid"`
	Log       string                  `json:"log,omitempty"`
	Nodes     []supervisor.NodeStatus `json:"nodes,omitempty"`
	// Listeners are a node's Kafka listeners by name (PLAINTEXT, SASL,
	// ...), each where clients reach it: how to find the ports --any-port
	// took for -X listeners. One node only.
	Listeners map[string]string `json:"listeners,omitempty"`
	// Secure is how to connect to the listeners of klog up --secure.
	Secure *secure.Info `json:"secure,omitempty"`
}

// seedTimeout bounds the readiness probe and the seeding of klog up.
const seedTimeout = 60 * time.Second

// readyFD is the file descriptor on which a detached klog up (one started
// with --detached-log) writes its readyInfo for the klog up --detach that
// waits for it.
const readyFD = 3

// announce finishes klog up once its node or nodes serve: a detached one
// first checks that a produce and a metadata request succeed; the seed
// topics and records are created; then the cluster is registered (with
// register), the ready file written, the ready line printed and a waiting
// klog up --detach told. It returns the registration's undo.
func announce(cmd *cobra.Command, g *globals, o upOptions, info readyInfo, register func(readyInfo) (func(), error)) (func(), error) {
	info.PID = os.Getpid()
	info.Log = o.detachedLog
	info.Bootstrap = strings.Join(info.Brokers, ",")
	for _, a := range info.Admin {
		info.AdminURLs = append(info.AdminURLs, "http://"+a+"/v1/")
	}
	spec, err := o.seedSpec()
	if err != nil {
		return nil, err
	}
	if o.detachedLog != "" || len(spec.Topics) > 0 {
		if err := probeAndSeed(cmd.Context(), g, o, info, spec, cmd); err != nil {
			return nil, err
		}
	}
	unregister, err := register(info)
	if err != nil {
		return nil, err
	}
	if o.readyFile != "" {
		if err := writeReadyFile(o.readyFile, g.format, info); err != nil {
			unregister()
			return nil, err
		}
	}
	if err := printReady(cmd.OutOrStdout(), g.format, info); err != nil {
		unregister()
		return nil, err
	}
	if o.detachedLog != "" {
		f := os.NewFile(readyFD, "ready")
		err := json.NewEncoder(f).Encode(info)
		f.Close()
		if err != nil {
			unregister()
			return nil, fmt.Errorf("tell klog up --detach: %w", err)
		}
	}
	return unregister, nil
}

// probeAndSeed waits, for a detached klog up, until a produce and a
// metadata request succeed, and applies the seeds.
func probeAndSeed(ctx context.Context, g *globals, o upOptions, info readyInfo, spec seed.Spec, cmd *cobra.Command) error {
	// The cluster's own listener: the connection flags are for clusters
	// klog's commands visit.
	cl, err := g.newClientWith(nil, append(seed.ProducerOpts(), kgo.SeedBrokers(info.Brokers...))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	if o.detachedLog != "" {
		if err := seed.WaitReady(ctx, cl, len(info.Brokers)); err != nil {
			return err
		}
	}
	if len(spec.Topics) == 0 {
		return nil
	}
	res, err := seed.Apply(ctx, cl, spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "klog: seeded: %s created, %d there already, %s\n", plural(len(res.Created), "topic"), len(res.Existing), plural(res.Records, "record"))
	return nil
}

// writeReadyFile writes info to path, whole or not at all: with --format
// json as klog up prints it, else the bootstrap list on the first line and
// the admin API URLs (comma-separated, when the nodes serve them) on the
// second.
func writeReadyFile(path, format string, info readyInfo) error {
	var b []byte
	if format == formatJSON {
		var err error
		if b, err = json.Marshal(info); err != nil {
			return err
		}
		b = append(b, '\n')
	} else {
		b = []byte(info.Bootstrap + "\n")
		if len(info.AdminURLs) > 0 {
			b = append(b, strings.Join(info.AdminURLs, ",")+"\n"...)
		}
	}
	if err := supervisor.WriteFileAtomic(path, b, secretPerm(info.Secure != nil)); err != nil {
		return fmt.Errorf("write ready file: %w", err)
	}
	return nil
}

// secretPerm is the mode of a file klog up writes its ready line to:
// its owner's alone when the line holds passwords (--secure).
func secretPerm(secret bool) os.FileMode {
	if secret {
		return 0o600
	}
	return 0o644
}

// registerSingle registers a single node for klog status and klog down; a
// node of klog up -n (child) is registered by its supervisor.
func registerSingle(g *globals, child bool) func(readyInfo) (func(), error) {
	return func(info readyInfo) (func(), error) {
		if child {
			return func() {}, nil
		}
		stateDir, err := defaultStateDir(g.getenv)
		if err != nil {
			return nil, err
		}
		return supervisor.Register(stateDir, supervisor.Registration{
			PID: info.PID, DataDir: info.DataDir, ClusterID: info.ClusterID, Brokers: info.Brokers, Admin: info.Admin, Log: info.Log,
		})
	}
}

// applyAnyPort turns --any-port into port 0 on --listen and --admin-listen,
// keeping their hosts.
func applyAnyPort(cmd *cobra.Command, o *upOptions) error {
	if !o.anyPort {
		return nil
	}
	zero := func(flag, addr string) (string, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", usagef("--%s %q: %v", flag, addr, err)
		}
		if cmd.Flags().Changed(flag) && port != "0" {
			return "", usagef("--any-port and --%s %s: give the host only (%s:0), or leave --any-port out", flag, addr, host)
		}
		return net.JoinHostPort(host, "0"), nil
	}
	var err error
	if o.listen, err = zero("listen", o.listen); err != nil {
		return err
	}
	if o.adminListen != supervisor.AdminOff && o.adminListen != "" {
		if o.adminListen, err = zero("admin-listen", o.adminListen); err != nil {
			return err
		}
	}
	return nil
}

// seedSpec is --seed FILE with the --seed-topic topics added.
func (o upOptions) seedSpec() (seed.Spec, error) {
	var s seed.Spec
	if o.seedFile != "" {
		var err error
		if s, err = seed.ParseFile(o.seedFile); err != nil {
			return seed.Spec{}, usagef("--seed: %v", err)
		}
	}
	for _, v := range o.seedTopics {
		t, err := seed.ParseTopic(v)
		if err != nil {
			return seed.Spec{}, usagef("--seed-topic: %v", err)
		}
		if err := s.Merge(seed.Spec{Topics: []seed.Topic{t}}); err != nil {
			return seed.Spec{}, usagef("--seed-topic: %v", err)
		}
	}
	return s, nil
}

// Command kfakeserver runs franz-go's kfake as a standalone single-broker
// process, the baseline peer in klog's side-by-side benchmarks
// (scripts/bench/run.sh). It persists to a data directory relying on the page
// cache (its fastest disk mode), or keeps everything in memory when no
// directory is given.
//
//	kfakeserver -listen 127.0.0.1:9092 -data-dir /tmp/d
//
// Once listening it prints a line "BROKERS=<addr>" on stdout, the same ready
// line as "klog up", and it exits on SIGINT or SIGTERM.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kfakeserver:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:9092", "host:port to listen on")
	dataDir := flag.String("data-dir", "", "persist to this directory (empty: in memory)")
	syncWrites := flag.Bool("sync", false, "fsync every produced batch (needs -data-dir)")
	flag.Parse()
	if *syncWrites && *dataDir == "" {
		return errors.New("-sync needs -data-dir")
	}

	host, portText, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("parse -listen %q: %w", *listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("parse -listen %q: bad port", *listen)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.AllowAutoTopicCreation(),
		// kfake binds 127.0.0.1; honour the host part of -listen.
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(host, p))
		}),
	}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir))
	}
	if *syncWrites {
		opts = append(opts, kfake.SyncWrites())
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("start kfake: %w", err)
	}
	for _, addr := range c.ListenAddrs() {
		fmt.Printf("BROKERS=%s\n", addr)
	}
	<-sigs
	c.Close()
	return nil
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/broker"
)

type upOptions struct {
	dataDir   string
	memory    bool
	listen    string
	advertise string
	configs   []string
	logLevel  string
	readyFile string
	memLimit  string
}

// defaultMemoryLimit is klog up's soft memory limit unless --memory-limit
// or GOMEMLIMIT says otherwise: the node's request and response budgets
// (100 MiB each by default) and its working set fit well inside it.
const defaultMemoryLimit = "448MiB"

func newUpCmd(g *globals) *cobra.Command {
	var o upOptions
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local klog broker",
		Long: `Start a klog node (controller and broker in one process) and serve Kafka
clients until interrupted (SIGINT or SIGTERM shut it down cleanly).

Data lives in a per-cluster directory that survives restarts
(default: $XDG_DATA_HOME/klog/default, else ~/.local/share/klog/default);
--memory keeps everything in memory and leaves nothing behind.

When the node is ready, klog up prints BROKERS=HOST:PORT on stdout.`,
		Example: `  klog up
  klog up --memory --listen 127.0.0.1:0
  klog up -X num.partitions=3 -X log.retention.ms=3600000`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", "", "directory for the cluster's data (default $XDG_DATA_HOME/klog/default)")
	f.BoolVar(&o.memory, "memory", false, "keep all data in memory; nothing is written to disk")
	f.StringVar(&o.listen, "listen", "127.0.0.1:9092", "Kafka listener address (port 0 picks a free port)")
	f.StringVar(&o.advertise, "advertise", "", "host:port advertised to clients (default: the listener's address)")
	f.StringArrayVarP(&o.configs, "config", "X", nil, "broker config as key=value, Kafka's names (repeatable)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&o.readyFile, "ready-file", "", "write the brokers address to this file once ready")
	f.StringVar(&o.memLimit, "memory-limit", defaultMemoryLimit, "soft memory limit of the node, as GOMEMLIMIT (e.g. 1GiB); off for none. GOMEMLIMIT in the environment wins over the default")
	cmd.MarkFlagsMutuallyExclusive("data-dir", "memory")
	return cmd
}

func runUp(cmd *cobra.Command, g *globals, o upOptions) error {
	start := time.Now()
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	if err := setMemoryLimit(o.memLimit, cmd.Flags().Changed("memory-limit"), g.getenv); err != nil {
		return err
	}
	configs := make(map[string]string, len(o.configs))
	for _, kv := range o.configs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("-X %q: want key=value", kv)
		}
		configs[k] = v
	}
	dataDir := ""
	if !o.memory {
		dataDir = o.dataDir
		if dataDir == "" {
			var err error
			if dataDir, err = defaultDataDir(g.getenv); err != nil {
				return err
			}
		}
		dataDir = filepath.Join(dataDir, "node-0")
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))

	ctx := cmd.Context()
	node, err := broker.Start(ctx, broker.Config{
		NodeID:    0,
		DataDir:   dataDir,
		Memory:    o.memory,
		Listen:    o.listen,
		Advertise: o.advertise,
		Configs:   configs,
		Logger:    logger,
	})
	if err != nil {
		return err
	}
	brokers := node.Advertised()
	if err := printReady(cmd.OutOrStdout(), g.format, brokers, dataDir, o.memory); err != nil {
		node.Close()
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "klog: ready in %s; export KLOG_BROKERS=%s\n", time.Since(start).Round(time.Millisecond), brokers)
	if o.readyFile != "" {
		if err := os.WriteFile(o.readyFile, []byte(brokers+"\n"), 0o644); err != nil {
			node.Close()
			return fmt.Errorf("write ready file: %w", err)
		}
	}

	select {
	case <-ctx.Done():
	case <-node.Done():
	}
	stopStart := time.Now()
	err = node.Close()
	logger.Info("stopped", "took", time.Since(stopStart).Round(time.Microsecond))
	return err
}

// setMemoryLimit sets the Go runtime's soft memory limit from
// --memory-limit: past it the garbage collector works harder (never more
// than about half the CPU) to stay under it; no allocation fails because of
// it. An explicit flag wins over GOMEMLIMIT, GOMEMLIMIT over the default.
func setMemoryLimit(value string, explicit bool, getenv func(string) string) error {
	if !explicit && getenv("GOMEMLIMIT") != "" {
		return nil // the runtime read it at start
	}
	limit, err := parseMemoryLimit(value)
	if err != nil {
		return usagef("--memory-limit %q: %v", value, err)
	}
	debug.SetMemoryLimit(limit)
	return nil
}

// parseMemoryLimit reads a size as GOMEMLIMIT writes it: a number of bytes
// with an optional B, KiB, MiB, GiB or TiB suffix, or "off".
func parseMemoryLimit(s string) (int64, error) {
	if s == "off" {
		return math.MaxInt64, nil
	}
	num, unit := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, unit = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/unit {
		return 0, errors.New("want a positive size such as 512MiB or 2GiB, or off")
	}
	return n * unit, nil
}

func printReady(w io.Writer, format, brokers, dataDir string, memory bool) error {
	if format == formatJSON {
		return json.NewEncoder(w).Encode(struct {
			Brokers []string `json:"brokers"`
			DataDir string   `json:"data_dir,omitempty"`
			Memory  bool     `json:"memory"`
		}{[]string{brokers}, dataDir, memory})
	}
	_, err := fmt.Fprintf(w, "BROKERS=%s\n", brokers)
	return err
}

// defaultDataDir is the per-cluster data directory used when --data-dir is
// not given.
func defaultDataDir(getenv func(string) string) (string, error) {
	if getenv != nil {
		if x := getenv("XDG_DATA_HOME"); x != "" {
			return filepath.Join(x, "klog", "default"), nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("no home directory for the default data directory; pass --data-dir or --memory")
	}
	return filepath.Join(home, ".local", "share", "klog", "default"), nil
}

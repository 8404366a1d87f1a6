// Command klog is a Kafka-compatible event streaming broker and the command
// line to work with it: start a cluster (klog up), produce and consume
// records, and administer topics.
//
// The commands are thin: each is built by a constructor taking *globals,
// parses flags into an options struct and calls a plain function that writes
// data to stdout and diagnostics to stderr. Errors travel back to main, which
// maps them to exit codes:
//
//	0  success
//	1  runtime failure, or any per-item failure (one of several topics)
//	2  usage error (unknown command or flag, bad argument)
//	3  partial answer: a describe printed what it could read and marked
//	   with "?" what it could not (a node is down), the reasons on stderr
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

const defaultBrokers = "127.0.0.1:9092"

// Exit codes returned by run.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitPartial = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes the klog command line with the given arguments and streams and
// returns the process exit code. It is main without the process: tests call
// it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	g := &globals{getenv: getenv}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(stderr, cmd, g.conn.settings.Explain(err))
}

// exitCode reports err of cmd, the command that ran, on w and maps it to
// an exit code; a usage error points at cmd's help.
func exitCode(w io.Writer, cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		path := "klog"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(w, "klog: %v\nRun '%s --help' for usage.\n", err, path)
		return exitUsage
	}
	fmt.Fprintf(w, "klog: %v\n", err)
	if errors.Is(err, ErrPartial) {
		return exitPartial
	}
	return exitFailure
}

// newRootCmd builds the klog command tree.
func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "klog",
		Short: "A Kafka-compatible event streaming broker and its command line",
		Long: `klog is a Kafka-compatible event streaming broker in one binary, and the
command line to work with any Kafka-compatible cluster.

Brokers are taken from -b/--brokers, else $KLOG_BROKERS, else the
bootstrap.servers of the client config (--command-config, -X), else ` + defaultBrokers + `.

Secured clusters: --security-protocol, --sasl-*, --tls-* and their
$KLOG_* variables, a client config file (--command-config) and client
properties (-X key=value) set how every command connects; see
docs/client-security.md.`,
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return g.resolve(cmd)
		},
	}
	root.SetVersionTemplate("klog {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &usageError{err: err}
	})
	g.register(root)

	root.AddCommand(
		newProduceCmd(g),
		newConsumeCmd(g),
		newTopicCmd(g),
		newGroupCmd(g),
		newTxnCmd(g),
		newACLCmd(g),
		newUpCmd(g),
		newNodeCmd(g),
		newLogCmd(g),
		newTUICmd(g),
		newEventsCmd(g),
		newClockCmd(g),
		newDownCmd(g),
		newStatusCmd(g),
		newSnapshotCmd(g),
		newClusterCmd(g),
		newQuotaCmd(g),
		newFeatureCmd(g),
		newBenchCmd(g),
		newUserCmd(g),
	)
	g.conn.addClientPropertyX(root)
	groupCommands(root)
	return root
}

// groupCommands makes every command that only groups subcommands (klog,
// klog topic) print its help when called bare and reject unknown
// subcommands as usage errors, instead of silently printing help.
func groupCommands(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	if c.Run == nil && c.RunE == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		}
	}
	for _, sub := range c.Commands() {
		groupCommands(sub)
	}
}

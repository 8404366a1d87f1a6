package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Output formats accepted by --format.
const (
	formatText = "text"
	formatJSON = "json"
)

// globals holds the flags and environment shared by every command.
type globals struct {
	brokers string    // -b/--brokers; resolved against $KLOG_BROKERS in resolve
	admin   string    // --admin; resolved against $KLOG_ADMIN in resolve
	format  string    // --format text|json
	verbose int       // -v, repeatable
	conn    connFlags // TLS, SASL, -X client properties, --command-config

	getenv func(string) string
	logger *slog.Logger // set by resolve, writes to the command's stderr
}

// register adds the global flags to the root command.
func (g *globals) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVarP(&g.brokers, "brokers", "b", "", "comma-separated seed brokers (default $KLOG_BROKERS, else the client config's bootstrap.servers, else "+defaultBrokers+")")
	f.StringVar(&g.admin, "admin", "", "comma-separated admin API addresses of the nodes (default $KLOG_ADMIN, else found from the brokers)")
	f.StringVar(&g.format, "format", formatText, "output format: text|json")
	f.CountVarP(&g.verbose, "verbose", "v", "log more on stderr (-vv for debug)")
	g.conn.register(root)
}

// resolve validates the global flags and fills in the defaults that depend on
// the environment. It runs before every command.
func (g *globals) resolve(cmd *cobra.Command) error {
	if g.brokers == "" && g.getenv != nil {
		g.brokers = strings.TrimSpace(g.getenv("KLOG_BROKERS"))
	}
	g.conn.resolve(cmd)
	if g.brokers == "" && (g.conn.named(g.getenv) || len(g.conn.properties) > 0) {
		s, err := g.conn.load(g.getenv)
		if err != nil {
			return err
		}
		g.brokers = s.Brokers
	}
	if g.brokers == "" {
		g.brokers = defaultBrokers
	}
	if g.admin == "" && g.getenv != nil {
		g.admin = strings.TrimSpace(g.getenv("KLOG_ADMIN"))
	}
	switch g.format {
	case formatText, formatJSON:
	default:
		return usagef("--format %q: want text or json", g.format)
	}
	level := slog.LevelWarn
	switch {
	case g.verbose >= 2:
		level = slog.LevelDebug
	case g.verbose == 1:
		level = slog.LevelInfo
	}
	g.logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	return nil
}

// seeds returns the seed broker addresses.
func (g *globals) seeds() []string {
	var out []string
	for _, b := range strings.Split(g.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// newClient returns a franz-go client for the seed brokers with klog's
// defaults: connect as the connection flags say (TLS, SASL), never
// auto-create topics, log through the command's logger, and ask for
// metadata again a quarter second after the last time, not franz-go's
// 5 s, when a leader is lost (a killed node of klog up -n has another
// leader within milliseconds).
func (g *globals) newClient(extra ...kgo.Opt) (*kgo.Client, error) {
	conn, err := g.clientOpts()
	if err != nil {
		return nil, err
	}
	return g.newClientWith(conn, extra...)
}

// newClientWith is newClient connecting with the options conn instead of
// the connection flags'.
func (g *globals) newClientWith(conn []kgo.Opt, extra ...kgo.Opt) (*kgo.Client, error) {
	logger := g.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(g.seeds()...),
		kgo.ClientID("klog"),
		kgo.WithLogger(kgoLogger{logger: logger, level: kgoLevel(g.verbose)}),
		kgo.DialTimeout(5 * time.Second),
		kgo.RetryTimeout(15 * time.Second),
		kgo.MetadataMinAge(250 * time.Millisecond),
	}
	cl, err := kgo.NewClient(slices.Concat(opts, conn, extra)...)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return cl, nil
}

// kgoLevel maps the -v count to franz-go's log level.
func kgoLevel(verbose int) kgo.LogLevel {
	switch {
	case verbose >= 2:
		return kgo.LogLevelDebug
	case verbose == 1:
		return kgo.LogLevelInfo
	default:
		return kgo.LogLevelError
	}
}

// kgoLogger routes franz-go's logs to slog.
type kgoLogger struct {
	logger *slog.Logger
	level  kgo.LogLevel
}

func (l kgoLogger) Level() kgo.LogLevel { return l.level }

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var sl slog.Level
	switch level {
	case kgo.LogLevelError:
		sl = slog.LevelError
	case kgo.LogLevelWarn:
		sl = slog.LevelWarn
	case kgo.LogLevelInfo:
		sl = slog.LevelInfo
	default:
		sl = slog.LevelDebug
	}
	l.logger.Log(context.Background(), sl, msg, keyvals...)
}

// withClients runs fn with a client and an admin client on it, closed
// afterwards.
func withClients(g *globals, fn func(*kgo.Client, *kadm.Client) error) error {
	cl, err := g.newClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	return fn(cl, kadm.NewClient(cl))
}

// withAdmin runs fn with an admin client that is closed afterwards.
func withAdmin(g *globals, fn func(*kadm.Client) error) error {
	return withClients(g, func(_ *kgo.Client, adm *kadm.Client) error { return fn(adm) })
}

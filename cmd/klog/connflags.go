package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/kafkaconn"
)

// connFlags are the flags of klog as a client of a secured cluster, and
// the settings they resolve to (kafkaconn's package doc has the sources
// and their order).
type connFlags struct {
	values        map[string]*string // by flag name
	set           map[string]string  // the flags given, by name
	insecure      bool
	properties    []string // -X/--client-property
	commandConfig string

	loaded   bool
	settings *kafkaconn.Settings
	err      error
}

// clientPropertyUsage is the help of -X/--client-property.
const clientPropertyUsage = "client property key=value, the Java client's or librdkafka's name (repeatable; " +
	"as -X on every command but klog up, whose -X sets broker configs)"

// register adds the connection flags to root as persistent flags.
// --client-property has no shorthand there: klog up's -X sets broker
// configs, so -X is added to each other command by addClientPropertyX.
func (c *connFlags) register(root *cobra.Command) {
	f := root.PersistentFlags()
	c.values = map[string]*string{}
	for _, s := range kafkaconn.Flags {
		c.values[s.Flag] = f.String(s.Flag, "", s.Usage+" ($"+s.Env+")")
	}
	f.BoolVar(&c.insecure, "tls-insecure-skip-verify", false, "do not verify the brokers' certificates (never use it for a cluster you do not own)")
	f.StringVar(&c.commandConfig, "command-config", "", "client config file, Java properties as kafka-console-* read them ($"+kafkaconn.CommandConfigEnv+")")
	f.StringArrayVar(&c.properties, "client-property", nil, clientPropertyUsage)
}

// addClientPropertyX gives every command that runs, but those with a -X
// of their own, -X as the shorthand of --client-property.
func (c *connFlags) addClientPropertyX(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		c.addClientPropertyX(sub)
	}
	if cmd.HasSubCommands() || (cmd.Run == nil && cmd.RunE == nil) || cmd.Flags().ShorthandLookup("X") != nil {
		return
	}
	cmd.Flags().StringArrayVarP(&c.properties, "client-property", "X", nil, clientPropertyUsage)
}

// resolve notes which connection flags cmd was given.
func (c *connFlags) resolve(cmd *cobra.Command) {
	c.set = map[string]string{}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if v, ok := c.values[f.Name]; ok {
			c.set[f.Name] = *v
		}
	})
}

// load resolves the connection settings once.
func (c *connFlags) load(getenv func(string) string) (*kafkaconn.Settings, error) {
	if !c.loaded {
		c.loaded = true
		c.settings, c.err = kafkaconn.Load(kafkaconn.Sources{
			Flags: c.set, InsecureSkipVerify: c.insecure, Properties: c.properties,
			CommandConfig: c.commandConfig, Getenv: getenv,
		})
		if errors.Is(c.err, kafkaconn.ErrSettings) {
			c.err = &usageError{err: c.err}
		}
	}
	return c.settings, c.err
}

// named reports whether a client config file is named, by flag or
// environment.
func (c *connFlags) named(getenv func(string) string) bool {
	return c.commandConfig != "" || (getenv != nil && strings.TrimSpace(getenv(kafkaconn.CommandConfigEnv)) != "")
}

// clientOpts are the franz-go options of the connection settings; the
// first call warns of the client properties klog ignores.
func (g *globals) clientOpts() ([]kgo.Opt, error) {
	first := !g.conn.loaded
	s, err := g.conn.load(g.getenv)
	if err != nil {
		return nil, err
	}
	if first && len(s.Ignored) > 0 && g.logger != nil {
		g.logger.Warn("ignoring client properties that only tune a producer or consumer", "properties", strings.Join(s.Ignored, ", "))
	}
	opts, err := s.Opts()
	if errors.Is(err, kafkaconn.ErrSettings) {
		return nil, &usageError{err: err}
	}
	return opts, err
}

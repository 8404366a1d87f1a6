package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/klogdev/klog/inspect"
)

// configsScreen is every config of a topic (:configs orders) or a broker
// (:configs broker/0) with its value and where it comes from, SET HERE
// for those set on the topic or broker itself (the dynamic ones).
type configsScreen struct {
	flat
	topic  string
	broker int32
	set    bool
	rows   table
	last   deltas
	count  int
}

func newConfigsScreen() *configsScreen {
	return &configsScreen{rows: table{cols: []column{{title: "KEY"}, {title: "VALUE"}, {title: "SOURCE"}, {title: "SET HERE"}}}}
}

func (c *configsScreen) name() string { return "configs" }

func (c *configsScreen) title() string {
	switch {
	case !c.set:
		return "configs"
	case c.topic == "":
		return fmt.Sprintf("configs of broker %d", c.broker)
	}
	return "configs of " + c.topic
}

func (c *configsScreen) list() *table { return &c.rows }

// setArg takes TOPIC or broker/ID.
func (c *configsScreen) setArg(arg string) error {
	topic, broker := arg, int32(-1)
	if id, ok := strings.CutPrefix(arg, "broker/"); ok {
		n, err := strconv.ParseInt(id, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("configs %q: want TOPIC or broker/ID, e.g. :configs broker/0", arg)
		}
		topic, broker = "", int32(n)
	}
	if topic != c.topic || broker != c.broker || !c.set {
		*c = *newConfigsScreen()
		c.topic, c.broker, c.set = topic, broker, true
	}
	return nil
}

func (c *configsScreen) fetch() (string, fetchFunc) {
	if !c.set {
		return "", func(context.Context, Source) (any, error) { return nil, nil }
	}
	topic, broker := c.topic, c.broker
	return c.title(), func(ctx context.Context, src Source) (any, error) { return src.Configs(ctx, topic, broker) }
}

func (c *configsScreen) loaded(_ string, v any, err error, _ time.Time) error {
	if !c.set {
		return nil
	}
	if err != nil {
		return err
	}
	var rows []row
	for _, cfg := range v.([]inspect.ConfigDescription) {
		value := "null"
		switch {
		case cfg.Sensitive:
			value = "(sensitive)"
		case cfg.Value != nil:
			value = *cfg.Value
		}
		here := ""
		if c.topic != "" && cfg.Source == "DYNAMIC_TOPIC_CONFIG" || c.topic == "" && cfg.Source == "DYNAMIC_BROKER_CONFIG" {
			here = "yes"
		}
		rows = append(rows, row{key: cfg.Key, cells: []string{cfg.Key, value, cfg.Source, here}})
	}
	c.last = c.last.mark(rows)
	c.rows.setRows(rows)
	c.count = len(rows)
	return nil
}

func (c *configsScreen) view(s Styles, width, height int) string {
	if !c.set {
		return "Whose configs? Type :configs TOPIC, or :configs broker/ID."
	}
	return fmt.Sprintf("%d configs", c.count) + "\n\n" + c.rows.view(s, width, height-2)
}

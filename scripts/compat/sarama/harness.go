package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
)

// errSkip marks a scenario the client cannot run; the wrapped text is the
// reason printed on the RESULT line.
var errSkip = errors.New("skip")

// scenarioTimeout bounds one scenario; runTimeout bounds the whole runner.
const (
	scenarioTimeout = 40 * time.Second
	runTimeout      = 150 * time.Second
)

// scenario is one entry of the compat suite. run returns a one-line detail
// on success, an error wrapping errSkip when the client cannot do it, or any
// other error for a failure.
type scenario struct {
	id  string
	run func(ctx context.Context, env *env) (string, error)
}

// env is what every scenario gets: the bootstrap brokers, a logger for
// progress on stderr, and a run-unique suffix for topic and group names.
type env struct {
	brokers []string
	log     *slog.Logger
	runID   string
}

// name returns a topic or group name unique to this run and scenario.
func (e *env) name(scenario, what string) string {
	return fmt.Sprintf("compat-%s-%s-%s-%s", client, scenario, what, e.runID)
}

// runAll runs every scenario with its own deadline, turning a panic into a
// failure so one scenario never stops the others, and prints one RESULT
// line per scenario on stdout. It returns the number of failures.
func runAll(brokersArg string, scenarios []scenario) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("client", client)
	e := &env{
		brokers: strings.Split(brokersArg, ","),
		log:     log,
		runID:   fmt.Sprintf("%x", time.Now().UnixNano()),
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	failed := 0
	for _, s := range scenarios {
		start := time.Now()
		log.Info("scenario start", "scenario", s.id)
		detail, err := runOne(ctx, e, s)
		status := "PASS"
		switch {
		case errors.Is(err, errSkip):
			status = "SKIP"
			detail = strings.TrimSuffix(err.Error(), ": "+errSkip.Error())
		case err != nil:
			status = "FAIL"
			detail = err.Error()
			failed++
		}
		log.Info("scenario done", "scenario", s.id, "status", status, "took", time.Since(start).Round(time.Millisecond))
		fmt.Printf("RESULT %s %s %s %s\n", client, s.id, status, oneLine(detail))
	}
	return failed
}

func runOne(parent context.Context, e *env, s scenario) (detail string, err error) {
	ctx, cancel := context.WithTimeout(parent, scenarioTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return s.run(ctx, e)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	const max = 300
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

// waitFor polls cond until it returns true or an error, or ctx ends.
func waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

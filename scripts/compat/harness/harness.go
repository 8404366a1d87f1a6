// Package harness runs the compat suite's scenarios for one client and
// prints the RESULT lines scripts/compat/run.sh collects (see its README).
package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
)

// ErrSkip marks a scenario the client cannot run; the wrapped text is the
// reason printed on the RESULT line.
var ErrSkip = errors.New("skip")

// scenarioTimeout bounds one scenario; runTimeout bounds the whole runner.
const (
	scenarioTimeout = 40 * time.Second
	runTimeout      = 150 * time.Second
)

// Scenario is one entry of the compat suite. run returns a one-line detail
// on success, an error wrapping ErrSkip when the client cannot do it, or any
// other error for a failure.
type Scenario struct {
	ID  string
	Run func(ctx context.Context, env *Env) (string, error)
}

// Env is what every scenario gets: the bootstrap brokers, a logger for
// progress on stderr, and a run-unique suffix for topic and group names.
type Env struct {
	Client  string
	Brokers []string
	Log     *slog.Logger
	RunID   string
	// Security is how to connect (SecurityEnv), nil for PLAINTEXT.
	Security *Security
}

// Name returns a topic or group name unique to this run and scenario.
func (e *Env) Name(scenario, what string) string {
	return fmt.Sprintf("compat-%s-%s-%s-%s", e.Client, scenario, what, e.RunID)
}

// RunAll runs every scenario (those named in only, when any) with its own
// deadline, turning a panic into a failure so one scenario never stops the
// others, and prints one RESULT line per scenario on stdout. It returns the
// number of failures.
func RunAll(client, brokersArg string, only []string, scenarios []Scenario) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("client", client)
	e := &Env{
		Client:  client,
		Brokers: strings.Split(brokersArg, ","),
		Log:     log,
		RunID:   fmt.Sprintf("%x", time.Now().UnixNano()),
	}
	sec, secErr := LoadSecurity()
	e.Security = sec
	log.Info("connecting", "security", sec.Describe())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	failed := 0
	for _, s := range scenarios {
		if len(only) > 0 && !slices.Contains(only, s.ID) {
			continue
		}
		start := time.Now()
		log.Info("scenario start", "scenario", s.ID)
		detail, err := "", secErr
		if secErr == nil {
			detail, err = runOne(ctx, e, s)
		}
		status := "PASS"
		switch {
		case errors.Is(err, ErrSkip):
			status = "SKIP"
			detail = strings.TrimSuffix(err.Error(), ": "+ErrSkip.Error())
		case err != nil:
			status = "FAIL"
			detail = err.Error()
			failed++
		}
		log.Info("scenario done", "scenario", s.ID, "status", status, "took", time.Since(start).Round(time.Millisecond))
		fmt.Printf("RESULT %s %s %s %s\n", client, s.ID, status, oneLine(detail))
	}
	return failed
}

func runOne(parent context.Context, e *Env, s Scenario) (detail string, err error) {
	ctx, cancel := context.WithTimeout(parent, scenarioTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return s.Run(ctx, e)
}

// Skipf returns an error that marks a scenario as skipped with a reason.
func Skipf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrSkip)...)
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

// WaitFor polls cond until it returns true or an error, or ctx ends.
func WaitFor(ctx context.Context, what string, cond func() (bool, error)) error {
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

// ConfigWait bounds the wait for a config change to show in DescribeConfigs:
// Kafka's brokers apply a config from the metadata log after the controller
// acknowledged the change, so a describe right after an alter may still show
// the old value. klog's shows the new one at once.
const ConfigWait = 10 * time.Second

// Eventually polls check until it returns nil, for at most d (and within
// ctx); on timeout it returns check's last error.
func Eventually(ctx context.Context, d time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var last error
	err := WaitFor(ctx, "a check to pass", func() (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

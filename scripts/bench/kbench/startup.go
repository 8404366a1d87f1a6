package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/procfs"
	"github.com/klogdev/klog/loadgen"
)

// runStartup execs the broker command in c.args and measures, from exec:
// TCP accept, the first acknowledged acks=all produce to a topic the broker
// auto-creates, then its idle RSS after c.idle, then SIGTERM to exit.
func runStartup(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	if len(c.args) == 0 {
		return errNoCommand
	}
	m["cmd"] = c.args
	if c.setupMS > 0 {
		m["setup_ms"] = round3(c.setupMS)
	}
	cmd := exec.Command(c.args[0], c.args[1:]...)
	if c.brokerLog != "" {
		f, err := os.Create(c.brokerLog)
		if err != nil {
			return fmt.Errorf("broker log: %w", err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	loadBefore := procfs.Loadavg1()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start broker: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	m["loadavg_before"] = loadBefore

	// 1. The listener accepts.
	for {
		conn, err := net.DialTimeout("tcp", c.brokers[0], 100*time.Millisecond)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case err := <-exited:
			stopped = true
			return fmt.Errorf("%w before accepting: %v", errBrokerExited, err)
		case <-ctx.Done():
			return fmt.Errorf("wait for accept: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	m["listen_ms"] = ms(time.Since(t0))

	// 2. The first acks=all produce is acknowledged; the topic does not exist
	// yet, so this includes its auto-creation.
	probe := c
	probe.topic = fmt.Sprintf("startup-probe-%d", time.Now().UnixNano())
	m["topic"] = probe.topic
	attempts := 0
	for {
		attempts++
		err := probeProduce(ctx, probe)
		if err == nil {
			break
		}
		select {
		case err := <-exited:
			stopped = true
			return fmt.Errorf("%w before the first produce: %v", errBrokerExited, err)
		default:
		}
		if ctx.Err() != nil {
			return fmt.Errorf("first produce after %d attempts: %w", attempts, err)
		}
		log.Debug("startup probe failed, retrying", "err", err)
		time.Sleep(time.Millisecond)
	}
	m["first_produce_ms"] = ms(time.Since(t0))
	m["probe_attempts"] = attempts
	pid := cmd.Process.Pid
	s, err := procfs.Read(pid)
	if err != nil {
		return err
	}
	m["rss_after_first_produce_mb"] = round3(float64(s.RSSKB) / 1024)
	busy := s.CPU()

	// 3. Idle memory, no client connected.
	select {
	case <-time.After(c.idle):
	case err := <-exited:
		stopped = true
		return fmt.Errorf("%w while idle: %v", errBrokerExited, err)
	case <-ctx.Done():
		return ctx.Err()
	}
	if s, err = procfs.Read(pid); err != nil {
		return err
	}
	m["idle_s"] = c.idle.Seconds()
	m["idle_rss_mb"] = round3(float64(s.RSSKB) / 1024)
	m["idle_hwm_mb"] = round3(float64(s.HWMKB) / 1024)
	m["startup_cpu_s"] = round3(s.CPU())
	// What the broker spends doing nothing: timers, heartbeats, checkpoints.
	m["idle_cpu_ms_per_s"] = round3((s.CPU() - busy) * 1000 / c.idle.Seconds())

	// 4. Graceful shutdown.
	t1 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case err := <-exited:
		stopped = true
		m["shutdown_ms"] = ms(time.Since(t1))
		if err != nil {
			m["exit"] = err.Error()
		}
	case <-time.After(c.grace):
		return fmt.Errorf("%w within %v", errShutdownTimeout, c.grace)
	}
	return nil
}

// probeProduce sends one record with a fresh client, bounded in time.
func probeProduce(ctx context.Context, c config) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	opts, err := loadgen.ProducerOptions(c.load())
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(append(opts, kgo.RecordRetries(10))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(ctx, &kgo.Record{Value: []byte("hello")}).FirstErr()
}

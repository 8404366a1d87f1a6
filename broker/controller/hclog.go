package controller

import (
	"context"
	"io"
	"log"
	"log/slog"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// raftLogger forwards the Raft library's hclog output to slog. Raft logs
// routine events (elections, state changes) at info and warn, so its levels
// are lowered one step: trace and debug become slog debug-4, info becomes
// debug, warn becomes info; errors stay errors. A node at the default info
// level therefore hears from Raft only about real trouble.
type raftLogger struct {
	l    *slog.Logger
	name string
	args []any
}

var _ hclog.Logger = (*raftLogger)(nil)

func newRaftLogger(l *slog.Logger) *raftLogger {
	return &raftLogger{l: l.With("component", "raft")}
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug - 4
	case hclog.Info, hclog.Warn, hclog.NoLevel:
		return slog.LevelDebug
	default:
		return slog.LevelError
	}
}

// peerErrors are the errors Raft logs when a peer cannot be reached or a
// connection to it closes: routine while a voter is down, restarting or
// isolated, so they are warnings (Kafka warns when a node is unreachable).
var peerErrors = []string{
	"failed to appendEntries to",
	"failed to heartbeat to",
	"failed to make requestVote RPC",
	"failed to decode incoming command",
	"failed to pipeline appendEntries",
	"failed to start pipeline replication to",
	"failed to flush response",
}

func (r *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	lvl := slogLevel(level)
	if level == hclog.Error && slices.ContainsFunc(peerErrors, func(p string) bool { return strings.HasPrefix(msg, p) }) {
		lvl = slog.LevelWarn
	}
	ctx := context.Background()
	if !r.l.Enabled(ctx, lvl) {
		return
	}
	if r.name != "" {
		msg = r.name + ": " + msg
	}
	all := append(append([]any(nil), r.args...), args...)
	r.l.Log(ctx, lvl, msg, all...)
}

func (r *raftLogger) Trace(msg string, args ...any) { r.Log(hclog.Trace, msg, args...) }
func (r *raftLogger) Debug(msg string, args ...any) { r.Log(hclog.Debug, msg, args...) }
func (r *raftLogger) Info(msg string, args ...any)  { r.Log(hclog.Info, msg, args...) }
func (r *raftLogger) Warn(msg string, args ...any)  { r.Log(hclog.Warn, msg, args...) }
func (r *raftLogger) Error(msg string, args ...any) { r.Log(hclog.Error, msg, args...) }

func (r *raftLogger) enabled(level hclog.Level) bool {
	return r.l.Enabled(context.Background(), slogLevel(level))
}

func (r *raftLogger) IsTrace() bool { return r.enabled(hclog.Trace) }
func (r *raftLogger) IsDebug() bool { return r.enabled(hclog.Debug) }
func (r *raftLogger) IsInfo() bool  { return r.enabled(hclog.Info) }
func (r *raftLogger) IsWarn() bool  { return r.enabled(hclog.Warn) }
func (r *raftLogger) IsError() bool { return r.enabled(hclog.Error) }

func (r *raftLogger) ImpliedArgs() []any { return append([]any(nil), r.args...) }

func (r *raftLogger) With(args ...any) hclog.Logger {
	n := *r
	n.args = append(append([]any(nil), r.args...), args...)
	return &n
}

func (r *raftLogger) Name() string { return r.name }

func (r *raftLogger) Named(name string) hclog.Logger {
	n := *r
	if n.name != "" {
		n.name += "." + name
	} else {
		n.name = name
	}
	return &n
}

func (r *raftLogger) ResetNamed(name string) hclog.Logger {
	n := *r
	n.name = name
	return &n
}

// SetLevel is a no-op: the slog handler decides what is logged.
func (r *raftLogger) SetLevel(hclog.Level) {}

// GetLevel reports the lowest hclog level that would be logged.
func (r *raftLogger) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if r.enabled(l) {
			return l
		}
	}
	return hclog.Off
}

func (r *raftLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(r.StandardWriter(opts), "", 0)
}

func (r *raftLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		r.Log(hclog.Info, string(trimNewline(p)))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}

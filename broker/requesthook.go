package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// RequestHook sees every request a node decodes, from clients and from
// the other nodes alike (followers' fetches, say), before its handler
// runs, for tests that fail, delay or answer chosen requests (package
// brokertest builds its controls on it). With handled false the request
// goes on to its handler; with handled true resp is sent instead (nil:
// nothing is sent) and a non-nil err closes the connection, as a
// handler's does. It runs on the connection's goroutine, so a hook that
// blocks holds that connection's later requests too; ctx ends when the
// node closes. rc is the request's context: its listener, its
// connection's principal.
type RequestHook func(ctx context.Context, rc *wire.RequestContext, req kmsg.Request) (resp kmsg.Response, handled bool, err error)

// RetentionNow runs the node's retention pass over every log now, the
// pass it otherwise runs every log.retention.check.interval.ms: segments
// past retention.ms or retention.bytes, and those wholly below the log
// start offset, are deleted (never the active segment).
func (n *Node) RetentionNow() { n.logs.ApplyRetention(time.Now()) }

package loadgen

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Throttles is what the brokers' quotas made a run's client wait: the
// answers that carried a throttle time (franz-go's OnBrokerThrottle),
// their sum and the longest.
type Throttles struct {
	Count      int64
	Total, Max time.Duration
}

// throttleTally counts the throttle times a client is told (a
// kgo.HookBrokerThrottle).
type throttleTally struct {
	mu sync.Mutex
	t  Throttles
}

func (t *throttleTally) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t.Count++
	t.t.Total += d
	t.t.Max = max(t.t.Max, d)
}

func (t *throttleTally) get() Throttles {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.t
}

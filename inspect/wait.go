package inspect

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Waiting for a cluster that is still setting something up: Kafka creates
// topics, its coordinator topics included, asynchronously, and answers as
// if they did not exist until they do.

// CoordinatorType is the kind of key a coordinator is found for.
type CoordinatorType int8

// The coordinator types of FindCoordinator.
const (
	GroupCoordinator       CoordinatorType = 0
	TransactionCoordinator CoordinatorType = 1
)

// coordinatorWait bounds how long WaitCoordinators waits for a cluster to
// create and load its coordinator topic.
const coordinatorWait = 20 * time.Second

// firstBackoff is the first pause between two lookups; each pause doubles,
// up to maxBackoff.
const (
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = time.Second
)

// pause waits *backoff or until ctx ends, reports which, and doubles
// *backoff up to maxBackoff.
func pause(ctx context.Context, backoff *time.Duration) bool {
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(2**backoff, maxBackoff)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// WaitCoordinators looks up the coordinators of keys (group names or
// transactional ids) until none answers that its coordinator is not
// available yet, for at most 20 seconds or until ctx ends.
//
// Kafka creates __consumer_offsets and __transaction_state on the first
// FindCoordinator for them and answers COORDINATOR_NOT_AVAILABLE until the
// topic exists and its partitions are loaded. franz-go retries such a
// lookup for a client's own group or transaction, but not inside an admin
// request (kadm's FetchOffsets, DescribeGroups, DescribeTransactions,
// DeleteGroups...): there it fails the request. So the first admin request
// about a group or a transactional id on a fresh Kafka cluster fails unless
// WaitCoordinators runs before it. Coordinators that are ready answer the
// first lookup.
//
// It is best effort and reports nothing: whatever remains wrong, the
// request made after it reports.
func WaitCoordinators(ctx context.Context, adm *kadm.Client, typ CoordinatorType, keys ...string) {
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, coordinatorWait)
	defer cancel()
	backoff := firstBackoff
	for {
		var resps kadm.FindCoordinatorResponses
		if typ == TransactionCoordinator {
			resps = adm.FindTxnCoordinators(ctx, keys...)
		} else {
			resps = adm.FindGroupCoordinators(ctx, keys...)
		}
		if !coordinatorsLoading(resps) || !pause(ctx, &backoff) {
			return
		}
	}
}

// coordinatorsLoading reports whether some key's coordinator is not
// available or still loading.
func coordinatorsLoading(resps kadm.FindCoordinatorResponses) bool {
	for _, r := range resps {
		if errors.Is(r.Err, kerr.CoordinatorNotAvailable) || errors.Is(r.Err, kerr.CoordinatorLoadInProgress) {
			return true
		}
	}
	return false
}

// WaitTopic looks topic up until it exists, for at most wait or until ctx
// ends, and returns its details as LookupTopics does. It is for a topic the
// cluster was just asked to create: Kafka creates it asynchronously and
// meanwhile answers UNKNOWN_TOPIC_OR_PARTITION (or LEADER_NOT_AVAILABLE).
// When the wait ends first, the error is the last lookup's, wrapping
// ErrTopicNotFound if the topic never appeared.
//
// The lookups go through a client of their own from newClient: a client's
// admin lookups share its metadata cache, which would keep answering that
// the topic does not exist for MetadataMinAge (5 s by default).
func WaitTopic(ctx context.Context, newClient ClientFunc, topic string, wait time.Duration) (kadm.TopicDetails, error) {
	cl, err := newClient(kgo.MetadataMinAge(10 * time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	backoff := firstBackoff
	var last error
	for {
		details, err := LookupTopics(ctx, adm, []string{topic})
		switch {
		case err == nil:
			return details, nil
		case errors.Is(err, ErrTopicNotFound), errors.Is(err, kerr.LeaderNotAvailable):
			last = err
		case ctx.Err() != nil && last != nil:
			return nil, last // the lookup was cut short by the wait's end
		default:
			return nil, err
		}
		if !pause(ctx, &backoff) {
			return nil, last
		}
	}
}

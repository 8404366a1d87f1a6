package inspect

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrTopicNotFound reports that a topic does not exist. Nothing in this
// package creates topics.
var ErrTopicNotFound = errors.New("topic does not exist")

// ErrPartitionNotFound reports that a partition does not exist in its topic.
var ErrPartitionNotFound = errors.New("partition does not exist")

// ErrGroupNotFound reports that a group does not exist: no members and no
// committed offsets.
var ErrGroupNotFound = errors.New("group does not exist")

// ErrTransactionNotFound reports that a transactional id is not known to its
// coordinator.
var ErrTransactionNotFound = errors.New("transactional id does not exist")

// ErrNoResponse reports an item (a group, a partition) missing from a
// broker's answer that otherwise succeeded.
var ErrNoResponse = errors.New("no response from the broker")

// NoResponse explains an item missing from an answer: err, the error of the
// request, if any, else ErrNoResponse.
func NoResponse(err error) error {
	if err != nil {
		return err
	}
	return ErrNoResponse
}

// ErrorText renders a per-item error of a Kafka answer together with the
// broker's message, when it adds to the error.
func ErrorText(err error, brokerMessage string) string {
	if err == nil {
		return ""
	}
	if brokerMessage != "" && !strings.Contains(err.Error(), brokerMessage) {
		return err.Error() + ": " + brokerMessage
	}
	return err.Error()
}

// unreachable reports whether err is a failure to connect to a broker,
// or an answer naming a topic by an ID the client could not resolve
// because it could not reach a broker to ask.
func unreachable(err error) bool {
	op, ok := errors.AsType[*net.OpError](err)
	return ok && op.Op == "dial" || errors.Is(err, kerr.UnknownTopicID)
}

// reach calls try, and again while it fails to connect to a broker, at
// most once more per broker of the cluster. A group or transaction request
// first asks some broker for the coordinator, the next one in turn each
// time, and franz-go does not retry that lookup: with a node down it
// fails where the next try, asking another broker, gets through. A
// coordinator that is itself down fails every try.
func reach(ctx context.Context, adm *kadm.Client, try func() error) error {
	err := try()
	if !unreachable(err) {
		return err
	}
	md, mdErr := adm.BrokerMetadata(ctx)
	if mdErr != nil {
		return err
	}
	for range md.Brokers {
		if err = try(); !unreachable(err) {
			return err
		}
	}
	return err
}

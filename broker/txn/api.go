package txn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnSnapshot is the state of one transactional id, for inspection.
type TxnSnapshot struct {
	TransactionalID string
	Partition       int32 // its __transaction_state partition
	ProducerID      int64
	ProducerEpoch   int16
	State           string
	Timeout         time.Duration
	StartTime       time.Time // zero when no transaction is in flight
	LastUpdate      time.Time
	Partitions      []TopicPartition // sorted
	MarkersPending  bool             // markers of the ending transaction are being written
	// Markers is the outcome of the markers of the last or current end,
	// by partition (in memory only; none before the first end this
	// coordinator ran). Shared: do not modify.
	Markers []MarkerOutcome

	persisted bool
}

// snapshot copies the actor's state. It runs on the actor goroutine.
func (a *actor) snapshot() TxnSnapshot {
	m := a.m
	s := TxnSnapshot{
		TransactionalID: m.id,
		Partition:       a.part,
		ProducerID:      m.producerID,
		ProducerEpoch:   m.epoch,
		State:           m.state.String(),
		Timeout:         time.Duration(m.timeoutMillis) * time.Millisecond,
		LastUpdate:      time.UnixMilli(m.lastUpdate),
		Partitions:      m.sortedPartitions(),
		MarkersPending:  m.markers,
		persisted:       m.persisted && m.state != StateDead,
	}
	if m.start >= 0 {
		s.StartTime = time.UnixMilli(m.start)
	}
	return s
}

// Snapshot returns the state of every transactional id this node
// coordinates, sorted by id.
func (c *Coordinator) Snapshot() []TxnSnapshot {
	c.rt.Lock()
	defer c.rt.Unlock()
	ras := c.rt.ActorsLocked()
	out := make([]TxnSnapshot, 0, len(ras))
	for _, ra := range ras {
		if a := ra.State(); a.snap.persisted {
			s := a.snap
			s.Markers = a.markersLocked()
			out = append(out, s)
		}
	}
	return out
}

// Code maps an error of this package to its Kafka error code.
func Code(err error) int16 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotCoordinator):
		return kerr.NotCoordinator.Code
	case errors.Is(err, ErrLoadInProgress):
		return kerr.CoordinatorLoadInProgress.Code
	case errors.Is(err, ErrCoordinatorNotAvailable), errors.Is(err, ErrClosed):
		return kerr.CoordinatorNotAvailable.Code
	case errors.Is(err, ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, ErrProducerFenced):
		return kerr.ProducerFenced.Code
	case errors.Is(err, ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, ErrInvalidProducerIDMapping):
		return kerr.InvalidProducerIDMapping.Code
	case errors.Is(err, ErrConcurrentTransactions):
		return kerr.ConcurrentTransactions.Code
	case errors.Is(err, ErrTimedOut):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, errInvalidRequest):
		return kerr.InvalidRequest.Code
	case errors.Is(err, ErrClusterAuthorizationFailed):
		return kerr.ClusterAuthorizationFailed.Code
	default:
		return kerr.UnknownServerError.Code
	}
}

// fencedCode maps PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for request
// versions older than fencedSince, which predate PRODUCER_FENCED.
func fencedCode(err error, version, fencedSince int16) int16 {
	code := Code(err)
	if code == kerr.ProducerFenced.Code && version < fencedSince {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// InitProducerID serves a transactional InitProducerID: it creates the
// transactional id on first use, bumps the epoch (fencing zombies), aborts
// an ongoing transaction first (the request then answers
// CONCURRENT_TRANSACTIONS and the client retries), accepts KIP-360 bumps
// with the current producer id and epoch, and rotates to a new producer id
// when the epoch is exhausted.
func (c *Coordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID == nil {
		pid, err := c.allocProducerID(ctx)
		if err != nil {
			resp.ErrorCode = Code(err)
			return resp
		}
		resp.ProducerID, resp.ProducerEpoch = pid, 0
		return resp
	}
	id := *req.TransactionalID
	expected := req.Version >= 3 && (req.ProducerID != -1 || req.ProducerEpoch != -1)
	switch {
	case id == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	case req.TransactionTimeoutMillis <= 0 || time.Duration(req.TransactionTimeoutMillis)*time.Millisecond > c.cfg.MaxTimeout:
		resp.ErrorCode = kerr.InvalidTransactionTimeout.Code
		return resp
	case expected && (req.ProducerID == -1 || req.ProducerEpoch == -1):
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	var err error
	_, rerr := c.run(ctx, id, true, func(a *actor) {
		resp.ProducerID, resp.ProducerEpoch, err = a.initProducerID(req.TransactionTimeoutMillis, expected, req.ProducerID, req.ProducerEpoch)
	})
	if rerr != nil {
		err = rerr
	}
	if err != nil {
		resp.ProducerID, resp.ProducerEpoch = -1, -1
		resp.ErrorCode = fencedCode(err, req.Version, 4)
	}
	return resp
}

func (c *Coordinator) allocProducerID(ctx context.Context) (int64, error) {
	if c.cfg.ProducerIDs == nil {
		return -1, fmt.Errorf("allocate producer id: %w: no allocator", ErrCoordinatorNotAvailable)
	}
	ctx, cancel := context.WithTimeout(ctx, producerIDTimeout)
	defer cancel()
	pid, err := c.cfg.ProducerIDs(ctx)
	if err != nil {
		return -1, fmt.Errorf("allocate producer id: %w: %w", ErrCoordinatorNotAvailable, err)
	}
	return pid, nil
}

func (a *actor) initProducerID(timeoutMillis int32, expected bool, expPID int64, expEpoch int16) (int64, int16, error) {
	m := a.m
	if m.producerID == -1 { // a new id: its producer id is kept even if the first write fails
		pid, err := a.c.allocProducerID(a.ctx)
		if err != nil {
			return -1, -1, err
		}
		m.producerID = pid
	}
	if expected && m.epoch != -1 && expPID != m.producerID && (expPID != m.prevProducerID || !epochExhausted(expEpoch)) {
		return -1, -1, fmt.Errorf("init producer id of %q with producer id %d: %w", a.id, expPID, ErrProducerFenced)
	}
	now := a.now()
	var next *meta
	switch m.state {
	case StatePrepareCommit, StatePrepareAbort:
		return -1, -1, fmt.Errorf("init producer id of %q in %s: %w", a.id, m.state, ErrConcurrentTransactions)
	case StateOngoing:
		if err := a.abortFenced(); err != nil {
			return -1, -1, err
		}
		return -1, -1, fmt.Errorf("init producer id of %q: ongoing transaction aborted: %w", a.id, ErrConcurrentTransactions)
	case StateEmpty, StateCompleteCommit, StateCompleteAbort:
		switch {
		case epochExhausted(m.epoch) && (!expected || expEpoch == m.epoch):
			pid, err := a.c.allocProducerID(a.ctx)
			if err != nil {
				return -1, -1, err
			}
			last := int16(-1)
			if expected {
				last = m.epoch
			}
			next = m.toEmpty(pid, 0, last, timeoutMillis, now)
		case !expected:
			next = m.toEmpty(m.producerID, m.epoch+1, -1, timeoutMillis, now)
		case m.epoch == -1 || expEpoch == m.epoch:
			next = m.toEmpty(m.producerID, m.epoch+1, m.epoch, timeoutMillis, now)
		case expEpoch == m.lastEpoch:
			// A retry of a bump that succeeded: answer the current epoch.
			next = m.toEmpty(m.producerID, m.epoch, m.lastEpoch, timeoutMillis, now)
		default:
			return -1, -1, fmt.Errorf("init producer id of %q with epoch %d (current %d): %w", a.id, expEpoch, m.epoch, ErrProducerFenced)
		}
	default:
		return -1, -1, fmt.Errorf("init producer id of %q in %s: %w", a.id, m.state, ErrInvalidTxnState)
	}
	if err := a.persist(next); err != nil {
		return -1, -1, err
	}
	a.c.log.Info("initialized transactional id", "transactional_id", a.id, "producer_id", next.producerID, "epoch", next.epoch)
	return next.producerID, next.epoch, nil
}

// checkProducer validates the producer id and epoch of a request.
func (a *actor) checkProducer(pid int64, epoch int16) error {
	m := a.m
	if !m.persisted || m.producerID != pid {
		return fmt.Errorf("transactional id %q has no producer id %d: %w", a.id, pid, ErrInvalidProducerIDMapping)
	}
	if m.epoch != epoch {
		return fmt.Errorf("transactional id %q is at epoch %d, request has %d: %w", a.id, m.epoch, epoch, ErrProducerFenced)
	}
	return nil
}

// addPartitions adds tps to the transaction, starting one if idle, at
// transaction version txnVersion.
func (a *actor) addPartitions(pid int64, epoch int16, txnVersion int16, tps []TopicPartition) error {
	if err := a.checkProducer(pid, epoch); err != nil {
		return err
	}
	m := a.m
	switch m.state {
	case StatePrepareCommit, StatePrepareAbort:
		return fmt.Errorf("add partitions to %q in %s: %w", a.id, m.state, ErrConcurrentTransactions)
	case StateOngoing:
		all := true
		for _, tp := range tps {
			if _, ok := m.partitions[tp]; !ok {
				all = false
				break
			}
		}
		if all {
			return nil
		}
	}
	return a.persist(m.toOngoing(tps, txnVersion, a.now()))
}

// verify is the KIP-890 check: is tp in the ongoing transaction of
// pid/epoch?
func (a *actor) verify(pid int64, epoch int16, tp TopicPartition) error {
	m := a.m
	if !m.persisted || m.producerID != pid {
		return fmt.Errorf("transactional id %q has no producer id %d: %w", a.id, pid, ErrInvalidProducerIDMapping)
	}
	if epoch < m.epoch {
		return fmt.Errorf("transactional id %q is at epoch %d, produce has %d: %w", a.id, m.epoch, epoch, ErrProducerFenced)
	}
	if epoch > m.epoch {
		return fmt.Errorf("transactional id %q is at epoch %d, produce has %d: %w", a.id, m.epoch, epoch, ErrInvalidProducerEpoch)
	}
	if m.state == StatePrepareCommit || m.state == StatePrepareAbort {
		return fmt.Errorf("transactional id %q in %s: %w", a.id, m.state, ErrConcurrentTransactions)
	}
	if _, ok := m.partitions[tp]; !ok || m.state != StateOngoing {
		return fmt.Errorf("%s-%d is not in the transaction of %q: %w", tp.Topic, tp.Partition, a.id, ErrInvalidTxnState)
	}
	return nil
}

// VerifyPartition answers the check the partition leader makes before
// accepting a transactional produce: nil when pid/epoch has tp in its
// ongoing transaction. Otherwise ErrInvalidTxnState (not in the
// transaction), ErrProducerFenced (an older epoch), ErrInvalidProducerEpoch
// (a newer epoch), ErrInvalidProducerIDMapping (another or no producer id),
// ErrConcurrentTransactions (the transaction is ending), or ErrNotCoordinator
// / ErrLoadInProgress / ErrTimedOut.
func (c *Coordinator) VerifyPartition(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, tp TopicPartition) error {
	var err error
	found, rerr := c.run(ctx, transactionalID, false, func(a *actor) {
		err = a.verify(producerID, producerEpoch, tp)
	})
	switch {
	case rerr != nil:
		return rerr
	case !found:
		return fmt.Errorf("transactional id %q: %w", transactionalID, ErrInvalidProducerIDMapping)
	}
	return err
}

// Kafka's add.partitions.to.txn.retry.backoff.ms and .max.ms defaults: a
// partition leader adding a partition for a produce retries
// CONCURRENT_TRANSACTIONS (the previous transaction's markers are being
// written) every addPartitionBackoff for at most addPartitionRetryMax.
const (
	addPartitionBackoff  = 20 * time.Millisecond
	addPartitionRetryMax = 100 * time.Millisecond
)

// RetryConcurrent calls add until it returns anything but
// ErrConcurrentTransactions, every 20 ms for at most 100 ms, as Kafka's
// partition leader retries an implicit add (transaction version 2) while
// the previous transaction's markers are written; it returns add's last
// error.
func RetryConcurrent(ctx context.Context, add func() error) error {
	deadline := time.Now().Add(addPartitionRetryMax)
	for {
		err := add()
		if !errors.Is(err, ErrConcurrentTransactions) || time.Now().Add(addPartitionBackoff).After(deadline) {
			return err
		}
		t := time.NewTimer(addPartitionBackoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// AddPartition is the write path of transaction version 2 (KIP-890 part
// 2): a produce v12+ or a TxnOffsetCommit v5+ adds its partition to the
// producer's transaction itself, starting one if none is open, as Kafka's
// partition leader does through AddPartitionsToTxnManager (the
// addPartition operation). It returns nil once tp is in the ongoing
// transaction of pid/epoch; otherwise ErrInvalidProducerIDMapping
// (another or no producer id), ErrProducerFenced (another epoch),
// ErrConcurrentTransactions (the previous transaction still ending after
// the retries, RetryConcurrent), or ErrNotCoordinator / ErrLoadInProgress
// / ErrTimedOut.
func (c *Coordinator) AddPartition(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, tp TopicPartition) error {
	return RetryConcurrent(ctx, func() error {
		var err error
		found, rerr := c.run(ctx, transactionalID, false, func(a *actor) {
			err = a.addPartitions(producerID, producerEpoch, 2, []TopicPartition{tp})
		})
		switch {
		case rerr != nil:
			return rerr
		case !found:
			return fmt.Errorf("transactional id %q: %w", transactionalID, ErrInvalidProducerIDMapping)
		}
		return err
	})
}

// unknownPartitions returns the partitions of topics that do not exist.
func (c *Coordinator) unknownPartitions(tps []TopicPartition) map[TopicPartition]bool {
	if c.cfg.Topics == nil {
		return nil
	}
	topics := c.cfg.Topics()
	var bad map[TopicPartition]bool
	for _, tp := range tps {
		t, ok := topics[tp.Topic]
		if !ok || tp.Partition < 0 || tp.Partition >= t.Partitions {
			if bad == nil {
				bad = make(map[TopicPartition]bool)
			}
			bad[tp] = true
		}
	}
	return bad
}

// addPartitions serves one transaction of AddPartitionsToTxn: the error of
// each partition.
func (c *Coordinator) addPartitions(ctx context.Context, version int16, id string, pid int64, epoch int16, verifyOnly bool, tps []TopicPartition) map[TopicPartition]int16 {
	out := make(map[TopicPartition]int16, len(tps))
	all := func(code int16) map[TopicPartition]int16 {
		for _, tp := range tps {
			out[tp] = code
		}
		return out
	}
	if id == "" {
		return all(kerr.InvalidRequest.Code)
	}
	if verifyOnly {
		var perr error
		found, rerr := c.run(ctx, id, false, func(a *actor) {
			for _, tp := range tps {
				err := a.verify(pid, epoch, tp)
				if errors.Is(err, ErrInvalidProducerIDMapping) || errors.Is(err, ErrProducerFenced) ||
					errors.Is(err, ErrInvalidProducerEpoch) || errors.Is(err, ErrConcurrentTransactions) {
					perr = err
					return
				}
				out[tp] = Code(err)
				if errors.Is(err, ErrInvalidTxnState) && version >= 5 {
					out[tp] = kerr.TransactionAbortable.Code
				}
			}
		})
		switch {
		case rerr != nil:
			return all(Code(rerr))
		case !found:
			return all(kerr.InvalidProducerIDMapping.Code)
		case perr != nil:
			if errors.Is(perr, ErrInvalidProducerEpoch) {
				perr = ErrProducerFenced
			}
			return all(Code(perr))
		}
		return out
	}
	if bad := c.unknownPartitions(tps); len(bad) > 0 {
		for _, tp := range tps {
			out[tp] = kerr.OperationNotAttempted.Code
			if bad[tp] {
				out[tp] = kerr.UnknownTopicOrPartition.Code
			}
		}
		return out
	}
	// As Kafka's TransactionVersion.transactionVersionForAddPartitionsToTxn:
	// v4+ comes from a partition leader adding a partition for a produce
	// of transaction version 2.
	txnVersion := int16(0)
	if version >= 4 {
		txnVersion = 2
	}
	var err error
	found, rerr := c.run(ctx, id, false, func(a *actor) { err = a.addPartitions(pid, epoch, txnVersion, tps) })
	switch {
	case rerr != nil:
		err = rerr
	case !found:
		err = fmt.Errorf("transactional id %q: %w", id, ErrInvalidProducerIDMapping)
	}
	return all(fencedCode(err, version, 2))
}

// AddPartitionsToTxn adds partitions to a transaction (v0-3: the one
// transaction of the request; v4+: a batch of transactions, each either
// added or, with VerifyOnly, checked as KIP-890 partition leaders do).
func (c *Coordinator) AddPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version < 4 {
		tps := requestPartitions(req.Topics)
		res := c.addPartitions(ctx, req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, tps)
		resp.Topics = responseTopics(tps, res)
		return resp
	}
	for _, t := range req.Transactions {
		var tps []TopicPartition
		for _, tt := range t.Topics {
			for _, p := range tt.Partitions {
				tps = append(tps, TopicPartition{tt.Topic, p})
			}
		}
		res := c.addPartitions(ctx, req.Version, t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly, tps)
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = t.TransactionalID
		for _, topic := range responseTopics(tps, res) {
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = topic.Topic
			for _, p := range topic.Partitions {
				pp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				pp.Partition, pp.ErrorCode = p.Partition, p.ErrorCode
				tt.Partitions = append(tt.Partitions, pp)
			}
			rt.Topics = append(rt.Topics, tt)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp
}

func requestPartitions(topics []kmsg.AddPartitionsToTxnRequestTopic) []TopicPartition {
	var tps []TopicPartition
	for _, t := range topics {
		for _, p := range t.Partitions {
			tps = append(tps, TopicPartition{t.Topic, p})
		}
	}
	return tps
}

// responseTopics groups per-partition results by topic in request order.
func responseTopics(tps []TopicPartition, res map[TopicPartition]int16) []kmsg.AddPartitionsToTxnResponseTopic {
	var out []kmsg.AddPartitionsToTxnResponseTopic
	idx := make(map[string]int)
	seen := make(map[TopicPartition]bool)
	for _, tp := range tps {
		if seen[tp] {
			continue
		}
		seen[tp] = true
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(out)
			idx[tp.Topic] = i
			t := kmsg.NewAddPartitionsToTxnResponseTopic()
			t.Topic = tp.Topic
			out = append(out, t)
		}
		p := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
		p.Partition, p.ErrorCode = tp.Partition, res[tp]
		out[i].Partitions = append(out[i].Partitions, p)
	}
	return out
}

// AddOffsetsToTxn adds the __consumer_offsets partition of the group to the
// transaction, so its TxnOffsetCommit is committed or aborted with it.
func (c *Coordinator) AddOffsetsToTxn(ctx context.Context, req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if req.TransactionalID == "" {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	tp := c.cfg.GroupPartition(req.Group)
	var err error
	found, rerr := c.run(ctx, req.TransactionalID, false, func(a *actor) {
		err = a.addPartitions(req.ProducerID, req.ProducerEpoch, 0, []TopicPartition{tp})
	})
	switch {
	case rerr != nil:
		err = rerr
	case !found:
		err = fmt.Errorf("transactional id %q: %w", req.TransactionalID, ErrInvalidProducerIDMapping)
	}
	resp.ErrorCode = fencedCode(err, req.Version, 2)
	return resp
}

// EndTxn commits or aborts the ongoing transaction in two phases: it writes
// PrepareCommit or PrepareAbort and answers; the markers are then written
// through Markers and CompleteCommit or CompleteAbort follows.
//
// Version 5 is transaction version 2 (KIP-890 part 2), as Kafka's
// TransactionCoordinator.endTransaction: the Prepare state bumps the
// epoch, the markers are written at the new epoch and the answer carries
// the producer id and epoch of the next transaction (a new producer id at
// epoch 0 once the epoch is exhausted). A retry at the epoch before the
// bump is answered as the end was. An abort with no transaction open
// succeeds and bumps the epoch too. Versions 0-4 keep the epoch.
func (c *Coordinator) EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID == "" {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	var (
		pid   int64
		epoch int16
		err   error
	)
	found, rerr := c.run(ctx, req.TransactionalID, false, func(a *actor) {
		pid, epoch, err = a.endTxn(req.ProducerID, req.ProducerEpoch, req.Commit, req.Version >= 5)
	})
	switch {
	case rerr != nil:
		err = rerr
	case !found:
		err = fmt.Errorf("transactional id %q: %w", req.TransactionalID, ErrInvalidProducerIDMapping)
	}
	resp.ErrorCode = fencedCode(err, req.Version, 2)
	if err == nil && req.Version >= 5 {
		resp.ProducerID, resp.ProducerEpoch = pid, epoch
	}
	return resp
}

// endTxn ends the transaction of pid/epoch; tv2 is an EndTxn v5. It
// returns the producer id and epoch the producer goes on with.
func (a *actor) endTxn(pid int64, epoch int16, commit, tv2 bool) (int64, int16, error) {
	m := a.m
	// A transaction run under transaction version 2 has bumped its epoch
	// when it ended: the producer retrying that end still has the epoch
	// before, or, when the epoch overflowed, the previous producer id at
	// the last epoch.
	bumped := m.txnVersion >= 2
	retry := bumped && m.producerID == pid && m.epoch == epoch+1
	retryOverflow := bumped && m.prevProducerID == pid && epoch == math.MaxInt16-1 && m.epoch == 0
	pending := m.persisted && (m.state == StatePrepareCommit || m.state == StatePrepareAbort)
	markersPending := fmt.Errorf("end transaction of %q: markers pending: %w", a.id, ErrConcurrentTransactions)
	if pending && tv2 {
		// While the markers of the last end are written, the
		// transition to its Complete state is in progress, and Kafka
		// 4.4's TransactionCoordinator.endTransaction answers any end
		// CONCURRENT_TRANSACTIONS before it looks at ids or epochs: a
		// TV2 producer may abort its next, empty transaction at the
		// bumped epoch that soon, and retries.
		return -1, -1, markersPending
	}
	if !m.persisted || (m.producerID != pid && !retryOverflow) {
		return -1, -1, fmt.Errorf("transactional id %q has no producer id %d: %w", a.id, pid, ErrInvalidProducerIDMapping)
	}
	current := epoch == m.epoch && m.producerID == pid
	fenced := fmt.Errorf("transactional id %q is at epoch %d, request has %d: %w", a.id, m.epoch, epoch, ErrProducerFenced)
	wrong := fmt.Errorf("end transaction of %q (commit=%v) in %s: %w", a.id, commit, m.state, ErrInvalidTxnState)
	same := commit == (m.state == StateCompleteCommit || m.state == StatePrepareCommit)
	switch m.state {
	case StateOngoing:
		if !current {
			return -1, -1, fenced
		}
		return a.prepareEnd(commit, tv2)
	case StatePrepareCommit, StatePrepareAbort:
		// As endTransactionWithTV1: the ids and epoch first, then the
		// transition in progress, whichever end is asked for.
		if !current && !retry {
			return -1, -1, fenced
		}
		return -1, -1, markersPending
	case StateCompleteCommit, StateCompleteAbort:
		switch {
		case retry || retryOverflow || (current && !bumped):
			if same {
				return m.producerID, m.epoch, nil // a retry of an end that completed
			}
			return -1, -1, wrong
		case current && tv2 && !commit:
			return a.prepareEnd(false, true)
		case current:
			return -1, -1, wrong
		}
		return -1, -1, fenced
	case StateEmpty:
		switch {
		case !current:
			return -1, -1, fenced
		case tv2 && !commit:
			return a.prepareEnd(false, true)
		}
		return -1, -1, wrong
	default:
		return -1, -1, wrong
	}
}

// prepareEnd persists PrepareCommit or PrepareAbort, bumping the epoch
// under transaction version 2, and starts the markers. It returns the
// producer id and epoch the producer goes on with.
func (a *actor) prepareEnd(commit, tv2 bool) (int64, int16, error) {
	m := a.m
	if !tv2 {
		if err := a.persist(m.toPrepare(commit, m.epoch, a.now())); err != nil {
			return -1, -1, err
		}
		a.startMarkers()
		return m.producerID, m.epoch, nil
	}
	nextPID := int64(-1)
	if epochExhausted(m.epoch) {
		p, err := a.c.allocProducerID(a.ctx)
		if err != nil {
			return -1, -1, err
		}
		nextPID = p
	}
	next := m.toPrepareBumped(commit, nextPID, a.now())
	if err := a.persist(next); err != nil {
		return -1, -1, err
	}
	a.startMarkers()
	if nextPID >= 0 {
		return nextPID, 0, nil
	}
	return next.producerID, next.epoch, nil
}

// DescribeTransactions describes transactional ids this node coordinates.
func (c *Coordinator) DescribeTransactions(ctx context.Context, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		// An error leaves the fields zero, as Kafka's
		// TransactionCoordinator.handleDescribeTransactions does.
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = 0, 0, 0
		snap, err := c.describe(id)
		switch {
		case err != nil:
			st.ErrorCode = Code(err)
		case snap == nil:
			st.ErrorCode = kerr.TransactionalIDNotFound.Code
		default:
			st.StartTimestamp = -1
			st.State = snap.State
			st.TimeoutMillis = int32(snap.Timeout.Milliseconds())
			if !snap.StartTime.IsZero() {
				st.StartTimestamp = snap.StartTime.UnixMilli()
			}
			st.ProducerID, st.ProducerEpoch = snap.ProducerID, snap.ProducerEpoch
			for _, tp := range snap.Partitions {
				if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic = tp.Topic
					st.Topics = append(st.Topics, t)
				}
				t := &st.Topics[len(st.Topics)-1]
				t.Partitions = append(t.Partitions, tp.Partition)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

// describe returns the snapshot of id, nil when unknown.
func (c *Coordinator) describe(id string) (*TxnSnapshot, error) {
	if id == "" {
		return nil, fmt.Errorf("empty transactional id: %w", errInvalidRequest)
	}
	p := c.partitionOf(id)
	c.rt.Lock()
	defer c.rt.Unlock()
	if _, err := c.rt.ServedLocked(p); err != nil {
		return nil, err
	}
	ra := c.rt.ActorLocked(id)
	if ra == nil || !ra.State().snap.persisted {
		return nil, nil
	}
	s := ra.State().snap
	return &s, nil
}

// errInvalidRequest answers INVALID_REQUEST in DescribeTransactions.
var errInvalidRequest = errors.New("txn: invalid request")

// ListTransactions lists the transactional ids this node coordinates, with
// state, producer id, duration (v1) and transactional id pattern (v2, RE2
// syntax) filters.
func (c *Coordinator) ListTransactions(ctx context.Context, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	states := make(map[string]bool)
	for _, s := range req.StateFilters {
		if _, ok := parseState(s); ok {
			states[s] = true
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
		}
	}
	pids := make(map[int64]bool)
	for _, p := range req.ProducerIDFilters {
		pids[p] = true
	}
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile(*req.TransactionalIDPattern)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		pattern = re
	}
	duration := int64(-1)
	if req.Version >= 1 {
		duration = req.DurationFilterMillis
	}
	now := c.now().UnixMilli()

	c.rt.Lock()
	defer c.rt.Unlock()
	if _, err := c.rt.AllServedLocked(); err != nil {
		resp.ErrorCode = Code(err)
		return resp
	}
	for _, ra := range c.rt.ActorsLocked() {
		s := ra.State().snap
		start := int64(-1)
		if !s.StartTime.IsZero() {
			start = s.StartTime.UnixMilli()
		}
		switch {
		case !s.persisted,
			len(pids) > 0 && !pids[s.ProducerID],
			len(req.StateFilters) > 0 && !states[s.State],
			duration >= 0 && now-start <= duration,
			pattern != nil && !pattern.MatchString(s.TransactionalID):
			continue
		}
		ts := kmsg.NewListTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ProducerID, ts.TransactionState = s.TransactionalID, s.ProducerID, s.State
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	sortListed(resp.TransactionStates)
	return resp
}

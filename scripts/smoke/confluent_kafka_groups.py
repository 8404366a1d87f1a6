"""Consumer-group smoke test with confluent-kafka-python (librdkafka).

Scenarios, each on its own topic and group:

  eager        partition.assignment.strategy=range. Member A consumes part of
               a 4-partition topic and commits; member B joins, A's partitions
               are revoked (A commits in its revoke callback) and split between
               both. Every record is consumed exactly once, a partition never
               has two owners, a third member resumes at the committed offsets.
  cooperative  the same with cooperative-sticky: only the partitions that move
               are revoked, A keeps the others without a revocation.
  static       two static members (group.instance.id); the second closes (a
               static member sends no LeaveGroup) and comes back within
               session.timeout.ms: it gets its old partitions back and the
               first member sees no rebalance.
  kip848       the cooperative scenario with group.protocol=consumer
               (ConsumerGroupHeartbeat). Needs librdkafka >= 2.10; with an older
               librdkafka the script prints a SKIP line and exits 77.

    /usr/bin/python3 scripts/smoke/confluent_kafka_groups.py BROKERS SCENARIO...

Every wait polls for a condition and gives up at a deadline.
"""

import os
import sys
import time

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 4
RECORDS = 200
STEP_TIMEOUT = 30.0  # seconds for any single wait
SKIP = 77

# Short timers so rebalances are noticed quickly; the broker's group limits
# (group.min.session.timeout.ms is 6 s in Kafka) allow these.
BASE_CONF = {
    "session.timeout.ms": 10000,
    "heartbeat.interval.ms": 500,
    "max.poll.interval.ms": 30000,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    "topic.metadata.refresh.interval.ms": 2000,
}


class Failure(Exception):
    pass


def log(msg):
    print("confluent-kafka-groups: " + msg, flush=True)


def unique(prefix):
    return "%s-%d-%d" % (prefix, os.getpid(), int(time.time() * 1000))


def wait_until(what, cond, step, timeout=STEP_TIMEOUT):
    """Calls step() until cond() holds; fails after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise Failure("timed out after %.0fs waiting for %s" % (timeout, what))
        step()


def create_topic(brokers, topic):
    admin = AdminClient({"bootstrap.servers": brokers})
    futures = admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    try:
        futures[topic].result(STEP_TIMEOUT)
    except KafkaException as e:
        raise Failure("create topic %s: %s" % (topic, e))

    def ready():
        md = admin.list_topics(topic, timeout=5)
        t = md.topics.get(topic)
        return t is not None and t.error is None and len(t.partitions) == PARTITIONS

    wait_until("topic %s with %d partitions in metadata" % (topic, PARTITIONS), ready, lambda: time.sleep(0.05))


def produce(brokers, topic, first, count):
    """Produces records first..first+count-1, record i to partition i % 4.

    Returns {(partition, offset): index}."""
    p = Producer({"bootstrap.servers": brokers, "acks": "all", "linger.ms": 5})
    errors = []
    placed = {}

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            placed[(msg.partition(), msg.offset())] = int(msg.key().split(b"-")[1])

    for i in range(first, first + count):
        p.produce(topic, key=b"k-%d" % i, value=b"v-%d" % i, partition=i % PARTITIONS, on_delivery=on_delivery)
    left = p.flush(STEP_TIMEOUT)
    if left or errors:
        raise Failure("produce: %d undelivered, errors %s" % (left, errors[:5]))
    if len(placed) != count:
        raise Failure("produce: %d distinct offsets for %d records" % (len(placed), count))
    return placed


class Ledger:
    """Who owns which partition, and who consumed which record.

    The whole test runs in one thread and callbacks run inside poll(), so a
    partition assigned to one member while another still holds it is a real
    double ownership, not a race in the test."""

    def __init__(self, topic):
        self.topic = topic
        self.owner = {}
        self.seen = {}

    def assign(self, member, partitions):
        for p in partitions:
            if p in self.owner:
                raise Failure("partition %d assigned to %s while %s owns it" % (p, member, self.owner[p]))
            self.owner[p] = member

    def revoke(self, member, partitions):
        for p in partitions:
            if self.owner.get(p) != member:
                raise Failure("partition %d revoked from %s, owner is %s" % (p, member, self.owner.get(p)))
            del self.owner[p]

    def consumed(self, member, partition, offset):
        if self.owner.get(partition) != member:
            raise Failure(
                "%s consumed %d@%d while the owner is %s" % (member, partition, offset, self.owner.get(partition))
            )
        key = (partition, offset)
        if key in self.seen:
            raise Failure("%d@%d consumed twice: by %s and by %s" % (partition, offset, self.seen[key], member))
        self.seen[key] = member


class Member:
    """One group member driven from the test's thread."""

    def __init__(self, name, brokers, group, ledger, conf):
        self.name = name
        self.ledger = ledger
        self.topic = ledger.topic
        self.assigned = set()
        self.next_offset = {}  # partition -> offset after the last record processed
        self.assigns = []  # partition lists, one per assign callback
        self.revokes = []  # partition lists, one per revoke callback
        self.closed = False
        c = dict(BASE_CONF)
        if conf.get("group.protocol") == "consumer":
            # The broker owns these timers (and the assignor) in KIP-848
            # groups; librdkafka refuses them with group.protocol=consumer.
            for k in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
                c.pop(k, None)
        c.update(conf)
        c["bootstrap.servers"] = brokers
        c["group.id"] = group
        c["client.id"] = name
        self.c = Consumer(c, error_cb=self._on_error)
        self.errors = []

    def _on_error(self, err):
        # Transient broker errors (for example a coordinator that is still
        # loading) are retried by librdkafka; fatal ones end the test.
        if err.fatal():
            self.errors.append(str(err))

    def subscribe(self):
        self.c.subscribe([self.topic], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost)

    def _on_assign(self, consumer, partitions):
        ps = sorted(tp.partition for tp in partitions)
        self.assigns.append(ps)
        self.ledger.assign(self.name, ps)
        self.assigned.update(ps)

    def _on_revoke(self, consumer, partitions):
        ps = sorted(tp.partition for tp in partitions)
        self.revokes.append(ps)
        # Commit what was processed before giving the partitions up, so the
        # next owner starts right after it.
        if not self.closed:
            self.commit(ps)
        self.ledger.revoke(self.name, ps)
        self.assigned.difference_update(ps)

    def _on_lost(self, consumer, partitions):
        raise Failure("%s lost partitions %s" % (self.name, [tp.partition for tp in partitions]))

    def commit(self, partitions=None):
        ps = self.assigned if partitions is None else partitions
        offsets = [TopicPartition(self.topic, p, self.next_offset[p]) for p in sorted(ps) if p in self.next_offset]
        if not offsets:
            return
        try:
            self.c.commit(offsets=offsets, asynchronous=False)
        except KafkaException as e:
            raise Failure("%s commit %s: %s" % (self.name, [(o.partition, o.offset) for o in offsets], e))

    def poll(self, timeout=0.05):
        """Polls once; returns (partition, offset, key) or None."""
        if self.errors:
            raise Failure("%s: fatal client error %s" % (self.name, self.errors))
        m = self.c.poll(timeout)
        if m is None:
            return None
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                return None
            raise Failure("%s consume error: %s" % (self.name, m.error()))
        self.ledger.consumed(self.name, m.partition(), m.offset())
        self.next_offset[m.partition()] = m.offset() + 1
        return (m.partition(), m.offset(), m.key())

    def committed(self):
        tps = [TopicPartition(self.topic, p) for p in range(PARTITIONS)]
        try:
            return {tp.partition: tp.offset for tp in self.c.committed(tps, timeout=STEP_TIMEOUT)}
        except KafkaException as e:
            raise Failure("%s committed: %s" % (self.name, e))

    def close(self):
        self.closed = True
        self.c.close()


def poll_all(members, sink=None):
    for m in members:
        r = m.poll()
        if r is not None and sink is not None:
            sink.append((m.name, r))


def check_resume(brokers, topic, group, ledger, conf, produced, label):
    """A fresh member of the group starts exactly at the committed offsets:
    it gets nothing old, and then exactly the next records produced."""
    per_partition = {p: 0 for p in range(PARTITIONS)}
    for p, _ in produced:
        per_partition[p] += 1
    c = Member(label, brokers, group, ledger, conf)
    try:
        c.subscribe()
        wait_until("%s to own all %d partitions" % (label, PARTITIONS), lambda: len(c.assigned) == PARTITIONS, c.poll)
        committed = c.committed()
        if committed != per_partition:
            raise Failure("committed offsets %s, want %s" % (committed, per_partition))
        more = produce(brokers, topic, RECORDS, 10)
        got = []

        def step():
            r = c.poll()
            if r is not None:
                got.append(r)

        wait_until("%s to consume the 10 new records" % label, lambda: len(got) >= 10, step)
        got_keys = sorted((p, o) for p, o, _ in got)
        if got_keys != sorted(more):
            raise Failure("%s consumed %s after resuming, want exactly the new records %s" % (label, got_keys, sorted(more)))
        c.commit()
    finally:
        c.close()
    log("%s: resumed at committed offsets %s and consumed exactly the 10 new records" % (label, committed))


def scenario_rebalance(brokers, label, conf):
    """Member A alone, then B joins; commits on revoke; a resume check."""
    topic = unique("smoke-groups-" + label)
    group = unique("g-" + label)
    create_topic(brokers, topic)
    produced = produce(brokers, topic, 0, RECORDS)
    ledger = Ledger(topic)
    cooperative = conf.get("partition.assignment.strategy") == "cooperative-sticky" or (
        conf.get("group.protocol") == "consumer"
    )

    a = Member("A", brokers, group, ledger, conf)
    b = Member("B", brokers, group, ledger, conf)
    try:
        a.subscribe()
        wait_until("A to own all %d partitions" % PARTITIONS, lambda: len(a.assigned) == PARTITIONS, a.poll)
        wait_until("A to consume 40 records", lambda: len(ledger.seen) >= 40, a.poll)
        a.commit()
        # 20 more that only the revoke callback commits: without that commit
        # they would be consumed again after the rebalance.
        wait_until("A to consume 60 records", lambda: len(ledger.seen) >= 60, a.poll)
        # Hold A's partitions still so B has records left once it joins.
        a.c.pause([TopicPartition(topic, p) for p in sorted(a.assigned)])
        a_before = len(ledger.seen)

        b.subscribe()

        def settled():
            return len(a.assigned) == PARTITIONS // 2 and len(b.assigned) == PARTITIONS // 2

        wait_until("A and B to own %d partitions each" % (PARTITIONS // 2), settled, lambda: poll_all([a, b]))
        a.c.resume([TopicPartition(topic, p) for p in sorted(a.assigned)])
        wait_until(
            "all %d records to be consumed" % RECORDS,
            lambda: len(ledger.seen) >= RECORDS,
            lambda: poll_all([a, b]),
        )
        if set(ledger.seen) != set(produced):
            missing = sorted(set(produced) - set(ledger.seen))
            raise Failure("records not consumed: %s" % missing[:10])
        a.commit()
        b.commit()

        if not b.assigns:
            raise Failure("B never got an assignment")
        if cooperative:
            # Incremental: A gives up only the partitions that move to B.
            moved = sorted(set(range(PARTITIONS)) - a.assigned)
            revoked = sorted(p for ps in a.revokes for p in ps)
            if revoked != moved:
                raise Failure("cooperative: A's revocations %s, want exactly %s" % (a.revokes, moved))
            if b.revokes:
                raise Failure("cooperative: B was revoked %s" % b.revokes)
        else:
            # Eager: A gives up everything, then gets its half back.
            if a.revokes != [list(range(PARTITIONS))]:
                raise Failure("eager: A's revocations %s, want all partitions once" % a.revokes)
        by_member = {"A": 0, "B": 0}
        for who in ledger.seen.values():
            by_member[who] += 1
        if by_member["B"] == 0:
            raise Failure("B consumed nothing")
        log(
            "%s: A consumed %d (%d before B joined), B consumed %d; A assigns %s revokes %s; B assigns %s"
            % (label, by_member["A"], a_before, by_member["B"], a.assigns, a.revokes, b.assigns)
        )
    finally:
        for m in (a, b):
            if not m.closed:
                m.commit()
                m.close()
    if ledger.owner:
        raise Failure("partitions still owned after both closed: %s" % ledger.owner)

    check_resume(brokers, topic, group, ledger, conf, produced, label + "/C")


def scenario_static(brokers):
    """A static member bounces within the session timeout: no rebalance."""
    topic = unique("smoke-groups-static")
    group = unique("g-static")
    create_topic(brokers, topic)
    ledger = Ledger(topic)
    conf = {"partition.assignment.strategy": "range", "session.timeout.ms": 30000}

    def member(name, instance):
        c = dict(conf)
        c["group.instance.id"] = instance
        return Member(name, brokers, group, ledger, c)

    s1 = member("S1", "static-1")
    s2 = member("S2", "static-2")
    s2b = None
    try:
        s1.subscribe()
        wait_until("S1 to own all partitions", lambda: len(s1.assigned) == PARTITIONS, s1.poll)
        s2.subscribe()
        wait_until(
            "S1 and S2 to own 2 partitions each",
            lambda: len(s1.assigned) == 2 and len(s2.assigned) == 2,
            lambda: poll_all([s1, s2]),
        )
        s1_parts = set(s1.assigned)
        s2_parts = set(s2.assigned)
        s1_events = (len(s1.assigns), len(s1.revokes))

        # Close the second member: it revokes locally but stays in the group
        # until its session times out; then the same instance comes back.
        s2.close()
        s2b = member("S2'", "static-2")
        s2b.subscribe()
        wait_until("the restarted S2 to get an assignment", lambda: s2b.assigns, lambda: poll_all([s1, s2b]))
        if s2b.assigned != s2_parts:
            raise Failure("restarted static member got %s, before it had %s" % (sorted(s2b.assigned), sorted(s2_parts)))

        # Both keep working in the same generation: new records reach their
        # owners, and S1's commit (which carries its generation) is accepted.
        fresh = produce(brokers, topic, 0, 8)
        wait_until(
            "the 8 new records to be consumed",
            lambda: all(k in ledger.seen for k in fresh),
            lambda: poll_all([s1, s2b]),
        )
        s1.commit()
        s2b.commit()
        # A rebalance the restart might have started reaches S1 with its next
        # heartbeat (every 500 ms): watch a few of them go by.
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            poll_all([s1, s2b])
        s1.commit()
        if (len(s1.assigns), len(s1.revokes)) != s1_events or s1.assigned != s1_parts:
            raise Failure(
                "S1 saw a rebalance when S2 restarted: assigns %s revokes %s" % (s1.assigns, s1.revokes)
            )
        log(
            "static: S2 restarted with instance id static-2, got %s back; S1 kept %s without a rebalance"
            % (sorted(s2b.assigned), sorted(s1.assigned))
        )
    finally:
        for m in (s1, s2, s2b):
            if m is not None and not m.closed:
                m.close()


def librdkafka_version():
    import confluent_kafka

    text = confluent_kafka.libversion()[0]
    return text, tuple(int(x) for x in text.split("-")[0].split(".")[:2])


def scenario_kip848(brokers):
    text, version = librdkafka_version()
    if version < (2, 10):
        # group.protocol=consumer (KIP-848) is feature complete from
        # librdkafka 2.10 (generally available from 2.12); older versions
        # reject it or implement an early draft of the protocol.
        print("SKIP kip848: librdkafka %s is older than 2.10, no group.protocol=consumer" % text, flush=True)
        sys.exit(SKIP)
    scenario_rebalance(brokers, "kip848", {"group.protocol": "consumer"})


SCENARIOS = {
    "eager": lambda b: scenario_rebalance(b, "eager", {"partition.assignment.strategy": "range"}),
    "cooperative": lambda b: scenario_rebalance(
        b, "cooperative", {"partition.assignment.strategy": "cooperative-sticky"}
    ),
    "static": scenario_static,
    "kip848": scenario_kip848,
}


def main():
    if len(sys.argv) < 3 or any(s not in SCENARIOS for s in sys.argv[2:]):
        print("usage: confluent_kafka_groups.py BROKERS {%s}..." % "|".join(SCENARIOS), file=sys.stderr)
        sys.exit(2)
    brokers = sys.argv[1]
    for name in sys.argv[2:]:
        start = time.monotonic()
        try:
            SCENARIOS[name](brokers)
        except Failure as e:
            print("confluent-kafka-groups: %s: FAIL: %s" % (name, e), file=sys.stderr, flush=True)
            sys.exit(1)
        log("%s ok (%.1fs)" % (name, time.monotonic() - start))


if __name__ == "__main__":
    main()

"""Consumer-group smoke test with kafka-python (Debian's python3-kafka).

Old kafka-python releases speak old versions of the group APIs (JoinGroup,
SyncGroup, Heartbeat, OffsetCommit, OffsetFetch), so this checks them with
one consumer across three sessions of the same group:

  1. join, consume part of a 4-partition topic, commit, close (LeaveGroup);
  2. join again: resume exactly at the committed offsets and consume the rest;
  3. join again: nothing old comes back, and 5 new records arrive exactly.

    /usr/bin/python3 scripts/smoke/kafka_python_groups.py BROKERS

Every wait polls for a condition and gives up at a deadline.
"""

import os
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

PARTITIONS = 4
RECORDS = 40
STEP_TIMEOUT = 30.0


class Failure(Exception):
    pass


def log(msg):
    print("kafka-python-groups: " + msg, flush=True)


def wait_until(what, cond, step, timeout=STEP_TIMEOUT):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise Failure("timed out after %.0fs waiting for %s" % (timeout, what))
        step()


def produce(brokers, topic, first, count):
    """Produces records first..first+count-1, record i to partition i % 4;
    returns the set of (partition, offset)."""
    p = KafkaProducer(bootstrap_servers=brokers, acks="all", linger_ms=5, request_timeout_ms=30000)
    try:
        futures = [
            p.send(topic, key=b"k-%d" % i, value=b"v-%d" % i, partition=i % PARTITIONS)
            for i in range(first, first + count)
        ]
        p.flush(timeout=STEP_TIMEOUT)
        placed = {(md.partition, md.offset) for md in (f.get(timeout=STEP_TIMEOUT) for f in futures)}
    finally:
        p.close(timeout=10)
    if len(placed) != count:
        raise Failure("produce: %d distinct offsets for %d records" % (len(placed), count))
    return placed


class Session:
    """One consumer's life in the group."""

    def __init__(self, brokers, topic, group, name):
        self.name = name
        self.topic = topic
        self.got = []  # (partition, offset)
        self.c = KafkaConsumer(
            bootstrap_servers=brokers,
            group_id=group,
            client_id=name,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=10000,
            heartbeat_interval_ms=500,
            max_poll_interval_ms=30000,
            request_timeout_ms=31000,
            # Small polls, so the first session stops part-way through.
            max_poll_records=5,
        )
        self.c.subscribe([topic])

    def poll(self):
        for tp, batch in self.c.poll(timeout_ms=100).items():
            for m in batch:
                self.got.append((tp.partition, m.offset))

    def join(self):
        wait_until(
            "%s to be assigned all %d partitions" % (self.name, PARTITIONS),
            lambda: len(self.c.assignment()) == PARTITIONS,
            self.poll,
        )

    def consume_until(self, what, cond):
        wait_until("%s to consume %s" % (self.name, what), cond, self.poll)

    def committed(self):
        return {p: self.c.committed(TopicPartition(self.topic, p)) for p in range(PARTITIONS)}

    def close(self):
        self.c.close()


def next_offsets(records, base):
    out = dict(base)
    for p, o in records:
        out[p] = max(out.get(p) or 0, o + 1)
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: kafka_python_groups.py BROKERS", file=sys.stderr)
        sys.exit(2)
    brokers = sys.argv[1].split(",")
    suffix = "%d-%d" % (os.getpid(), int(time.time() * 1000))
    topic = "smoke-kafka-python-groups-" + suffix
    group = "g-kafka-python-" + suffix

    admin = KafkaAdminClient(bootstrap_servers=brokers, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)], timeout_ms=30000)
    finally:
        admin.close()
    produced = produce(brokers, topic, 0, RECORDS)

    # Session 1: consume at least half, commit what poll returned, leave.
    s1 = Session(brokers, topic, group, "first")
    try:
        s1.join()
        s1.consume_until("%d records" % (RECORDS // 2), lambda: len(s1.got) >= RECORDS // 2)
        s1.c.commit()
        want = next_offsets(s1.got, {})
        have = s1.committed()
        # commit() commits the position of every assigned partition: after
        # the last record returned, or 0 where nothing was returned yet.
        if any(have[p] != want.get(p, 0) for p in range(PARTITIONS)):
            raise Failure("after the first commit: committed %s, want %s (0 elsewhere)" % (have, want))
    finally:
        s1.close()
    log("first session consumed %d of %d and committed %s" % (len(s1.got), RECORDS, have))

    # Session 2: resume exactly there and consume the rest.
    s2 = Session(brokers, topic, group, "second")
    try:
        s2.join()
        s2.consume_until("the remaining records", lambda: len(s1.got) + len(s2.got) >= RECORDS)
        both = s1.got + s2.got
        if len(set(both)) != len(both):
            dups = sorted({r for r in both if both.count(r) > 1})
            raise Failure("records consumed twice across the restart: %s" % dups[:10])
        if set(both) != produced:
            raise Failure("consumed %d distinct records, want all %d" % (len(set(both)), RECORDS))
        for p, o in s2.got:
            if o < want.get(p, 0):
                raise Failure("second session got %d@%d below the committed offset %d" % (p, o, want[p]))
        s2.c.commit()
        end = {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
        have = s2.committed()
        if have != end:
            raise Failure("after the second commit: committed %s, want %s" % (have, end))
    finally:
        s2.close()
    log("second session resumed at the committed offsets and consumed the other %d" % len(s2.got))

    # Session 3: nothing old; exactly the 5 new records.
    s3 = Session(brokers, topic, group, "third")
    try:
        s3.join()
        positions = {p: s3.c.position(TopicPartition(topic, p)) for p in range(PARTITIONS)}
        if positions != end:
            raise Failure("third session starts at %s, want %s" % (positions, end))
        more = produce(brokers, topic, RECORDS, 5)
        s3.consume_until("the 5 new records", lambda: len(s3.got) >= 5)
        if set(s3.got) != more or len(s3.got) != 5:
            raise Failure("third session consumed %s, want exactly %s" % (sorted(s3.got), sorted(more)))
        s3.c.commit()
    finally:
        s3.close()
    log("third session started at %s and consumed exactly the 5 new records" % positions)


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("kafka-python-groups: FAIL: %s" % e, file=sys.stderr, flush=True)
        sys.exit(1)
    log("ok")

#!/usr/bin/python3
"""Compatibility runner for confluent-kafka-python (librdkafka).

Runs every scenario of the compat suite against BROKERS and prints one line
per scenario on stdout:

    RESULT <client> <scenario> PASS|FAIL|SKIP <detail>

    /usr/bin/python3 scripts/compat/confluent_kafka.py BROKERS [scenario ...]
    KLOG_COMPAT_CLIENT=confluent-kafka-pypi .cache/compat-venv/bin/python \
        scripts/compat/confluent_kafka.py BROKERS [scenario ...]

One runner for two columns of the matrix: under Debian's /usr/bin/python3
(python3-confluent-kafka) it is confluent-kafka-python; under the
virtualenv of scripts/compat/venv.sh (confluent-kafka from PyPI, with its
bundled librdkafka) run.sh names it confluent-kafka-pypi through
KLOG_COMPAT_CLIENT, the client name on its RESULT lines.
group-kip848 (group.protocol=consumer) needs librdkafka 2.10 or newer and
is SKIP with an older one.

Progress goes to stderr. Topic, group and transactional ids end in a per-run
suffix (pyrunner.RUN), so reruns against one long-lived broker do not
collide. Every wait polls for a condition and gives up at a deadline.
"""

import os
import sys
import time

# This file's name shadows the confluent_kafka package: drop its directory
# from the import path before importing the client.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [d for d in sys.path if os.path.abspath(d or ".") != _here]

from confluent_kafka import (  # noqa: E402
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
    libversion,
    version,
)
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    ConfigResource,
    NewPartitions,
    NewTopic,
)

# The package is imported: the directory comes back for pyrunner.
sys.path.insert(0, _here)
import pyrunner  # noqa: E402
from pyrunner import CONFIG_WAIT, RUN, STEP, Failure, Skip, check, wait_for  # noqa: E402

CLIENT = os.environ.get("KLOG_COMPAT_CLIENT") or "confluent-kafka-python"


def log(msg):
    pyrunner.log(CLIENT, msg)


def conn(brokers):
    """A client's connection settings: brokers, and the security of
    KLOG_COMPAT_SECURITY's file (pyrunner.librdkafka_security)."""
    return {"bootstrap.servers": brokers, **pyrunner.librdkafka_security()}


def admin(brokers):
    return AdminClient(conn(brokers))


def partition_count(a, topic):
    t = a.list_topics(topic=topic, timeout=5).topics.get(topic)
    if t is None or t.error is not None:
        return 0
    return len(t.partitions)


def create_topic(brokers, topic, partitions, config=None):
    a = admin(brokers)
    fut = a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1, config=config or {})])[topic]
    fut.result(timeout=STEP)
    wait_for(lambda: partition_count(a, topic) == partitions, "topic %s in the metadata" % topic)


def producer(brokers, **conf):
    c = {**conn(brokers), "linger.ms": 5}
    c.update({k.replace("_", "."): v for k, v in conf.items()})
    return Producer(c)


def flush(p):
    left = p.flush(STEP)
    check(left == 0, "%d records not delivered within %.0fs" % (left, STEP))


def produce_checked(p, topic, **kw):
    """Produces one record and records its delivery error, if any."""
    errors = []

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(err)

    p.produce(topic, on_delivery=on_delivery, **kw)
    return errors


def read_all(brokers, topic, partitions, isolation="read_uncommitted"):
    """Reads every partition of topic from the start until the position
    reaches the end everywhere; returns the messages."""
    c = Consumer(
        {
            **conn(brokers),
            "group.id": "compat-ck-reader" + RUN,
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    try:
        tps = [TopicPartition(topic, p, 0) for p in range(partitions)]
        c.assign(tps)
        msgs = []
        deadline = time.monotonic() + STEP
        while True:
            m = c.poll(0.2)
            if m is not None:
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise KafkaException(m.error())
                msgs.append(m)
                continue
            done = True
            for tp in c.position([TopicPartition(topic, p) for p in range(partitions)]):
                _, high = c.get_watermark_offsets(TopicPartition(topic, tp.partition), timeout=5)
                if tp.offset < high:
                    done = False
            if done:
                return msgs
            if time.monotonic() > deadline:
                raise Failure("%s reader of %s stuck at %s" % (isolation, topic, c.position(tps)))
    finally:
        c.close()


def wait_configs(a, topic, want, when):
    """Polls describe_configs until the topic's configs include want (name ->
    value), at most CONFIG_WAIT seconds: Kafka's brokers apply a config from
    the metadata log after the controller acknowledged the change, so a
    describe right after an alter may still show the old value; on a
    cluster the broker asked may not know a new topic yet."""
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    deadline = time.monotonic() + CONFIG_WAIT
    while True:
        try:
            cfg = a.describe_configs([res])[res].result(timeout=STEP)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise
            cfg = {}
        got = {k: cfg[k].value if k in cfg else None for k in want}
        if got == want:
            return
        check(time.monotonic() < deadline, "%s: describe_configs shows %s, want %s (waited %.0fs)" % (when, got, want, CONFIG_WAIT))
        time.sleep(0.05)


def scenario_admin(brokers):
    a = admin(brokers)
    topic = "compat-ck-admin" + RUN
    create_topic(brokers, topic, 3, {"retention.ms": "3600000"})
    # librdkafka asks any broker; on a cluster one may learn of the topic a
    # little after the one create_topic heard from (Kafka's admin client
    # documents that it may take seconds for all brokers to know it).
    def listed():
        m = a.list_topics(timeout=5)
        return m if topic in m.topics else None

    md = wait_for(listed, "list_topics to list %s" % topic)
    check(len(md.brokers) >= 1, "list_topics lists no broker")
    wait_configs(a, topic, {"retention.ms": "3600000"}, "after create")
    # alter_configs (AlterConfigs) replaces the topic's whole override set.
    res = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config={"retention.ms": "7200000", "cleanup.policy": "compact"})
    a.alter_configs([res])[res].result(timeout=STEP)
    wait_configs(a, topic, {"retention.ms": "7200000", "cleanup.policy": "compact"}, "after alter_configs")
    a.create_partitions([NewPartitions(topic, 4)])[topic].result(timeout=STEP)
    wait_for(lambda: partition_count(a, topic) == 4, "4 partitions of %s in the metadata" % topic)
    a.delete_topics([topic], operation_timeout=STEP)[topic].result(timeout=STEP)
    wait_for(lambda: topic not in a.list_topics(timeout=5).topics, "%s to leave the metadata" % topic)
    return "create (3 partitions, retention.ms), list, describe_configs, alter_configs, create_partitions to 4, delete"


def scenario_produce_consume(brokers):
    topic = "compat-ck-pc" + RUN
    create_topic(brokers, topic, 2)
    base = int(time.time() * 1000) - 3600 * 1000
    want = pyrunner.produce_consume_records(base)
    p = producer(brokers, acks="all")
    errors = []
    for part, key, value, headers, ts in want:
        errors += produce_checked(p, topic, key=key, value=value, headers=headers, timestamp=ts, partition=part)
    flush(p)
    check(not errors, "delivery errors: %s" % errors[:3])
    got = []
    for m in read_all(brokers, topic, 2):
        tstype, ts = m.timestamp()
        check(tstype == 1, "record %s has timestamp type %d, want create time" % (m.key(), tstype))
        hdrs = list(m.headers() or [])
        got.append((m.partition(), m.key(), m.value(), hdrs, ts))
    for part in (0, 1):
        w = [r for r in want if r[0] == part]
        g = [r for r in got if r[0] == part]
        if w != g:
            first = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
            raise Failure("partition %d: %d records, want %d; first difference at %d: got %s want %s"
                          % (part, len(g), len(w), first, g[first:first + 1], w[first:first + 1]))
    return "%d records: keys (some null), a null value, duplicate and empty headers, explicit timestamps, 2 partitions" % len(got)


def scenario_compression(brokers):
    checked = []
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        topic = "compat-ck-z-%s%s" % (codec, RUN)
        create_topic(brokers, topic, 1)
        p = producer(brokers, compression_type=codec, linger_ms=50)
        values = [("%s record %d %s" % (codec, i, "x" * 50)).encode() for i in range(300)]
        for v in values:
            p.produce(topic, value=v, key=b"k")
        flush(p)
        got = [m.value() for m in read_all(brokers, topic, 1)]
        check(got == values, "%s: consumed %d records differing from 300 produced (checked so far: %s)" % (codec, len(got), checked))
        checked.append(codec)
    return "codecs checked: %s (300 records each)" % " ".join(checked)


def scenario_offsets_by_time(brokers):
    topic = "compat-ck-time" + RUN
    create_topic(brokers, topic, 1)
    base = int(time.time() * 1000) - 3600 * 1000
    p = producer(brokers)
    for i in range(10):
        p.produce(topic, value=b"t%d" % i, timestamp=base + i * 1000, partition=0)
    flush(p)
    c = Consumer({**conn(brokers), "group.id": "compat-ck-time" + RUN, "enable.auto.commit": False})
    try:
        cases = [(base - 5000, 0), (base, 0), (base + 4000, 4), (base + 4500, 5), (base + 9000, 9), (base + 60000, -1)]
        for ts, want in cases:
            r = c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=STEP)
            check(r[0].error is None, "offsets_for_times(%d): %s" % (ts, r[0].error))
            check(r[0].offset == want, "offsets_for_times(base+%d) = %d, want %d" % (ts - base, r[0].offset, want))
    finally:
        c.close()
    return "offsets_for_times: before the first -> 0, exact -> 4, between -> 5, last -> 9, after the end -> -1"


def librdkafka_version():
    """librdkafka's version as (text, (major, minor))."""
    text = libversion()[0]
    return text, tuple(int(x) for x in text.split("-")[0].split(".")[:2])


def group_consumer(brokers, group, name, protocol="classic"):
    conf = {
        **conn(brokers),
        "group.id": group,
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    if protocol == "classic":
        # The consumer protocol takes these from the broker instead (and
        # librdkafka rejects them with it).
        conf.update({"session.timeout.ms": 10000, "heartbeat.interval.ms": 500, "partition.assignment.strategy": "range"})
    else:
        conf["group.protocol"] = protocol
    return Consumer(conf)


def check_group_description(brokers, group, protocol):
    """describe_consumer_groups, where the client has it: two members, and
    the group's type (Classic or Consumer) where the client reports it.
    Returns what was checked."""
    if not hasattr(AdminClient, "describe_consumer_groups"):
        return ""
    a = admin(brokers)  # kept: a dropped client never completes its futures
    d = a.describe_consumer_groups([group])[group].result(timeout=STEP)
    check(len(d.members) == 2, "describe_consumer_groups: %d members, want 2" % len(d.members))
    kind = getattr(d, "type", None)
    if kind is None:
        return ", described with 2 members"
    want = "CONSUMER" if protocol == "consumer" else "CLASSIC"
    check(kind.name == want, "describe_consumer_groups: group type %s, want %s" % (kind.name, want))
    return ", described as a %s group with 2 members" % want


def scenario_group(brokers, protocol="classic"):
    tag = "group" if protocol == "classic" else "group848"
    topic, group = "compat-ck-%s%s" % (tag, RUN), "compat-ck-%s%s" % (tag, RUN)
    create_topic(brokers, topic, 4)
    n = 200
    p = producer(brokers)
    a, b = group_consumer(brokers, group, "a", protocol), group_consumer(brokers, group, "b", protocol)
    seen = {"a": [], "b": []}
    members = {"a": a, "b": b}
    try:
        a.subscribe([topic])
        b.subscribe([topic])

        def split():
            for name, c in members.items():
                for m in c.consume(num_messages=100, timeout=0.1):
                    if m.error():
                        if m.error().code() != KafkaError._PARTITION_EOF:
                            raise KafkaException(m.error())
                        continue
                    seen[name].append((m.partition(), m.offset(), m.value()))
            sa, sb = a.assignment(), b.assignment()
            return len(sa) == 2 and len(sb) == 2 and not set((t.partition for t in sa)) & set((t.partition for t in sb))

        wait_for(split, "the group to split 4 partitions 2 + 2", 3 * STEP)
        # Produce only once the split is done, so no record is read before
        # a rebalance moves its partition (which would read it twice).
        for i in range(n):
            p.produce(topic, value=b"g%d" % i, partition=i % 4)
        flush(p)
        total = lambda: sum(len(v) for v in seen.values())  # noqa: E731

        def all_read():
            split()
            return total() >= n

        wait_for(all_read, "%d records read by two members" % n)
        values = sorted(v for lst in seen.values() for (_, _, v) in lst)
        check(values == sorted(b"g%d" % i for i in range(n)),
              "two members read %d records (%d distinct), want %d once" % (len(values), len(set(values)), n))
        for name, c in members.items():
            c.commit(asynchronous=False)
            owned = set(t.partition for t in c.assignment())
            check(all(part in owned for (part, _, _) in seen[name]), "member %s read partitions it does not own" % name)
        a_parts = sorted(t.partition for t in a.assignment())
        described = check_group_description(brokers, group, protocol)
    finally:
        a.close()
        b.close()
    # A restarted member resumes at the committed offsets.
    for i in range(8):
        p.produce(topic, value=b"late%d" % i, partition=i % 4)
    flush(p)
    c = group_consumer(brokers, group, "c", protocol)
    got = []
    try:
        c.subscribe([topic])

        def resumed():
            for m in c.consume(num_messages=100, timeout=0.2):
                if not m.error():
                    got.append(m.value())
            return len(got) >= 8

        wait_for(resumed, "the restarted member to read 8 new records", 2 * STEP)
        # Nothing older follows: drain until the position reaches the end.
        end = {}
        for part in range(4):
            end[part] = c.get_watermark_offsets(TopicPartition(topic, part), timeout=5)[1]

        def at_end():
            for m in c.consume(num_messages=100, timeout=0.1):
                if not m.error():
                    got.append(m.value())
            pos = c.position([TopicPartition(topic, q) for q in range(4)])
            return all(tp.offset == end[tp.partition] for tp in pos)

        wait_for(at_end, "the restarted member to reach the end")
    finally:
        c.close()
    check(sorted(got) == sorted(b"late%d" % i for i in range(8)),
          "restarted member read %s, want only the 8 records after the commit" % got[:12])
    return "group.protocol=%s: two members split 4 partitions (a had %s), %d records once%s; restarted member resumed at the committed offsets" % (
        protocol, a_parts, n, described)


def scenario_group_kip848(brokers):
    text, ver = librdkafka_version()
    if ver < (2, 10):
        # group.protocol=consumer (KIP-848) is feature complete from
        # librdkafka 2.10 (generally available from 2.12); older versions
        # reject it or speak an early draft of the protocol.
        raise Skip("librdkafka %s has no group.protocol=consumer (KIP-848 needs 2.10 or newer)" % text)
    return scenario_group(brokers, "consumer")


def scenario_idempotent(brokers):
    topic = "compat-ck-idem" + RUN
    create_topic(brokers, topic, 2)
    n = 2000
    p = producer(brokers, enable_idempotence=True, acks="all", max_in_flight_requests_per_connection=5)
    errors = []
    for i in range(n):
        errors += produce_checked(p, topic, value=b"i%d" % i, partition=i % 2)
        if i % 500 == 0:
            p.poll(0)
    flush(p)
    check(not errors, "delivery errors: %s" % errors[:3])
    got = read_all(brokers, topic, 2)
    for part in (0, 1):
        vals = [m.value() for m in got if m.partition() == part]
        want = [b"i%d" % i for i in range(part, n, 2)]
        check(vals == want, "partition %d holds %d records (%d distinct), want %d in order" % (part, len(vals), len(set(vals)), len(want)))
    return "%d records on 2 partitions with enable.idempotence, each once and in order" % n


def txn_producer(brokers, txn_id):
    p = producer(brokers, transactional_id=txn_id, transaction_timeout_ms=60000)
    p.init_transactions(STEP)
    return p


def scenario_transactions(brokers):
    topic = "compat-ck-txn" + RUN
    create_topic(brokers, topic, 2)
    p = txn_producer(brokers, "compat-ck-txn" + RUN)
    p.begin_transaction()
    for i in range(50):
        p.produce(topic, value=b"committed-%d" % i, partition=i % 2)
    p.commit_transaction(STEP)
    p.begin_transaction()
    for i in range(50):
        p.produce(topic, value=b"aborted-%d" % i, partition=i % 2)
    flush(p)  # the aborted records reach the log
    p.abort_transaction(STEP)
    p.begin_transaction()
    p.produce(topic, value=b"committed-last", partition=0)
    p.commit_transaction(STEP)
    rc = sorted(m.value() for m in read_all(brokers, topic, 2, "read_committed"))
    want = sorted([b"committed-%d" % i for i in range(50)] + [b"committed-last"])
    check(rc == want, "read_committed saw %d records (%d aborted), want the 51 committed"
          % (len(rc), sum(1 for v in rc if v.startswith(b"aborted"))))
    ru = read_all(brokers, topic, 2, "read_uncommitted")
    check(len(ru) == 101, "read_uncommitted saw %d records, want 101" % len(ru))
    return "commit 50, abort 50, commit 1: read_committed saw the 51 committed, read_uncommitted all 101"


def scenario_consume_transform_produce(brokers):
    src, dst, group = "compat-ck-ctp-in" + RUN, "compat-ck-ctp-out" + RUN, "compat-ck-ctp" + RUN
    n = 200
    create_topic(brokers, src, 2)
    create_topic(brokers, dst, 2)
    plain = producer(brokers)
    for i in range(n):
        plain.produce(src, key=str(i), value="in-%d" % i, partition=i % 2)
    flush(plain)
    consumer = Consumer(
        {
            **conn(brokers),
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 500,
        }
    )
    p = txn_producer(brokers, "compat-ck-ctp" + RUN)
    consumer.subscribe([src])
    processed = 0
    aborted = False
    deadline = time.monotonic() + 3 * STEP
    try:
        while processed < n:
            check(time.monotonic() < deadline, "stuck after %d of %d records" % (processed, n))
            batch = [m for m in consumer.consume(num_messages=50, timeout=0.5) if not m.error()]
            if not batch:
                continue
            p.begin_transaction()
            for m in batch:
                p.produce(dst, key=m.key(), value=b"out-" + m.value()[3:], partition=m.partition())
            offsets = consumer.position(consumer.assignment())
            p.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), STEP)
            if not aborted:
                # The first batch is aborted: output and offsets roll back
                # and the input is read again from the committed offsets.
                aborted = True
                p.abort_transaction(STEP)
                for tp in consumer.committed(consumer.assignment(), timeout=STEP):
                    consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
                continue
            p.commit_transaction(STEP)
            processed += len(batch)
        committed = consumer.committed([TopicPartition(src, q) for q in range(2)], timeout=STEP)
        for tp in committed:
            _, high = consumer.get_watermark_offsets(TopicPartition(src, tp.partition), timeout=5)
            check(tp.offset == high, "group offset of %s[%d] = %d, want %d" % (src, tp.partition, tp.offset, high))
    finally:
        consumer.close()
    out = sorted(m.value() for m in read_all(brokers, dst, 2, "read_committed"))
    want = sorted(b"out-%d" % i for i in range(n))
    check(out == want, "output holds %d records (%d distinct), want %d exactly once" % (len(out), len(set(out)), n))
    return "%d records through send_offsets_to_transaction (first transaction aborted and replayed): output exactly once, group offsets at the end" % n




if __name__ == "__main__":
    sys.exit(pyrunner.main(CLIENT, sys.argv, pyrunner.scenarios(globals()), "confluent-kafka-python %s, librdkafka %s" % (version()[0], libversion()[0])))

#!/usr/bin/python3
"""Compatibility runner for kafka-python.

Runs every scenario of the compat suite against BROKERS and prints one line
per scenario on stdout:

    RESULT kafka-python <scenario> PASS|FAIL|SKIP <detail>

    /usr/bin/python3 scripts/compat/kafka_python.py BROKERS [scenario ...]

kafka-python 2.0.2 has no idempotent or transactional producer and no
KIP-848 consumer protocol, so those scenarios are skipped; codecs other than gzip need optional Python modules
and are checked only when those are installed. Progress goes to stderr.
Names end in a per-run suffix, so reruns against one long-lived broker do
not collide. Every wait polls for a condition and gives up at a deadline.
"""

import importlib
import logging
import sys
import threading
import time

import kafka
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

import pyrunner
from pyrunner import CONFIG_WAIT, RUN, STEP, Failure, Skip, check, wait_for

CLIENT = "kafka-python"


def conn(brokers):
    """A client's connection settings: brokers, and the security of
    KLOG_COMPAT_SECURITY's file (pyrunner.python_security)."""
    return dict(bootstrap_servers=brokers, **pyrunner.python_security())


def log(msg):
    pyrunner.log(CLIENT, msg)


def admin(brokers):
    return KafkaAdminClient(**conn(brokers), client_id="compat-kp-admin", request_timeout_ms=int(STEP * 1000))


def partitions_of(brokers, topic):
    c = KafkaConsumer(**conn(brokers))
    try:
        return c.partitions_for_topic(topic) or set()
    finally:
        c.close()


def create_topic(brokers, topic, partitions, config=None):
    a = admin(brokers)
    try:
        a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1, topic_configs=config or {})])
    finally:
        a.close()
    wait_for(lambda: len(partitions_of(brokers, topic)) == partitions, "topic %s in the metadata" % topic)


def producer(brokers, **conf):
    return KafkaProducer(**conn(brokers), linger_ms=5, acks="all", **conf)


def send_all(p, sends):
    """sends: list of kwargs for p.send; waits for every delivery."""
    futures = [p.send(**kw) for kw in sends]
    p.flush(timeout=STEP)
    return [f.get(timeout=STEP) for f in futures]


def read_all(brokers, topic, partitions):
    """Reads every partition from the start to its end offset."""
    c = KafkaConsumer(**conn(brokers), enable_auto_commit=False, consumer_timeout_ms=int(STEP * 1000))
    try:
        tps = [TopicPartition(topic, q) for q in range(partitions)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        end = c.end_offsets(tps)
        msgs = []
        deadline = time.monotonic() + STEP
        while any(c.position(tp) < end[tp] for tp in tps):
            check(time.monotonic() < deadline, "reader of %s stuck at %s, end %s" % (topic, [c.position(tp) for tp in tps], end))
            for recs in c.poll(timeout_ms=200).values():
                msgs.extend(recs)
        return msgs
    finally:
        c.close()


def config_values(a, topic):
    res = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    out = {}
    for r in res:
        for resource in r.resources:
            err, _, _, _, entries = resource[:5]
            if err == 3:  # UNKNOWN_TOPIC_OR_PARTITION: on a cluster, a broker that has not applied the topic yet
                return {}
            check(err == 0, "describe_configs error %d" % err)
            for e in entries:
                out[e[0]] = e[1]
    return out


def wait_config(a, topic, name, want, when):
    """Polls describe_configs until the topic's config name is want, at most
    CONFIG_WAIT seconds: Kafka's brokers apply a config from the metadata log
    after the controller acknowledged the change, so a describe right after
    an alter may still show the old value; on a cluster the broker asked may
    not know a new topic yet."""
    deadline = time.monotonic() + CONFIG_WAIT
    while True:
        got = config_values(a, topic).get(name)
        if got == want:
            return
        check(time.monotonic() < deadline, "%s: describe_configs %s is %s, want %s (waited %.0fs)" % (when, name, got, want, CONFIG_WAIT))
        time.sleep(0.05)


def scenario_admin(brokers):
    topic = "compat-kp-admin" + RUN
    create_topic(brokers, topic, 3, {"retention.ms": "3600000"})
    a = admin(brokers)
    try:
        # list_topics may ask a broker that learns of the topic a moment
        # after the one that answered create_topics, as on any Kafka cluster.
        wait_for(lambda: topic in a.list_topics(), "list_topics to list %s" % topic)
        desc = a.describe_topics([topic])
        check(len(desc) == 1 and len(desc[0]["partitions"]) == 3, "describe_topics: %s" % desc)
        wait_config(a, topic, "retention.ms", "3600000", "after create")
        a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={"retention.ms": "7200000"})])
        wait_config(a, topic, "retention.ms", "7200000", "after alter_configs")
        a.create_partitions({topic: NewPartitions(total_count=4)})
        wait_for(lambda: len(partitions_of(brokers, topic)) == 4, "4 partitions of %s" % topic)
        a.delete_topics([topic], timeout_ms=int(STEP * 1000))
        wait_for(lambda: topic not in a.list_topics(), "%s to be deleted" % topic)
    finally:
        a.close()
    return "create (3 partitions, retention.ms), list, describe_topics, describe_configs, alter_configs, create_partitions to 4, delete"


def scenario_produce_consume(brokers):
    topic = "compat-kp-pc" + RUN
    create_topic(brokers, topic, 2)
    base = int(time.time() * 1000) - 3600 * 1000
    want = pyrunner.produce_consume_records(base)
    sends = [dict(topic=topic, key=k, value=v, headers=h, timestamp_ms=ts, partition=part) for part, k, v, h, ts in want]
    p = producer(brokers)
    try:
        send_all(p, sends)
    finally:
        p.close()
    got = []
    for m in read_all(brokers, topic, 2):
        check(m.timestamp_type == 0, "record %s has timestamp type %d, want create time" % (m.key, m.timestamp_type))
        got.append((m.partition, m.key, m.value, list(m.headers), m.timestamp))
    for part in (0, 1):
        w = [r for r in want if r[0] == part]
        g = [r for r in got if r[0] == part]
        if w != g:
            first = next((i for i, (x, y) in enumerate(zip(w, g)) if x != y), min(len(w), len(g)))
            raise Failure("partition %d: %d records, want %d; first difference at %d: got %s want %s"
                          % (part, len(g), len(w), first, g[first:first + 1], w[first:first + 1]))
    return "%d records: keys (some null), a null value, duplicate and empty headers, explicit timestamps, 2 partitions" % len(got)


# Codec name -> Python module kafka-python needs for it.
CODEC_MODULES = {"gzip": None, "snappy": "snappy", "lz4": "lz4.frame", "zstd": "zstandard"}


def scenario_compression(brokers):
    checked, missing = [], []
    for codec, module in CODEC_MODULES.items():
        if module is not None:
            try:
                importlib.import_module(module)
            except ImportError:
                missing.append("%s (no %s module)" % (codec, module.split(".")[0]))
                continue
        topic = "compat-kp-z-%s%s" % (codec, RUN)
        create_topic(brokers, topic, 1)
        values = [("%s record %d %s" % (codec, i, "x" * 50)).encode() for i in range(300)]
        p = producer(brokers, compression_type=codec)
        try:
            send_all(p, [dict(topic=topic, value=v, partition=0) for v in values])
        finally:
            p.close()
        got = [m.value for m in read_all(brokers, topic, 1)]
        check(got == values, "%s: consumed %d records differing from 300 produced (checked so far: %s)" % (codec, len(got), checked))
        checked.append(codec)
    detail = "codecs checked: %s (300 records each)" % " ".join(checked)
    if missing:
        detail += "; not checked: %s" % ", ".join(missing)
    return detail


def scenario_offsets_by_time(brokers):
    topic = "compat-kp-time" + RUN
    create_topic(brokers, topic, 1)
    base = int(time.time() * 1000) - 3600 * 1000
    p = producer(brokers)
    try:
        send_all(p, [dict(topic=topic, value=b"t%d" % i, timestamp_ms=base + i * 1000, partition=0) for i in range(10)])
    finally:
        p.close()
    c = KafkaConsumer(**conn(brokers))
    tp = TopicPartition(topic, 0)
    try:
        for ts, want in [(base - 5000, 0), (base, 0), (base + 4000, 4), (base + 4500, 5), (base + 9000, 9), (base + 60000, None)]:
            r = c.offsets_for_times({tp: ts})[tp]
            got = None if r is None else r.offset
            check(got == want, "offsets_for_times(base+%d) = %s, want %s" % (ts - base, got, want))
            if r is not None:
                check(r.timestamp == base + want * 1000, "offsets_for_times(base+%d) timestamp %d, want %d" % (ts - base, r.timestamp, base + want * 1000))
    finally:
        c.close()
    return "offsets_for_times: before the first -> 0, exact -> 4, between -> 5, last -> 9, after the end -> none"


def group_consumer(brokers, group, name):
    return KafkaConsumer(
        **conn(brokers),
        group_id=group,
        client_id=name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=500,
    )


class Member(threading.Thread):
    """One group member polling in its own thread (kafka-python's poll
    blocks while its group rebalances, so members cannot share a thread)."""

    def __init__(self, brokers, group, name, topic):
        super().__init__(daemon=True)
        self.consumer = group_consumer(brokers, group, name)
        self.consumer.subscribe([topic])
        self.lock = threading.Lock()
        self.records = []  # (partition, value)
        self.assigned = set()
        self.commit_requested = threading.Event()
        self.committed = threading.Event()
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            while not self.stop.is_set():
                batch = self.consumer.poll(timeout_ms=100)
                with self.lock:
                    for recs in batch.values():
                        self.records.extend((m.partition, m.value) for m in recs)
                    self.assigned = set(tp.partition for tp in self.consumer.assignment())
                if self.commit_requested.is_set() and not self.committed.is_set():
                    self.consumer.commit()
                    self.committed.set()
        except Exception as e:  # reported by the scenario
            self.error = e
        finally:
            self.consumer.close()

    def snapshot(self):
        if self.error is not None:
            raise Failure("member %s: %s: %s" % (self.consumer.config["client_id"], type(self.error).__name__, self.error))
        with self.lock:
            return list(self.records), set(self.assigned)


def scenario_group(brokers):
    topic, group = "compat-kp-group" + RUN, "compat-kp-group" + RUN
    create_topic(brokers, topic, 4)
    n = 200
    a, b = Member(brokers, group, "a", topic), Member(brokers, group, "b", topic)
    a.start()
    b.start()
    try:
        def split():
            _, sa = a.snapshot()
            _, sb = b.snapshot()
            return len(sa) == 2 and len(sb) == 2 and not sa & sb

        wait_for(split, "the group to split 4 partitions 2 + 2", 3 * STEP)
        # Produce only once the split is done, so no record is read before a
        # rebalance moves its partition.
        p = producer(brokers)
        try:
            send_all(p, [dict(topic=topic, value=b"g%d" % i, partition=i % 4) for i in range(n)])
        finally:
            p.close()
        wait_for(lambda: len(a.snapshot()[0]) + len(b.snapshot()[0]) >= n, "%d records read by two members" % n)
        values = sorted(v for m in (a, b) for (_, v) in m.snapshot()[0])
        check(values == sorted(b"g%d" % i for i in range(n)),
              "two members read %d records (%d distinct), want %d once" % (len(values), len(set(values)), n))
        for m in (a, b):
            recs, owned = m.snapshot()
            check(all(part in owned for (part, _) in recs), "a member read partitions it does not own")
            m.commit_requested.set()
        for m in (a, b):
            wait_for(lambda: m.committed.is_set() or m.snapshot() is None, "a member's commit")
    finally:
        for m in (a, b):
            m.stop.set()
        for m in (a, b):
            m.join(STEP)
    p = producer(brokers)
    try:
        send_all(p, [dict(topic=topic, value=b"late%d" % i, partition=i % 4) for i in range(8)])
    finally:
        p.close()
    c = group_consumer(brokers, group, "c")
    got = []
    try:
        c.subscribe([topic])
        tps = [TopicPartition(topic, q) for q in range(4)]
        end = None

        def at_end():
            nonlocal end
            for recs in c.poll(timeout_ms=200).values():
                got.extend(m.value for m in recs)
            if len(c.assignment()) != 4:
                return False
            if end is None:
                end = c.end_offsets(tps)
            return all(c.position(tp) == end[tp] for tp in tps)

        wait_for(at_end, "the restarted member to reach the end", 2 * STEP)
    finally:
        c.close()
    check(sorted(got) == sorted(b"late%d" % i for i in range(8)),
          "restarted member read %s, want only the 8 records after the commit" % got[:12])
    return "two members split 4 partitions, %d records once; restarted member resumed at the committed offsets" % n


def scenario_group_kip848(brokers):
    raise Skip("kafka-python %s has no KIP-848 consumer protocol (group.protocol=consumer)" % kafka.__version__)


def scenario_idempotent(brokers):
    raise Skip("kafka-python %s has no idempotent producer" % kafka.__version__)


def scenario_transactions(brokers):
    raise Skip("kafka-python %s has no transactions API" % kafka.__version__)


def scenario_consume_transform_produce(brokers):
    raise Skip("kafka-python %s has no transactions API" % kafka.__version__)




if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(pyrunner.main(CLIENT, sys.argv, pyrunner.scenarios(globals()), "kafka-python %s" % kafka.__version__))

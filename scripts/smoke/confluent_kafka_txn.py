"""Transactions smoke test with confluent-kafka-python (librdkafka).

Scenarios, each on its own topics:

  commit-abort  a transactional producer commits 50 records in one
                transaction and aborts 50 in another. A read_committed
                consumer sees exactly the 50 committed records, a
                read_uncommitted consumer all 100; neither sees the markers.
  fencing       a second producer with the same transactional.id calls
                init_transactions: the first producer's open transaction is
                aborted and its next operation fails as fenced. Only the
                second producer's committed record is visible.
  ctp           consume-transform-produce: 200 input records are read by a
                read_committed group member and written transformed to an
                output topic, each batch in a transaction that also commits
                the group's offsets (send_offsets_to_transaction). The first
                transaction is aborted and its input re-read from the
                committed offsets. The output holds every input exactly once
                and the group's committed offsets are at the end of the input.

    /usr/bin/python3 scripts/smoke/confluent_kafka_txn.py BROKERS [SCENARIO...]

Every wait polls for a condition and gives up at a deadline.
"""

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

STEP_TIMEOUT = 30.0  # seconds for any single wait
# Names of topics, transactional ids and groups end in RUN, so reruns against
# one broker do not see each other's data.
RUN = "-%d" % (time.time_ns() // 1000000 % 100000000)


class Failure(Exception):
    pass


def log(msg):
    print("confluent-kafka-txn: " + msg, flush=True)


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def create_topic(brokers, topic, partitions):
    admin = AdminClient({"bootstrap.servers": brokers})
    fut = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic]
    fut.result(timeout=STEP_TIMEOUT)
    # Wait until the topic's partitions are in the metadata.
    deadline = time.monotonic() + STEP_TIMEOUT
    while time.monotonic() < deadline:
        md = admin.list_topics(topic=topic, timeout=5)
        t = md.topics.get(topic)
        if t is not None and t.error is None and len(t.partitions) == partitions:
            return
        time.sleep(0.05)
    raise Failure("topic %s did not appear in the metadata" % topic)


def txn_producer(brokers, txn_id):
    p = Producer(
        {
            "bootstrap.servers": brokers,
            "transactional.id": txn_id,
            "transaction.timeout.ms": 60000,
            "linger.ms": 5,
        }
    )
    p.init_transactions(STEP_TIMEOUT)
    return p


def read_all(brokers, topic, partitions, isolation):
    """Reads every partition of topic from the start until the consumer's
    position reaches the high watermark everywhere; returns the values."""
    c = Consumer(
        {
            "bootstrap.servers": brokers,
            "group.id": "smoke-txn-reader" + RUN,
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    try:
        tps = [TopicPartition(topic, p, 0) for p in range(partitions)]
        c.assign(tps)
        values = []
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            msg = c.poll(0.2)
            if msg is not None:
                if msg.error():
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise KafkaException(msg.error())
                values.append(msg.value().decode())
                continue
            done = True
            for tp in c.position([TopicPartition(topic, p) for p in range(partitions)]):
                _, high = c.get_watermark_offsets(TopicPartition(topic, tp.partition), timeout=5)
                if tp.offset < high:
                    done = False
            if done:
                return values
            if time.monotonic() > deadline:
                raise Failure("%s reader of %s stuck at %s" % (isolation, topic, c.position(tps)))
    finally:
        c.close()


def scenario_commit_abort(brokers):
    topic = "smoke-txn-commit-abort" + RUN
    create_topic(brokers, topic, 2)
    p = txn_producer(brokers, "smoke-txn-ca" + RUN)
    p.begin_transaction()
    for i in range(50):
        p.produce(topic, key=str(i), value="committed-%d" % i)
    p.commit_transaction(STEP_TIMEOUT)
    p.begin_transaction()
    for i in range(50):
        p.produce(topic, key=str(i), value="aborted-%d" % i)
    p.flush(STEP_TIMEOUT)  # the aborted records reach the log
    p.abort_transaction(STEP_TIMEOUT)

    committed = read_all(brokers, topic, 2, "read_committed")
    want = sorted("committed-%d" % i for i in range(50))
    check(sorted(committed) == want, "read_committed saw %d records: %s" % (len(committed), sorted(committed)[:5]))
    everything = read_all(brokers, topic, 2, "read_uncommitted")
    want_all = sorted(want + ["aborted-%d" % i for i in range(50)])
    check(sorted(everything) == want_all, "read_uncommitted saw %d records, want 100" % len(everything))
    log("commit-abort: read_committed 50, read_uncommitted 100")


def is_fenced(err):
    return err.code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )


def scenario_fencing(brokers):
    topic = "smoke-txn-fencing" + RUN
    create_topic(brokers, topic, 1)
    first = txn_producer(brokers, "smoke-txn-fence" + RUN)
    first.begin_transaction()
    first.produce(topic, value="zombie")
    first.flush(STEP_TIMEOUT)

    second = txn_producer(brokers, "smoke-txn-fence" + RUN)
    second.begin_transaction()
    second.produce(topic, value="survivor")
    second.commit_transaction(STEP_TIMEOUT)

    fenced = None
    try:
        first.commit_transaction(STEP_TIMEOUT)
    except KafkaException as e:
        fenced = e.args[0]
    check(fenced is not None, "the fenced producer committed")
    check(is_fenced(fenced), "the fenced producer failed, but not as fenced: %s" % fenced)

    committed = read_all(brokers, topic, 1, "read_committed")
    check(committed == ["survivor"], "read_committed after fencing = %s" % committed)
    log("fencing: first producer fenced (%s); only the survivor is visible" % fenced.name())


def scenario_ctp(brokers):
    src, dst, group = "smoke-txn-ctp-in" + RUN, "smoke-txn-ctp-out" + RUN, "smoke-txn-ctp" + RUN
    n = 200
    create_topic(brokers, src, 2)
    create_topic(brokers, dst, 2)
    plain = Producer({"bootstrap.servers": brokers, "linger.ms": 5})
    for i in range(n):
        plain.produce(src, key=str(i), value="in-%d" % i, partition=i % 2)
    check(plain.flush(STEP_TIMEOUT) == 0, "input records not delivered")

    consumer = Consumer(
        {
            "bootstrap.servers": brokers,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 500,
        }
    )
    producer = txn_producer(brokers, "smoke-txn-ctp" + RUN)
    consumer.subscribe([src])
    processed = 0
    aborted_once = False
    deadline = time.monotonic() + 3 * STEP_TIMEOUT
    try:
        while processed < n:
            if time.monotonic() > deadline:
                raise Failure("consume-transform-produce stuck after %d of %d records" % (processed, n))
            batch = consumer.consume(num_messages=50, timeout=0.5)
            batch = [m for m in batch if not m.error()]
            if not batch:
                continue
            producer.begin_transaction()
            for m in batch:
                producer.produce(dst, key=m.key(), value="out-" + m.value().decode()[3:], partition=m.partition())
            offsets = consumer.position(consumer.assignment())
            producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), STEP_TIMEOUT)
            if not aborted_once:
                # Fail the first batch: its output and offsets are rolled
                # back, and the input is read again from the committed
                # offsets.
                aborted_once = True
                producer.abort_transaction(STEP_TIMEOUT)
                for tp in consumer.committed(consumer.assignment(), timeout=STEP_TIMEOUT):
                    consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
                log("ctp: aborted the first batch of %d records and rewound" % len(batch))
                continue
            producer.commit_transaction(STEP_TIMEOUT)
            processed += len(batch)

        committed = consumer.committed([TopicPartition(src, p) for p in range(2)], timeout=STEP_TIMEOUT)
        for tp in committed:
            _, high = consumer.get_watermark_offsets(TopicPartition(src, tp.partition), timeout=5)
            check(tp.offset == high, "group offset of %s[%d] = %d, want %d" % (src, tp.partition, tp.offset, high))
    finally:
        consumer.close()

    out = read_all(brokers, dst, 2, "read_committed")
    want = sorted("out-%d" % i for i in range(n))
    check(sorted(out) == want, "output holds %d records (%d distinct), want %d exactly once" % (len(out), len(set(out)), n))
    check(processed == n, "processed %d records, want %d" % (processed, n))
    log("ctp: %d records in, %d out exactly once; group offsets at the end" % (n, len(out)))


SCENARIOS = {
    "commit-abort": scenario_commit_abort,
    "fencing": scenario_fencing,
    "ctp": scenario_ctp,
}


def main():
    if len(sys.argv) < 2:
        print("usage: confluent_kafka_txn.py BROKERS [SCENARIO...]", file=sys.stderr)
        return 2
    brokers = sys.argv[1]
    names = sys.argv[2:] or list(SCENARIOS)
    for name in names:
        if name not in SCENARIOS:
            print("unknown scenario %r" % name, file=sys.stderr)
            return 2
    for name in names:
        start = time.monotonic()
        try:
            SCENARIOS[name](brokers)
        except (Failure, KafkaException) as e:
            log("FAIL %s: %s" % (name, e))
            return 1
        log("ok %s (%.1fs)" % (name, time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())

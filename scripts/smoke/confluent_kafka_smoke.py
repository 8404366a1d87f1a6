"""Smoke test with confluent-kafka-python (librdkafka).

Produces keyed records with headers (including a null value, an empty value,
binary bytes and a repeated header key), consumes them back from the start of
the partition without a consumer group, and compares everything.

    /usr/bin/python3 scripts/smoke/confluent_kafka_smoke.py 127.0.0.1:PORT
"""

import os
import sys
import time

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Producer,
    TopicPartition,
)


def expected_records():
    recs = []
    for i in range(100):
        recs.append(
            (
                b"key-%d" % i,
                b"value-%d-" % i + bytes(range(256)),
                [("seq", b"%d" % i), ("dup", b"a"), ("dup", b"b")],
            )
        )
    recs.append((b"tombstone", None, [("kind", b"null value")]))
    recs.append((b"empty", b"", [("kind", b"empty value"), ("bin", b"\x00\xff")]))
    recs.append((None, b"no key", []))
    return recs


def fail(msg):
    print("confluent-kafka: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        fail("usage: confluent_kafka_smoke.py BROKERS")
    brokers = sys.argv[1]
    topic = "smoke-confluent-%d-%d" % (os.getpid(), int(time.time()))
    recs = expected_records()

    errors = []
    delivered = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            delivered.append(msg.offset())

    p = Producer({"bootstrap.servers": brokers, "acks": "all", "linger.ms": 5})
    for key, value, headers in recs:
        p.produce(topic, value=value, key=key, headers=headers, partition=0, on_delivery=on_delivery)
    left = p.flush(60)
    if left:
        fail("%d records not delivered within 60s" % left)
    if errors:
        fail("delivery errors: %s" % errors[:5])
    if len(delivered) != len(recs):
        fail("delivered %d of %d" % (len(delivered), len(recs)))

    c = Consumer(
        {
            "bootstrap.servers": brokers,
            # librdkafka wants a group id; assign() below uses no group.
            "group.id": "smoke-confluent-unused",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < len(recs):
            if time.monotonic() > deadline:
                fail("consumed %d of %d within 60s" % (len(got), len(recs)))
            msg = c.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                fail("consume error: %s" % msg.error())
            got.append((msg.key(), msg.value(), msg.headers() or []))
    finally:
        c.close()

    for i, (want, have) in enumerate(zip(recs, got)):
        if want != have:
            fail("record %d differs:\n want %r\n have %r" % (i, want, have))
    print("confluent-kafka: %d records with keys and headers round-tripped through %s" % (len(got), topic))


if __name__ == "__main__":
    main()

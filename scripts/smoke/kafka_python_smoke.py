"""Smoke test with kafka-python (a pure-Python client).

Produces keyed records with headers, consumes them back from the start of
the partition without a consumer group, and compares.

    /usr/bin/python3 scripts/smoke/kafka_python_smoke.py 127.0.0.1:PORT
"""

import os
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def fail(msg):
    print("kafka-python: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        fail("usage: kafka_python_smoke.py BROKERS")
    brokers = sys.argv[1].split(",")
    # The topic is auto-created by kafka-python's metadata request (v1, which
    # creates missing topics when the broker allows auto-creation).
    topic = os.environ.get("SMOKE_TOPIC") or "smoke-kafka-python-%d-%d" % (os.getpid(), int(time.time()))
    recs = [
        (b"key-%d" % i, b"value-%d" % i, [("seq", b"%d" % i), ("dup", b"x"), ("dup", b"y")])
        for i in range(50)
    ]
    recs.append((b"tombstone", None, []))

    p = KafkaProducer(bootstrap_servers=brokers, acks="all", linger_ms=5, request_timeout_ms=30000)
    futures = [p.send(topic, key=k, value=v, headers=h, partition=0) for k, v, h in recs]
    p.flush(timeout=60)
    offsets = [f.get(timeout=60).offset for f in futures]
    p.close(timeout=10)
    if offsets != sorted(offsets) or len(set(offsets)) != len(recs):
        fail("unexpected offsets %s" % offsets)

    c = KafkaConsumer(
        bootstrap_servers=brokers,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < len(recs):
            if time.monotonic() > deadline:
                fail("consumed %d of %d within 60s" % (len(got), len(recs)))
            for batch in c.poll(timeout_ms=1000).values():
                for m in batch:
                    got.append((m.key, m.value, [(k, v) for k, v in (m.headers or [])]))
    finally:
        c.close()

    for i, (want, have) in enumerate(zip(recs, got)):
        if want != have:
            fail("record %d differs:\n want %r\n have %r" % (i, want, have))
    if len(got) != len(recs):
        fail("consumed %d records, want %d" % (len(got), len(recs)))
    print("kafka-python: %d records with keys and headers round-tripped through %s" % (len(got), topic))


if __name__ == "__main__":
    main()

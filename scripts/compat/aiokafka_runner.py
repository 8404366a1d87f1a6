"""Compatibility runner for aiokafka (asyncio, pure Python).

Runs every scenario of the compat suite against BROKERS and prints one line
per scenario on stdout:

    RESULT aiokafka <scenario> PASS|FAIL|SKIP <detail>

    .cache/compat-venv/bin/python scripts/compat/aiokafka_runner.py BROKERS [scenario ...]

aiokafka comes from PyPI into the virtualenv of scripts/compat/venv.sh, with
cramjam for snappy, lz4 and zstd. It has no KIP-848 consumer protocol, so
group-kip848 is SKIP. Its admin client has the legacy AlterConfigs only (no
IncrementalAlterConfigs), which the admin scenario uses. Progress goes to
stderr. Names end in a per-run suffix, so reruns against one long-lived
broker do not collide. Every wait is bounded: a polled condition gives up at
a deadline, every client call at STEP seconds, a scenario at SCENARIO_TIMEOUT.
"""

import asyncio
import logging
import os
import sys
import time

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.helpers import create_ssl_context

import pyrunner
from pyrunner import CONFIG_WAIT, RUN, STEP, Failure, Skip, check

CLIENT = os.environ.get("KLOG_COMPAT_CLIENT") or "aiokafka"
SCENARIO_TIMEOUT = 120.0  # seconds for one scenario


def log(msg):
    pyrunner.log(CLIENT, msg)


def bounded(aw, what, timeout=STEP):
    """Awaits aw for at most timeout seconds."""

    async def run():
        try:
            return await asyncio.wait_for(aw, timeout)
        except asyncio.TimeoutError:
            raise Failure("timed out after %.0fs: %s" % (timeout, what)) from None

    return run()


async def wait_for(cond, what, timeout=STEP):
    """Polls the coroutine function cond until it returns a true value;
    returns that value."""
    deadline = time.monotonic() + timeout
    while True:
        v = await cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Failure("timed out after %.0fs waiting for %s" % (timeout, what))
        await asyncio.sleep(0.05)


class Clients:
    """Starts clients and stops every one of them when the scenario ends."""

    def __init__(self, brokers):
        self.brokers = brokers
        self.started = []

    async def start(self, c):
        self.started.append(c)
        await bounded(c.start(), "starting %s" % type(c).__name__)
        return c

    async def stop(self, c):
        if c in self.started:
            self.started.remove(c)
            await bounded(c.stop() if hasattr(c, "stop") else c.close(), "stopping %s" % type(c).__name__)

    def conn(self):
        """A client's connection settings: the brokers, and the security
        of KLOG_COMPAT_SECURITY's file (pyrunner.python_security), the CA
        and client certificate in an ssl context as aiokafka takes them."""
        c = pyrunner.python_security()
        files = {k: c.pop(k) for k in ("ssl_cafile", "ssl_certfile", "ssl_keyfile") if k in c}
        if files:
            c["ssl_context"] = create_ssl_context(
                cafile=files.get("ssl_cafile"), certfile=files.get("ssl_certfile"), keyfile=files.get("ssl_keyfile")
            )
        return dict(bootstrap_servers=self.brokers, **c)

    async def admin(self):
        return await self.start(AIOKafkaAdminClient(**self.conn(), request_timeout_ms=int(STEP * 1000)))

    async def producer(self, **conf):
        conf.setdefault("linger_ms", 5)
        return await self.start(AIOKafkaProducer(**self.conn(), request_timeout_ms=int(STEP * 1000), **conf))

    async def consumer(self, *topics, **conf):
        conf.setdefault("enable_auto_commit", False)
        return await self.start(AIOKafkaConsumer(*topics, **self.conn(), **conf))

    async def close(self):
        for c in reversed(list(self.started)):
            try:
                await self.stop(c)
            except Exception as e:  # closing is best effort; the result stands
                log("closing %s: %s" % (type(c).__name__, e))


def errors_of(resp, field):
    """The non-zero error codes of a raw response's per-item list."""
    return [(item[0], item[1]) for item in getattr(resp, field) if item[1] != 0]


async def partition_count(cl, topic):
    c = await cl.consumer()
    try:
        await bounded(c._client.force_metadata_update(), "a metadata update")
        return len(c.partitions_for_topic(topic) or ())
    finally:
        await cl.stop(c)


async def create_topic(cl, topic, partitions, config=None):
    a = await cl.admin()
    try:
        resp = await bounded(a.create_topics([NewTopic(topic, partitions, 1, topic_configs=config or {})]), "create_topics")
        check(not errors_of(resp, "topic_errors"), "create_topics %s: %s" % (topic, errors_of(resp, "topic_errors")))
    finally:
        await cl.stop(a)

    async def ready():
        return await partition_count(cl, topic) == partitions

    await wait_for(ready, "topic %s in the metadata" % topic)


async def wait_stable(cl, tps):
    """Waits until the last stable offset of every partition in tps is its
    high watermark: no transaction is open there any more. Kafka writes a
    transaction's markers after EndTxn has answered, so right after a
    commit the last stable offset may still stop before that transaction's
    records. Returns the end offsets."""
    rc = await cl.consumer(isolation_level="read_committed")
    ru = await cl.consumer()
    try:
        async def stable():
            lso = await bounded(rc.end_offsets(tps), "end_offsets (read_committed)")
            hw = await bounded(ru.end_offsets(tps), "end_offsets (read_uncommitted)")
            return lso == hw and lso

        return await wait_for(stable, "the last stable offsets of %s to reach the high watermarks" % tps)
    finally:
        await cl.stop(rc)
        await cl.stop(ru)


async def read_all(cl, topic, partitions, isolation="read_uncommitted"):
    """Reads every partition of topic from the start until the position
    reaches the end offset; read_committed first waits for the transactions
    there to be complete (wait_stable)."""
    tps = [TopicPartition(topic, q) for q in range(partitions)]
    if isolation == "read_committed":
        await wait_stable(cl, tps)
    c = await cl.consumer(isolation_level=isolation)
    try:
        c.assign(tps)
        await bounded(c.seek_to_beginning(*tps), "seek_to_beginning")
        end = await bounded(c.end_offsets(tps), "end_offsets")
        msgs = []
        deadline = time.monotonic() + STEP
        while True:
            pos = {tp: await bounded(c.position(tp), "position") for tp in tps}
            if all(pos[tp] >= end[tp] for tp in tps):
                return msgs
            check(time.monotonic() < deadline, "%s reader of %s stuck at %s, end %s" % (isolation, topic, pos, end))
            for recs in (await c.getmany(timeout_ms=200)).values():
                msgs.extend(recs)
    finally:
        await cl.stop(c)


async def send_all(p, sends):
    """sends: a list of kwargs for p.send; waits for every delivery and
    returns the record metadata."""
    futures = [await bounded(p.send(**kw), "send") for kw in sends]
    return [await bounded(f, "a delivery") for f in futures]


UNKNOWN_TOPIC_OR_PARTITION = 3


async def config_values(a, topic):
    """The topic's configs; None while the broker asked does not know the
    topic yet (on a cluster, one that has not applied its creation)."""
    out = {}
    for resp in await bounded(a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)]), "describe_configs"):
        for res in resp.resources:
            if res[0] == UNKNOWN_TOPIC_OR_PARTITION:
                return None
            check(res[0] == 0, "describe_configs error %d %s" % (res[0], res[1]))
            for e in res[4]:
                out[e[0]] = e[1]
    return out


async def wait_configs(a, topic, want, when):
    """Polls describe_configs until the topic's configs include want, at
    most CONFIG_WAIT seconds: Kafka's brokers apply a config from the
    metadata log after the controller acknowledged the change, and on a
    cluster the broker asked may not know a new topic yet."""
    deadline = time.monotonic() + CONFIG_WAIT
    while True:
        cfg = await config_values(a, topic) or {}
        got = {k: cfg.get(k) for k in want}
        if got == want:
            return
        check(time.monotonic() < deadline, "%s: describe_configs shows %s, want %s (waited %.0fs)" % (when, got, want, CONFIG_WAIT))
        await asyncio.sleep(0.05)


async def scenario_admin(cl):
    topic = "compat-aio-admin" + RUN
    await create_topic(cl, topic, 3, {"retention.ms": "3600000"})
    a = await cl.admin()
    # list_topics may ask a broker that learns of the topic a moment after
    # the one that answered create_topics, as on any Kafka cluster.
    async def listed():
        return topic in await bounded(a.list_topics(), "list_topics")

    await wait_for(listed, "list_topics to list %s" % topic)
    desc = await bounded(a.describe_topics([topic]), "describe_topics")
    check(len(desc) == 1 and desc[0]["error_code"] == 0 and len(desc[0]["partitions"]) == 3, "describe_topics: %s" % desc)
    await wait_configs(a, topic, {"retention.ms": "3600000"}, "after create")
    # alter_configs (AlterConfigs) replaces the topic's whole override set.
    res = ConfigResource(ConfigResourceType.TOPIC, topic, configs={"retention.ms": "7200000", "cleanup.policy": "compact"})
    for resp in await bounded(a.alter_configs([res]), "alter_configs"):
        check(all(r[0] == 0 for r in resp.resources), "alter_configs: %s" % (resp.resources,))
    await wait_configs(a, topic, {"retention.ms": "7200000", "cleanup.policy": "compact"}, "after alter_configs")
    resp = await bounded(a.create_partitions({topic: NewPartitions(4)}), "create_partitions")
    check(not errors_of(resp, "topic_errors"), "create_partitions: %s" % errors_of(resp, "topic_errors"))

    async def four():
        return await partition_count(cl, topic) == 4

    await wait_for(four, "4 partitions of %s in the metadata" % topic)
    resp = await bounded(a.delete_topics([topic]), "delete_topics")
    check(all(e[1] == 0 for e in resp.topic_error_codes), "delete_topics: %s" % (resp.topic_error_codes,))

    async def gone():
        return topic not in await bounded(a.list_topics(), "list_topics")

    await wait_for(gone, "%s to leave the metadata" % topic)
    return "create (3 partitions, retention.ms), list, describe_topics, describe_configs, alter_configs, create_partitions to 4, delete"


async def scenario_produce_consume(cl):
    topic = "compat-aio-pc" + RUN
    await create_topic(cl, topic, 2)
    base = int(time.time() * 1000) - 3600 * 1000
    want = pyrunner.produce_consume_records(base)
    sends = [dict(topic=topic, key=k, value=v, headers=h, timestamp_ms=ts, partition=part) for part, k, v, h, ts in want]
    p = await cl.producer(acks="all")
    await send_all(p, sends)
    got = []
    msgs = await read_all(cl, topic, 2)
    for m in msgs:
        check(m.timestamp_type == 0, "record %s has timestamp type %d, want create time" % (m.key, m.timestamp_type))
        got.append((m.partition, m.key, m.value, list(m.headers), m.timestamp))
    for part in (0, 1):
        w = [r for r in want if r[0] == part]
        g = sorted((r for r in got if r[0] == part), key=lambda r: r[4])
        if w != g:
            first = next((i for i, (x, y) in enumerate(zip(w, g)) if x != y), min(len(w), len(g)))
            raise Failure("partition %d: %d records, want %d; first difference at %d: got %s want %s"
                          % (part, len(g), len(w), first, g[first:first + 1], w[first:first + 1]))
    offsets = sorted(m.offset for m in msgs if m.partition == 0)
    check(offsets == list(range(30)), "partition 0 offsets %s, want 0..29" % offsets[:5])
    return "%d records: keys (some null), a null value, duplicate and empty headers, explicit timestamps, 2 partitions" % len(got)


async def scenario_compression(cl):
    checked = []
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        topic = "compat-aio-z-%s%s" % (codec, RUN)
        await create_topic(cl, topic, 1)
        p = await cl.producer(compression_type=codec, linger_ms=50)
        values = [("%s record %d %s" % (codec, i, "x" * 50)).encode() for i in range(300)]
        await send_all(p, [dict(topic=topic, value=v, key=b"k", partition=0) for v in values])
        await cl.stop(p)
        got = [m.value for m in await read_all(cl, topic, 1)]
        check(got == values, "%s: consumed %d records differing from 300 produced (checked so far: %s)" % (codec, len(got), checked))
        checked.append(codec)
    return "codecs checked: %s (300 records each)" % " ".join(checked)


async def scenario_offsets_by_time(cl):
    topic = "compat-aio-time" + RUN
    await create_topic(cl, topic, 1)
    base = int(time.time() * 1000) - 3600 * 1000
    p = await cl.producer()
    await send_all(p, [dict(topic=topic, value=b"t%d" % i, timestamp_ms=base + i * 1000, partition=0) for i in range(10)])
    c = await cl.consumer()
    tp = TopicPartition(topic, 0)
    cases = [(base - 5000, 0), (base, 0), (base + 4000, 4), (base + 4500, 5), (base + 9000, 9), (base + 60000, None)]
    for ts, want in cases:
        r = (await bounded(c.offsets_for_times({tp: ts}), "offsets_for_times"))[tp]
        got = None if r is None else r.offset
        check(got == want, "offsets_for_times(base+%d) = %s, want %s" % (ts - base, got, want))
        if r is not None:
            check(r.timestamp == base + want * 1000, "offsets_for_times(base+%d) timestamp base+%d, want base+%d"
                  % (ts - base, r.timestamp - base, want * 1000))
    return "offsets_for_times: before the first -> 0, exact -> 4, between -> 5, last -> 9, after the end -> None"


async def group_member(cl, topic, group, name):
    return await cl.consumer(
        topic,
        group_id=group,
        client_id=name,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=500,
        partition_assignment_strategy=(RangePartitionAssignor,),
    )


async def scenario_group(cl):
    topic = group = "compat-aio-group" + RUN
    await create_topic(cl, topic, 4)
    n = 200
    p = await cl.producer()
    members = {name: await group_member(cl, topic, group, name) for name in ("a", "b")}
    seen = {name: [] for name in members}

    async def split():
        for name, c in members.items():
            for recs in (await c.getmany(timeout_ms=100)).values():
                seen[name].extend((m.partition, m.offset, m.value) for m in recs)
        sa, sb = members["a"].assignment(), members["b"].assignment()
        return len(sa) == 2 and len(sb) == 2 and not {t.partition for t in sa} & {t.partition for t in sb}

    await wait_for(split, "the group to split 4 partitions 2 + 2", 3 * STEP)
    a_parts = sorted(t.partition for t in members["a"].assignment())
    # Produce only once the split is done, so no record is read before a
    # rebalance moves its partition (which would read it twice).
    await send_all(p, [dict(topic=topic, value=b"g%d" % i, partition=i % 4) for i in range(n)])

    async def all_read():
        await split()
        return sum(len(v) for v in seen.values()) >= n

    await wait_for(all_read, "%d records read by two members" % n)
    values = sorted(v for lst in seen.values() for (_, _, v) in lst)
    check(values == sorted(b"g%d" % i for i in range(n)),
          "two members read %d records (%d distinct), want %d once" % (len(values), len(set(values)), n))
    for name, c in members.items():
        owned = {t.partition for t in c.assignment()}
        check(all(part in owned for (part, _, _) in seen[name]), "member %s read partitions it does not own" % name)
        await bounded(c.commit(), "commit")
    a = await cl.admin()
    described = []
    for resp in await bounded(a.describe_consumer_groups([group]), "describe_consumer_groups"):
        described.extend(resp.groups)
    check(len(described) == 1, "describe_consumer_groups: %d groups, want 1" % len(described))
    err, _, state, protocol_type, protocol, gmembers = described[0][:6]
    check(err == 0 and state == "Stable" and protocol_type == "consumer" and protocol == "range" and len(gmembers) == 2,
          "describe_consumer_groups: error %d, state %s, protocol %s/%s, %d members; want Stable consumer/range with 2"
          % (err, state, protocol_type, protocol, len(gmembers)))
    for c in list(members.values()):
        await cl.stop(c)
    # OffsetFetch: the committed offsets are the partitions' ends.
    committed = await bounded(a.list_consumer_group_offsets(group), "list_consumer_group_offsets")
    got = {tp.partition: o.offset for tp, o in committed.items() if tp.topic == topic}
    check(got == {q: n // 4 for q in range(4)}, "committed offsets %s, want %d on each of 4 partitions" % (got, n // 4))
    # A restarted member resumes at the committed offsets.
    await send_all(p, [dict(topic=topic, value=b"late%d" % i, partition=i % 4) for i in range(8)])
    c = await group_member(cl, topic, group, "c")
    late = []

    async def resumed():
        for recs in (await c.getmany(timeout_ms=200)).values():
            late.extend(m.value for m in recs)
        return len(late) >= 8

    await wait_for(resumed, "the restarted member to read 8 new records", 2 * STEP)
    tps = [TopicPartition(topic, q) for q in range(4)]
    end = await bounded(c.end_offsets(tps), "end_offsets")

    async def at_end():
        for recs in (await c.getmany(timeout_ms=100)).values():
            late.extend(m.value for m in recs)
        return all([await bounded(c.position(tp), "position") == end[tp] for tp in tps])

    await wait_for(at_end, "the restarted member to reach the end")
    check(sorted(late) == sorted(b"late%d" % i for i in range(8)),
          "restarted member read %s, want only the 8 records after the commit" % late[:12])
    return ("two members split 4 partitions (a had %s), %d records once, offsets committed and fetched, described as a Stable "
            "consumer/range group with 2 members; restarted member resumed at the committed offsets" % (a_parts, n))


async def scenario_group_kip848(cl):
    raise Skip("aiokafka %s has no KIP-848 consumer protocol (group.protocol=consumer): classic JoinGroup/SyncGroup groups only"
               % aiokafka.__version__)


async def scenario_idempotent(cl):
    topic = "compat-aio-idem" + RUN
    await create_topic(cl, topic, 2)
    n = 2000
    p = await cl.producer(enable_idempotence=True, acks="all")
    await send_all(p, [dict(topic=topic, value=b"i%d" % i, partition=i % 2) for i in range(n)])
    got = await read_all(cl, topic, 2)
    for part in (0, 1):
        vals = [m.value for m in got if m.partition == part]
        want = [b"i%d" % i for i in range(part, n, 2)]
        check(vals == want, "partition %d holds %d records (%d distinct), want %d in order" % (part, len(vals), len(set(vals)), len(want)))
    return "%d records on 2 partitions with enable_idempotence, each once and in order" % n


async def scenario_transactions(cl):
    topic = "compat-aio-txn" + RUN
    await create_topic(cl, topic, 2)
    p = await cl.producer(transactional_id="compat-aio-txn" + RUN, transaction_timeout_ms=60000)
    await bounded(p.begin_transaction(), "begin_transaction")
    await send_all(p, [dict(topic=topic, value=b"committed-%d" % i, partition=i % 2) for i in range(50)])
    await bounded(p.commit_transaction(), "commit_transaction")
    await bounded(p.begin_transaction(), "begin_transaction")
    await send_all(p, [dict(topic=topic, value=b"aborted-%d" % i, partition=i % 2) for i in range(50)])
    await bounded(p.abort_transaction(), "abort_transaction")
    async with p.transaction():
        await send_all(p, [dict(topic=topic, value=b"committed-last", partition=0)])
    rc = sorted(m.value for m in await read_all(cl, topic, 2, "read_committed"))
    want = sorted([b"committed-%d" % i for i in range(50)] + [b"committed-last"])
    check(rc == want, "read_committed saw %d records (%d aborted), want the 51 committed"
          % (len(rc), sum(1 for v in rc if v.startswith(b"aborted"))))
    ru = await read_all(cl, topic, 2, "read_uncommitted")
    check(len(ru) == 101, "read_uncommitted saw %d records, want 101" % len(ru))
    return "commit 50, abort 50, commit 1: read_committed saw the 51 committed, read_uncommitted all 101"


async def scenario_consume_transform_produce(cl):
    src, dst, group = "compat-aio-ctp-in" + RUN, "compat-aio-ctp-out" + RUN, "compat-aio-ctp" + RUN
    n = 200
    await create_topic(cl, src, 2)
    await create_topic(cl, dst, 2)
    plain = await cl.producer()
    await send_all(plain, [dict(topic=src, key=str(i).encode(), value=b"in-%d" % i, partition=i % 2) for i in range(n)])
    consumer = await cl.consumer(
        src,
        group_id=group,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        session_timeout_ms=10000,
        heartbeat_interval_ms=500,
    )
    p = await cl.producer(transactional_id="compat-aio-ctp" + RUN, transaction_timeout_ms=60000)
    processed = 0
    aborted = False
    deadline = time.monotonic() + 3 * STEP
    while processed < n:
        check(time.monotonic() < deadline, "stuck after %d of %d records" % (processed, n))
        batch = [m for recs in (await consumer.getmany(timeout_ms=500, max_records=50)).values() for m in recs]
        if not batch:
            continue
        await bounded(p.begin_transaction(), "begin_transaction")
        await send_all(p, [dict(topic=dst, key=m.key, value=b"out-" + m.value[3:], partition=m.partition) for m in batch])
        offsets = {tp: await bounded(consumer.position(tp), "position") for tp in consumer.assignment()}
        await bounded(p.send_offsets_to_transaction(offsets, group), "send_offsets_to_transaction")
        if not aborted:
            # The first batch is aborted: output and offsets roll back and
            # the input is read again from the committed offsets.
            aborted = True
            await bounded(p.abort_transaction(), "abort_transaction")
            for tp in consumer.assignment():
                committed = await bounded(consumer.committed(tp), "committed")
                consumer.seek(tp, committed if committed is not None and committed >= 0 else 0)
            continue
        await bounded(p.commit_transaction(), "commit_transaction")
        processed += len(batch)
    tps = [TopicPartition(src, q) for q in range(2)]
    end = await bounded(consumer.end_offsets(tps), "end_offsets")
    # The offsets committed in a transaction show once its markers are
    # written, which Kafka does after EndTxn has answered; aiokafka's
    # OffsetFetch (v3 at most) cannot ask the broker to wait for them
    # (require_stable, v7), so poll.
    got = {}

    async def offsets_at_end():
        for tp in tps:
            got[tp.partition] = await bounded(consumer.committed(tp), "committed")
        return all(got[tp.partition] == end[tp] for tp in tps)

    try:
        await wait_for(offsets_at_end, "the group offsets")
    except Failure as e:
        raise Failure("%s: group offsets of %s are %s, want the end offsets %s" % (e, src, got, end)) from None
    await cl.stop(consumer)
    out = sorted(m.value for m in await read_all(cl, dst, 2, "read_committed"))
    want = sorted(b"out-%d" % i for i in range(n))
    check(out == want, "output holds %d records (%d distinct), want %d exactly once" % (len(out), len(set(out)), n))
    return "%d records through send_offsets_to_transaction (first transaction aborted and replayed): output exactly once, group offsets at the end" % n




async def run_one(fn, brokers):
    """Runs one scenario in its own event loop, stopping every client it
    started."""
    cl = Clients(brokers)
    try:
        return await asyncio.wait_for(fn(cl), SCENARIO_TIMEOUT)
    except asyncio.TimeoutError:
        raise Failure("the scenario ran past %.0fs" % SCENARIO_TIMEOUT) from None
    finally:
        await cl.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    sys.exit(pyrunner.main(CLIENT, sys.argv, pyrunner.scenarios(globals()), "aiokafka %s" % aiokafka.__version__,
                           lambda fn, brokers: asyncio.run(run_one(fn, brokers))))

"""What the compat matrix's Python runners share (confluent_kafka.py,
kafka_python.py, aiokafka_runner.py): the run-unique name suffix, the
bounds, the scenario outcomes and the loop that runs every scenario and
prints its RESULT line (the protocol is in scripts/compat/README.md).
"""

import sys
import time
import traceback

STEP = 20.0  # seconds for any single wait
CONFIG_WAIT = 10.0  # seconds for a config change to show in describe_configs
# Topic, group and transactional ids end in this per-run suffix, so reruns
# against one long-lived broker do not collide.
RUN = "-%d" % (time.time_ns() // 1000000 % 100000000)


class Failure(Exception):
    """The scenario found the broker or the client wrong."""


class Skip(Exception):
    """The client cannot do the scenario; the text says why."""


# The scenarios, in the matrix's order; a runner defines scenario_<id> (dashes
# as underscores) for each.
SCENARIO_IDS = [
    "admin",
    "produce-consume",
    "compression",
    "offsets-by-time",
    "group",
    "group-kip848",
    "idempotent",
    "transactions",
    "consume-transform-produce",
]


def scenarios(namespace):
    """The (id, function) pairs of a runner's module namespace."""
    return [(i, namespace["scenario_" + i.replace("-", "_")]) for i in SCENARIO_IDS]


def produce_consume_records(base):
    """The produce-consume scenario's 60 records from timestamp base on, as
    (partition, key, value, headers, timestamp): keys (some null), one null
    value, duplicate and empty headers, explicit timestamps, 2 partitions."""
    out = []
    for i in range(60):
        key = None if i % 10 == 9 else ("key-%d" % i).encode()
        value = None if i == 7 else ("value %d ✓" % i).encode()
        headers = [("dup", b"one"), ("dup", b"two"), ("i", str(i).encode())] if i % 2 == 0 else []
        if i % 3 == 0:
            headers.append(("empty", b""))
        out.append((i % 2, key, value, headers, base + i * 1000))
    return out


def log(client, msg):
    print("%s: %s" % (client, msg), file=sys.stderr, flush=True)


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def wait_for(cond, what, timeout=STEP):
    """Polls cond() until it returns a true value; returns that value."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Failure("timed out after %.0fs waiting for %s" % (timeout, what))
        time.sleep(0.05)


def one_line(s):
    return " ".join(str(s).split())[:300]


def main(client, argv, scenarios, banner, call=None):
    """Runs the scenarios (name, fn) named in argv[2:] (all without names)
    against the brokers argv[1], one at a time: call(fn, brokers) runs one
    (fn(brokers) by default) and returns its one-line detail, or raises Skip
    or Failure; any other exception is a failure too, so one scenario never
    stops the others. Prints banner first (the library's versions), then a
    RESULT line per scenario; returns the exit status."""
    if len(argv) < 2:
        print("usage: %s BROKERS [scenario ...]" % argv[0], file=sys.stderr)
        return 2
    brokers, only = argv[1], set(argv[2:])
    call = call or (lambda fn, b: fn(b))
    log(client, banner)
    failed = 0
    for name, fn in scenarios:
        if only and name not in only:
            continue
        start = time.monotonic()
        log(client, "--- " + name)
        try:
            detail, status = call(fn, brokers), "PASS"
        except Skip as e:
            detail, status = str(e), "SKIP"
        except Failure as e:
            detail, status = str(e), "FAIL"
        except Exception as e:  # a client error is a scenario failure
            traceback.print_exc(file=sys.stderr)
            detail, status = "%s: %s" % (type(e).__name__, e), "FAIL"
        if status == "FAIL":
            failed += 1
        log(client, "%s: %s in %.1fs" % (name, status, time.monotonic() - start))
        print("RESULT %s %s %s %s" % (client, name, status, one_line(detail) or "ok"), flush=True)
    return 1 if failed else 0

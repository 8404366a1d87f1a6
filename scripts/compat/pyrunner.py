"""What the compat matrix's Python runners share (confluent_kafka.py,
kafka_python.py, aiokafka_runner.py): the run-unique name suffix, the
bounds, the scenario outcomes and the loop that runs every scenario and
prints its RESULT line (the protocol is in scripts/compat/README.md).
"""

import os
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


# KLOG_COMPAT_SECURITY names the client config file a runner connects with:
# a Java properties file klog up --secure wrote (app.properties: SASL_SSL
# with SCRAM-SHA-512; app-mtls.properties: mTLS with the app's client
# certificate). The Python clients read its librdkafka twin, written beside
# it (NAME.librdkafka.properties): the same settings with the CA and the
# client certificate as PEM files and the user and password as plain keys.
SECURITY_ENV = "KLOG_COMPAT_SECURITY"


def read_properties(path):
    """The key=value lines of a properties file klog wrote, as a dict
    ("#" comments and blank lines skipped; no escapes or continuations,
    which klog's client configs do not use)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            k, sep, v = line.partition("=")
            if not sep:
                raise ValueError("%s: not key=value: %r" % (path, line))
            out[k.strip()] = v.strip()
    return out


def librdkafka_security():
    """The librdkafka settings of SECURITY_ENV's file (its twin), less
    bootstrap.servers: {} without one."""
    path = os.environ.get(SECURITY_ENV, "").strip()
    if not path:
        return {}
    twin = path[: -len(".properties")] + ".librdkafka.properties" if path.endswith(".properties") else path
    conf = read_properties(twin)
    conf.pop("bootstrap.servers", None)
    return conf


def python_security():
    """SECURITY_ENV's settings as kafka-python and aiokafka name them
    (security_protocol, sasl_*, ssl_cafile/certfile/keyfile): {} without
    one."""
    c = librdkafka_security()
    if not c:
        return {}
    out = {"security_protocol": c["security.protocol"]}
    names = {
        "sasl.mechanisms": "sasl_mechanism",
        "sasl.username": "sasl_plain_username",
        "sasl.password": "sasl_plain_password",
        "ssl.ca.location": "ssl_cafile",
        "ssl.certificate.location": "ssl_certfile",
        "ssl.key.location": "ssl_keyfile",
    }
    for k, v in c.items():
        if k not in names and k != "security.protocol":
            raise ValueError("%s: no mapping for %s" % (SECURITY_ENV, k))
        if k in names:
            out[names[k]] = v
    return out


def security_banner():
    """How the runner connects, for its log."""
    c = librdkafka_security()
    if not c:
        return "PLAINTEXT"
    if "sasl.username" in c:
        return "%s %s as %s" % (c["security.protocol"], c.get("sasl.mechanisms"), c["sasl.username"])
    return "%s with client certificate %s" % (c["security.protocol"], c.get("ssl.certificate.location"))


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
    log(client, "connecting over " + security_banner())
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

#!/usr/bin/env bash
# franz-go's own kgo integration test suite against any broker.
#
#   scripts/compat/kgo-suite.sh BROKERS
#
# Runs "go test github.com/twmb/franz-go/pkg/kgo" from klog's module (so the
# franz-go version is the one in go.mod; the go tool builds the package's
# tests from the module cache) with KGO_SEEDS=BROKERS. Prints go test's
# output and exits with go test's status; it also fails when a test the
# suite did not exclude below skipped itself (see "Unexpected skips").
#
# Settings (each can be overridden from the environment):
#
#   KGO_TEST_RF=1            replication factor of the suite's topics. A
#                            single "klog up" node cannot place more replicas;
#                            scripts/test.sh runs the suite with 3 against
#                            "klog up -n 3" too.
#   KGO_TEST_RECORDS=100000  records each ETL test (TestGroupETL, TestTxnEtl)
#                            pushes through its chain of consumers. The suite's
#                            default of 500000 takes well over 10 minutes on a
#                            2-core machine; 100000 still runs every group
#                            protocol and balancer through many rebalances and
#                            thousands of transactions, in about 3 minutes.
#   KGO_TEST_UNSAFE=1        TestTxnEtl also uses EndBeginTxnUnsafe (a new
#                            transaction begins before EndTxn has answered);
#                            klog, like Kafka, serves that.
#   KGO_LOG_LEVEL=none       the clients' own logging; at info the ETL tests
#                            print millions of lines. Set info or debug to
#                            investigate a failure.
#   KGO_SUITE_TIMEOUT=10m    go test -timeout.
#   KGO_SUITE_RUN=           go test -run: only these tests, as ^(TestA|TestB)$
#                            (scripts/test.sh's summary names the failed ones)
#   KGO_TEST_TLS=            ca:PEM,cert:PEM,key:PEM: every test client dials
#                            TLS with this CA and client certificate
#                            (klog up --secure's SSL listeners: BROKERS)
#   KGO_TEST_SCRAM=          USER:PASSWORD[:512] and KGO_TEST_SCRAM_SEEDS= a
#                            SASL_PLAINTEXT listener: the SCRAM tests
#   KGO_SUITE_EXCLUDE=       more tests to exclude, as TestA|TestB, each for a
#                            known klog bug that scripts/test.sh names where it
#                            sets this (the 3-node stage).
#
# Excluded tests (-skip), each for a feature klog does not have:
#
#   TestShareGroup, TestShareGroupETL, TestShareGroupAckOnClose,
#   TestShareGroupOffsetsAdmin, TestConsumeRegexShareSkipsInternal:
#       share groups (KIP-932, ShareFetch/ShareAcknowledge) are not
#       implemented.
#   TestSCRAMAuth, TestSCRAMAuthBadCredentials, TestOAuthAuth:
#       they need a SASL listener and a user: the SCRAM ones run when
#       KGO_TEST_SCRAM_SEEDS names a SASL_PLAINTEXT listener and
#       KGO_TEST_SCRAM its user (scripts/test.sh's security/kgo-scram);
#       TestOAuthAuth is left to KGO_TEST_OAUTH_SEEDS's broker.
#
# and one for a race in the test itself:
#
#   Test848RegexBrokerResolves: where no broker makes its "internal" topic
#       (Kafka 4.4 and klog refuse kfake.is_internal), it consumes
#       __consumer_offsets, which other tests' commits fill, without
#       wanting its records; its loop stops once it has seen as many
#       topics as it wants, so seeing __consumer_offsets and one of its two
#       topics first fails it ("did not consume from ...-orders"; 1 run in
#       20, on 3 nodes). Against Kafka the same holds.
#
# Unexpected skips: the suite skips some tests by itself when the broker does
# not advertise a feature (KIP-848 consumer groups, static membership, share
# groups). klog serves those, so such a skip means klog stopped advertising
# something: it fails this script instead of passing silently. The one
# conditional skip allowed is TestIssueProduceBrokerTooOldFailsRecords, which
# skips itself when the broker lists Produce v2: Kafka 4.4 lists v0-2 (for
# old librdkafka) and refuses them, and so does klog, so it skips on both.
set -uo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 BROKERS" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2

export KGO_SEEDS=$1
export KGO_TEST_RF=${KGO_TEST_RF:-1}
export KGO_TEST_RECORDS=${KGO_TEST_RECORDS:-100000}
export KGO_TEST_UNSAFE=${KGO_TEST_UNSAFE:-1}
export KGO_LOG_LEVEL=${KGO_LOG_LEVEL:-none}

excluded='TestShareGroup|TestShareGroupETL|TestShareGroupAckOnClose|TestShareGroupOffsetsAdmin|TestConsumeRegexShareSkipsInternal|TestSCRAMAuth|TestSCRAMAuthBadCredentials|TestOAuthAuth|Test848RegexBrokerResolves'
# With KGO_TEST_SCRAM_SEEDS (a SASL_PLAINTEXT listener) and KGO_TEST_SCRAM
# the SCRAM tests run.
if [ -n "${KGO_TEST_SCRAM_SEEDS:-}" ]; then
  excluded=${excluded//|TestSCRAMAuth|TestSCRAMAuthBadCredentials/}
fi
if [ -n "${KGO_SUITE_EXCLUDE:-}" ]; then
  excluded="$excluded|$KGO_SUITE_EXCLUDE"
fi
excluded="^($excluded)\$"
allowed_skip='TestIssueProduceBrokerTooOldFailsRecords'

out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "kgo-suite: KGO_SEEDS=$KGO_SEEDS${KGO_TEST_TLS:+ KGO_TEST_TLS=$KGO_TEST_TLS}${KGO_TEST_SCRAM_SEEDS:+ KGO_TEST_SCRAM_SEEDS=$KGO_TEST_SCRAM_SEEDS} KGO_TEST_RF=$KGO_TEST_RF KGO_TEST_RECORDS=$KGO_TEST_RECORDS KGO_TEST_UNSAFE=$KGO_TEST_UNSAFE KGO_LOG_LEVEL=$KGO_LOG_LEVEL${KGO_SUITE_EXCLUDE:+ KGO_SUITE_EXCLUDE=$KGO_SUITE_EXCLUDE}${KGO_SUITE_RUN:+ KGO_SUITE_RUN=$KGO_SUITE_RUN}" >&2
start=$SECONDS
go test -v -count=1 -timeout "${KGO_SUITE_TIMEOUT:-10m}" -skip "$excluded" ${KGO_SUITE_RUN:+-run "$KGO_SUITE_RUN"} \
  github.com/twmb/franz-go/pkg/kgo 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}

skips=$(grep -E '^[[:space:]]*--- SKIP: ' "$out" | grep -v -E -- "--- SKIP: ${allowed_skip}[ /]" || true)
if [ -n "$skips" ]; then
  echo "kgo-suite: tests skipped themselves; klog no longer serves what they need:" >&2
  echo "$skips" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
passed=$(grep -c -E '^--- PASS: ' "$out" || true)
failed=$(grep -c -E '^--- FAIL: ' "$out" || true)
echo "kgo-suite: $passed top-level tests passed, $failed failed, in $((SECONDS - start))s (exit $rc)" >&2
exit "$rc"

// The compat suite's Kafka Streams check (org.apache.kafka:kafka-streams):
// a word count with processing.guarantee=exactly_once_v2, and the small
// tools that scripts/compat/streams.sh drives it with. One main class, one
// subcommand per step, so that the application runs in its own JVM and can
// be SIGKILLed while the others go on:
//
//     java -cp CP dev.klog.compat.streams.Main topics  BROKERS IN OUT PARTITIONS
//     java -cp CP dev.klog.compat.streams.Main produce BROKERS IN FROM TO WORDS
//     java -cp CP dev.klog.compat.streams.Main app     BROKERS APP_ID IN OUT STATE_DIR
//     java -cp CP dev.klog.compat.streams.Main wait    BROKERS APP_ID IN MIN SECONDS
//     java -cp CP dev.klog.compat.streams.Main kill    BROKERS APP_ID IN OUT MIN MAX SECONDS PID
//     java -cp CP dev.klog.compat.streams.Main output  BROKERS OUT RECORDS WORDS SECONDS
//     java -cp CP dev.klog.compat.streams.Main verify  BROKERS APP_ID OUT RECORDS WORDS
//
// The input: record i (0 <= i < RECORDS) has key "r<i>" and value word(i),
// one of WORDS words. The application re-keys each record by its word
// (groupBy, so Streams writes them through the repartition topic
// APP_ID-words-repartition), counts per word into the persistent (RocksDB)
// store "counts" (changelog APP_ID-counts-changelog, compacted) and writes
// every new count to OUT. The store's cache is off, so every input record
// yields one output record: read read_committed, the values of one word must
// be exactly 1, 2, ..., its count, whatever crashes happened — a repeat is a
// record counted twice, a gap a lost one.
//
// Progress and the clients' warnings go to stderr; results to stdout as
// "PASS streams/NAME: detail" or "FAIL streams/NAME: why" lines. Every
// blocking call is bounded by the clients' timeouts (STEP) or a deadline.
package dev.klog.compat.streams;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

public final class Main {
    /** Seconds for any single blocking client call. */
    static final int STEP = 20;
    /**
     * Seconds the application's close on SIGTERM may take: from
     * KLOG_STREAMS_CLOSE_SECONDS, which streams.sh sets to most of the time it
     * waits for the process to exit, else STEP. Closing an exactly-once
     * application commits or aborts its transaction, flushes its producer
     * and leaves the group, each a broker round trip; on a busy machine that
     * can take far more than STEP, and a close that gave up early would make
     * the clean-close check fail on the machine's load, not on the broker.
     */
    static final int CLOSE = closeSeconds();

    static int closeSeconds() {
        String s = System.getenv("KLOG_STREAMS_CLOSE_SECONDS");
        return s == null || s.isEmpty() ? STEP : Integer.parseInt(s);
    }
    /** The repartition topic's and the store's names in the topology. */
    static final String GROUPED = "words";
    static final String STORE = "counts";

    /** A check failed: the step prints FAIL with this message and exits 1. */
    static final class Failure extends RuntimeException {
        Failure(String msg) {
            super(msg);
        }
    }

    private Main() {
    }

    static void log(String msg) {
        System.err.println("streams: " + msg);
    }

    /** The word of input record i: every one of WORDS words, unevenly often. */
    static String word(long i, int words) {
        return "w" + ((i * 37 + i / 11) % words);
    }

    /** How many of the first records input records carry each word. */
    static Map<String, Long> expected(long records, int words) {
        Map<String, Long> want = new TreeMap<>();
        for (long i = 0; i < records; i++) {
            want.merge(word(i, words), 1L, Long::sum);
        }
        return want;
    }

    /**
     * A client's Properties: the settings of the client config file
     * KLOG_COMPAT_SECURITY names (a Java properties file klog up --secure
     * wrote: SASL_SSL or mTLS), when set, and brokers as bootstrap.servers
     * (the file's own is the same listeners, written at start).
     */
    static Properties props(String brokers) {
        Properties p = new Properties();
        String file = System.getenv("KLOG_COMPAT_SECURITY");
        if (file != null && !file.isBlank()) {
            try (java.io.Reader r = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(file.strip()))) {
                p.load(r);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("KLOG_COMPAT_SECURITY=" + file, e);
            }
        }
        p.put("bootstrap.servers", brokers);
        return p;
    }

    static Admin admin(String brokers) {
        Properties p = props(brokers);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, STEP * 1000);
        return Admin.create(p);
    }

    static List<TopicPartition> partitions(Admin a, String topic) throws Exception {
        TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get(STEP, TimeUnit.SECONDS).get(topic);
        List<TopicPartition> tps = new ArrayList<>();
        d.partitions().forEach(p -> tps.add(new TopicPartition(topic, p.partition())));
        return tps;
    }

    // --- topics -------------------------------------------------------------

    static void topics(String brokers, String in, String out, int parts) throws Exception {
        try (Admin a = admin(brokers)) {
            a.createTopics(List.of(new NewTopic(in, parts, (short) 1), new NewTopic(out, parts, (short) 1)))
                    .all().get(STEP, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP);
            while (partitions(a, in).size() != parts || partitions(a, out).size() != parts) {
                if (System.nanoTime() > deadline) {
                    throw new Failure("topics " + in + " and " + out + " did not show " + parts + " partitions");
                }
                Thread.sleep(50);
            }
        }
        log("created " + in + " and " + out + " with " + parts + " partitions");
    }

    // --- produce ------------------------------------------------------------

    /** Writes input records from..to-1 with an idempotent producer, acks=all. */
    static void produce(String brokers, String in, long from, long to, int words) throws Exception {
        Properties p = props(brokers);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, STEP * 1000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 2 * STEP * 1000);
        try (KafkaProducer<String, String> pr = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> futs = new ArrayList<>();
            for (long i = from; i < to; i++) {
                futs.add(pr.send(new ProducerRecord<>(in, "r" + i, word(i, words))));
            }
            pr.flush();
            for (Future<RecordMetadata> f : futs) {
                f.get(STEP, TimeUnit.SECONDS);
            }
        }
        log("produced input records " + from + ".." + (to - 1));
    }

    // --- app ----------------------------------------------------------------

    /**
     * Runs the word count until SIGTERM (a clean close) or SIGKILL. Prints
     * "STATE <state>" on stdout at each state change. Exits 1 if the
     * application fails.
     */
    static void app(String brokers, String appId, String in, String out, String stateDir) throws Exception {
        Properties p = props(brokers);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // No record cache: every update of the store goes to the changelog
        // and to OUT, so verify can check the whole sequence of counts.
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        // A SIGKILLed member leaves the group at its session timeout; keep
        // that short (6 s is Kafka's group.min.session.timeout.ms).
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1500);
        // Streams lingers 100 ms, its commit interval here: the records of a
        // transaction would reach the broker only at its commit. Send them
        // as they come, so a SIGKILL leaves written records to abort.
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
        // Quiets 4.4's warning that this default changes in 5.0.
        p.put("processing.exception.handler.global.enabled", true);

        StreamsBuilder b = new StreamsBuilder();
        b.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
                .groupBy((k, v) -> v, Grouped.with(GROUPED, Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(STORE)
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));

        CountDownLatch done = new CountDownLatch(1);
        int[] rc = {0};
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        ks.setUncaughtExceptionHandler(e -> {
            log("the stream thread failed: " + e);
            rc[0] = 1;
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            long t0 = System.nanoTime();
            boolean closed = ks.close(Duration.ofSeconds(CLOSE));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (closed) {
                // The state listener may not have printed NOT_RUNNING yet
                // when close returns and the JVM halts: say it here too.
                System.out.println("CLOSED " + ks.state());
                System.out.flush();
                log("closed in " + ms + " ms");
            } else {
                // What the close waits for, for the check's failure report.
                log("close did not finish in " + ms + " ms (KLOG_STREAMS_CLOSE_SECONDS=" + CLOSE + "); threads:");
                for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                    System.err.println("--- " + e.getKey().getName() + " " + e.getKey().getState());
                    for (StackTraceElement f : e.getValue()) {
                        System.err.println("    at " + f);
                    }
                }
            }
            done.countDown();
        }));
        ks.start();
        done.await();
        ks.close(Duration.ofSeconds(STEP));
        if (rc[0] != 0) {
            System.exit(rc[0]);
        }
    }

    // --- wait ---------------------------------------------------------------

    /** The sum of the group's committed offsets on topic's partitions. */
    static long committed(Admin a, String group, String topic) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(STEP, TimeUnit.SECONDS);
        long sum = 0;
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : m.entrySet()) {
            if (e.getKey().topic().equals(topic) && e.getValue() != null) {
                sum += e.getValue().offset();
            }
        }
        return sum;
    }

    /** The sum of topic's end offsets (its records, when none is transactional). */
    static long written(Admin a, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        partitions(a, topic).forEach(tp -> req.put(tp, OffsetSpec.latest()));
        long sum = 0;
        for (var info : a.listOffsets(req).all().get(STEP, TimeUnit.SECONDS).values()) {
            sum += info.offset();
        }
        return sum;
    }

    /**
     * Polls the application's committed input offsets until they sum to at
     * least min, at most seconds; prints the sum on stdout. Committed offsets
     * move only when a transaction commits, so this is committed progress.
     */
    static void waitCommitted(String brokers, String appId, String in, long min, int seconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try (Admin a = admin(brokers)) {
            long got;
            while ((got = committed(a, appId, in)) < min) {
                if (System.nanoTime() > deadline) {
                    throw new Failure("the application's committed input offsets sum to " + got
                            + " after " + seconds + "s, want at least " + min);
                }
                Thread.sleep(100);
            }
            System.out.println(got);
        }
    }

    /**
     * How many records of topics tps are in an open transaction: the sum
     * over the partitions of high watermark minus last stable offset.
     */
    static long open(Admin a, List<TopicPartition> tps) throws Exception {
        Map<TopicPartition, Long> lso = ends(a, tps, IsolationLevel.READ_COMMITTED);
        Map<TopicPartition, Long> hw = ends(a, tps, IsolationLevel.READ_UNCOMMITTED);
        long sum = 0;
        for (TopicPartition tp : tps) {
            sum += Math.max(0, hw.get(tp) - lso.get(tp));
        }
        return sum;
    }

    /**
     * SIGKILLs process pid (the application) mid-stream, at most seconds
     * from now: once its committed input offsets sum to at least min, while
     * it has a transaction open with records written (to the repartition
     * topic, the changelog or OUT), so the kill leaves a transaction to
     * abort; or once they reach max, open transaction or not (on a loaded
     * machine the polls may not catch one). Then waits for the process to be
     * gone and prints "COMMITTED WRITTEN SEEN OPEN OPEN_OUT": the committed
     * input after the kill, the input written before it, 1 if an open
     * transaction was seen at the kill, and the records in an open
     * transaction after it, in all three topics and in OUT.
     */
    static void killMidStream(String brokers, String appId, String in, String out, long min, long max, int seconds,
            long pid) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        ProcessHandle app = ProcessHandle.of(pid).orElseThrow(() -> new Failure("no process " + pid + " to kill"));
        try (Admin a = admin(brokers)) {
            List<TopicPartition> written = new ArrayList<>();
            long got = 0;
            long input;
            boolean seen;
            while (true) {
                if (!app.isAlive()) {
                    throw new Failure("the application (pid " + pid + ") exited by itself with " + got + " committed");
                }
                if ((got = committed(a, appId, in)) >= min) {
                    if (written.isEmpty()) {
                        // The internal topics exist once something is committed.
                        for (String t : List.of(appId + "-" + GROUPED + "-repartition", appId + "-" + STORE + "-changelog", out)) {
                            written.addAll(partitions(a, t));
                        }
                    }
                    seen = open(a, written) > 0;
                    if (seen || got >= max) {
                        input = written(a, in);
                        app.destroyForcibly();
                        break;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new Failure("the application's committed input offsets sum to " + got + " after " + seconds
                            + "s, want at least " + min + " with a transaction open, or " + max);
                }
                Thread.sleep(got >= min ? 5 : 50);
            }
            app.onExit().get(STEP, TimeUnit.SECONDS);
            System.out.println(committed(a, appId, in) + " " + input + " " + (seen ? 1 : 0) + " " + open(a, written)
                    + " " + open(a, partitions(a, out)));
        }
    }

    // --- verify -------------------------------------------------------------

    static String config(Admin a, String topic, String name) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config c = a.describeConfigs(List.of(res)).all().get(STEP, TimeUnit.SECONDS).get(res);
        ConfigEntry e = c == null ? null : c.get(name);
        return e == null ? null : e.value();
    }

    /** Checks the internal topics: they exist, the changelog is compacted. */
    static boolean verifyTopics(Admin a, String appId) throws Exception {
        String repartition = appId + "-" + GROUPED + "-repartition";
        String changelog = appId + "-" + STORE + "-changelog";
        Set<String> names = a.listTopics().names().get(STEP, TimeUnit.SECONDS);
        List<String> internal = names.stream().filter(n -> n.startsWith(appId + "-")).sorted().collect(Collectors.toList());
        boolean ok = true;
        for (String t : List.of(repartition, changelog)) {
            if (!names.contains(t)) {
                System.out.println("FAIL streams/internal-topics: " + t + " does not exist (the application's topics: " + internal + ")");
                ok = false;
            }
        }
        if (!ok) {
            return false;
        }
        String policy = config(a, changelog, "cleanup.policy");
        if (!"compact".equals(policy)) {
            System.out.println("FAIL streams/changelog-compacted: " + changelog + " has cleanup.policy=" + policy + ", want compact");
            ok = false;
        } else {
            System.out.println("PASS streams/changelog-compacted: " + changelog + " cleanup.policy=compact");
        }
        System.out.println("PASS streams/internal-topics: " + repartition + " (" + partitions(a, repartition).size()
                + " partitions, cleanup.policy=" + config(a, repartition, "cleanup.policy") + "), " + changelog
                + " (" + partitions(a, changelog).size() + " partitions)");
        return ok;
    }

    static KafkaConsumer<String, Long> outputReader(String brokers, List<TopicPartition> tps, IsolationLevel level) {
        Properties p = props(brokers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, level.toString());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, STEP * 1000);
        KafkaConsumer<String, Long> c = new KafkaConsumer<>(p, new StringDeserializer(), new LongDeserializer());
        c.assign(tps);
        c.seekToBeginning(tps);
        return c;
    }

    /** Every word's counts as read from OUT, in order. */
    static final class Counts {
        final Map<String, List<Long>> seen = new TreeMap<>();
        long total;

        void poll(KafkaConsumer<String, Long> c) {
            for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
                seen.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                total++;
            }
        }

        long last(String w) {
            List<Long> got = seen.get(w);
            return got == null ? 0 : got.get(got.size() - 1);
        }

        /** The words whose last count is below the expected one. */
        long behind(Map<String, Long> want) {
            return want.entrySet().stream().filter(e -> last(e.getKey()) < e.getValue()).count();
        }
    }

    /**
     * Reads OUT read_committed until every word's last count reaches its
     * expected count, at most seconds: the application has processed (and
     * committed) the whole input. Prints the records read.
     */
    static void waitOutput(String brokers, String out, long records, int words, int seconds) throws Exception {
        Map<String, Long> want = expected(records, words);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        Counts counts = new Counts();
        try (Admin a = admin(brokers); KafkaConsumer<String, Long> c = outputReader(brokers, partitions(a, out), IsolationLevel.READ_COMMITTED)) {
            while (counts.behind(want) > 0) {
                if (System.nanoTime() > deadline) {
                    throw new Failure(counts.behind(want) + " of " + want.size() + " words are below their expected"
                            + " count in " + out + " (read_committed) after " + seconds + "s; " + counts.total
                            + " records read");
                }
                counts.poll(c);
            }
        }
        System.out.println(counts.total);
    }

    /**
     * The output's end offsets, read_committed (its last stable offsets) or
     * not (its high watermarks).
     */
    static Map<TopicPartition, Long> ends(Admin a, List<TopicPartition> tps, IsolationLevel level) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        tps.forEach(tp -> req.put(tp, OffsetSpec.latest()));
        Map<TopicPartition, Long> got = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
        a.listOffsets(req, new ListOffsetsOptions(level)).all().get(STEP, TimeUnit.SECONDS)
                .forEach((tp, info) -> got.put(tp, info.offset()));
        return got;
    }

    /**
     * Waits until no transaction is open on OUT (last stable offset = high
     * watermark everywhere), then reads it read_committed to the end and
     * checks that every word's sequence of counts is exactly 1..expected.
     */
    static boolean verifyCounts(Admin a, String brokers, String out, long records, int words) throws Exception {
        List<TopicPartition> tps = partitions(a, out);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2 * STEP);
        Map<TopicPartition, Long> lso;
        Map<TopicPartition, Long> hw;
        while (!(lso = ends(a, tps, IsolationLevel.READ_COMMITTED)).equals(hw = ends(a, tps, IsolationLevel.READ_UNCOMMITTED))) {
            if (System.nanoTime() > deadline) {
                System.out.println("FAIL streams/counts: a transaction is still open on " + out + " " + 2 * STEP
                        + "s after the application closed: last stable offsets " + lso + ", high watermarks " + hw);
                return false;
            }
            Thread.sleep(100);
        }
        Counts counts = readToEnd(brokers, out, tps, hw, IsolationLevel.READ_COMMITTED, deadline);
        Counts all = readToEnd(brokers, out, tps, hw, IsolationLevel.READ_UNCOMMITTED, deadline);
        if (counts == null || all == null) {
            return false;
        }
        Map<String, Long> want = expected(records, words);
        List<String> bad = new ArrayList<>();
        for (Map.Entry<String, Long> w : want.entrySet()) {
            List<Long> got = counts.seen.getOrDefault(w.getKey(), List.of());
            boolean exact = got.size() == w.getValue();
            for (int i = 0; exact && i < got.size(); i++) {
                exact = got.get(i) == i + 1;
            }
            if (!exact) {
                bad.add(w.getKey() + ": last count " + counts.last(w.getKey()) + ", want " + w.getValue() + "; "
                        + got.size() + " updates" + firstMisstep(got));
            }
        }
        for (String k : counts.seen.keySet()) {
            if (!want.containsKey(k)) {
                bad.add(k + ": not a word of the input");
            }
        }
        if (!bad.isEmpty()) {
            System.out.println("FAIL streams/counts: " + bad.size() + " of " + want.size() + " words wrong (read "
                    + counts.total + " records read_committed): " + String.join("; ", bad.subList(0, Math.min(5, bad.size()))));
            return false;
        }
        System.out.println("PASS streams/counts: " + want.size() + " words, " + records + " input records, "
                + counts.total + " output records read_committed, every word's counts exactly 1..N, the last N its"
                + " occurrences in the input (and " + (all.total - counts.total) + " records of aborted"
                + " transactions read_uncommitted)");
        return true;
    }

    /**
     * Reads OUT at level from the start to end; null (and a FAIL line) if
     * the reader is stuck at the deadline.
     */
    static Counts readToEnd(String brokers, String out, List<TopicPartition> tps, Map<TopicPartition, Long> end,
            IsolationLevel level, long deadline) {
        Counts counts = new Counts();
        try (KafkaConsumer<String, Long> c = outputReader(brokers, tps, level)) {
            while (true) {
                counts.poll(c);
                boolean caughtUp = true;
                for (TopicPartition tp : tps) {
                    caughtUp &= c.position(tp) >= end.get(tp);
                }
                if (caughtUp) {
                    return counts;
                }
                if (System.nanoTime() > deadline) {
                    Map<TopicPartition, Long> pos = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
                    tps.forEach(tp -> pos.put(tp, c.position(tp)));
                    System.out.println("FAIL streams/counts: the " + level + " reader of " + out + " is stuck at "
                            + pos + ", end " + end);
                    return null;
                }
            }
        }
    }

    /** Where a sequence of counts first leaves 1, 2, 3, ... (for a message). */
    static String firstMisstep(List<Long> got) {
        for (int i = 0; i < got.size(); i++) {
            if (got.get(i) != i + 1) {
                return ", update " + (i + 1) + " is " + got.get(i) + " (after "
                        + got.subList(Math.max(0, i - 3), i) + ")";
            }
        }
        return "";
    }

    static boolean verify(String brokers, String appId, String out, long records, int words) throws Exception {
        try (Admin a = admin(brokers)) {
            boolean topics = verifyTopics(a, appId);
            return verifyCounts(a, brokers, out, records, words) && topics;
        }
    }

    static String usage() {
        return "usage: Main topics BROKERS IN OUT PARTITIONS | produce BROKERS IN FROM TO WORDS"
                + " | app BROKERS APP_ID IN OUT STATE_DIR | wait BROKERS APP_ID IN MIN SECONDS"
                + " | kill BROKERS APP_ID IN OUT MIN MAX SECONDS PID"
                + " | output BROKERS OUT RECORDS WORDS SECONDS | verify BROKERS APP_ID OUT RECORDS WORDS";
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println(usage());
            System.exit(2);
        }
        String brokers = args[1];
        boolean ok = true;
        try {
            switch (args[0] + "/" + args.length) {
                case "topics/5" -> topics(brokers, args[2], args[3], Integer.parseInt(args[4]));
                case "produce/6" -> produce(brokers, args[2], Long.parseLong(args[3]), Long.parseLong(args[4]),
                        Integer.parseInt(args[5]));
                case "app/6" -> app(brokers, args[2], args[3], args[4], args[5]);
                case "wait/6" -> waitCommitted(brokers, args[2], args[3], Long.parseLong(args[4]), Integer.parseInt(args[5]));
                case "kill/9" -> killMidStream(brokers, args[2], args[3], args[4], Long.parseLong(args[5]),
                        Long.parseLong(args[6]), Integer.parseInt(args[7]), Long.parseLong(args[8]));
                case "output/6" -> waitOutput(brokers, args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]),
                        Integer.parseInt(args[5]));
                case "verify/6" -> ok = verify(brokers, args[2], args[3], Long.parseLong(args[4]), Integer.parseInt(args[5]));
                default -> {
                    System.err.println(usage());
                    System.exit(2);
                }
            }
        } catch (Failure f) {
            log(args[0] + ": " + f.getMessage());
            ok = false;
        }
        System.out.flush();
        // The clients' threads are closed; exit without waiting on any other.
        System.exit(ok ? 0 : 1);
    }
}

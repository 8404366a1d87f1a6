// Compatibility runner for the Java client (org.apache.kafka:kafka-clients):
// runs every scenario of the compat suite against BROKERS with its producer,
// consumer and admin, and prints one line per scenario on stdout:
//
//     RESULT kafka-clients <scenario> PASS|FAIL|SKIP <detail>
//
//     java -cp CLASSPATH dev.klog.compat.Main BROKERS [scenario ...]
//
// scripts/compat/run.sh builds and runs it. Progress and the client's own
// warnings go to stderr. Topic, group and transactional ids end in a per-run
// suffix, so reruns against one long-lived broker do not collide. Every wait
// polls for a condition and gives up at a deadline, and every blocking client
// call is bounded by the client's own timeouts (set to STEP below).
package dev.klog.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class Main {
    static final String CLIENT = "kafka-clients";
    /** Seconds for any single wait or blocking client call. */
    static final int STEP = 20;
    /** Seconds for a config change to show in describeConfigs. */
    static final int CONFIG_WAIT = 10;
    static final String RUN = "-" + (System.currentTimeMillis() % 100_000_000L);

    /** A scenario's check failed: the scenario is FAIL with this message. */
    static final class Failure extends RuntimeException {
        Failure(String msg) {
            super(msg);
        }
    }

    interface Scenario {
        String run(String brokers) throws Exception;
    }

    private Main() {
    }

    static void log(String msg) {
        System.err.println(CLIENT + ": " + msg);
    }

    static void check(boolean cond, String msg) {
        if (!cond) {
            throw new Failure(msg);
        }
    }

    /** Polls cond until it holds, at most timeoutSeconds. */
    static void waitFor(BooleanSupplier cond, String what, int timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new Failure("timed out after " + timeoutSeconds + "s waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] v) {
        return v == null ? "null" : new String(v, StandardCharsets.UTF_8);
    }

    // --- clients ------------------------------------------------------------

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

    static KafkaProducer<byte[], byte[]> producer(String brokers, Map<String, Object> conf) {
        Properties p = props(brokers);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, STEP * 1000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 2 * STEP * 1000);
        p.putAll(conf);
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static KafkaConsumer<byte[], byte[]> consumer(String brokers, Map<String, Object> conf) {
        Properties p = props(brokers);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.putAll(conf);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static int partitionCount(Admin a, String topic) {
        try {
            TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get(STEP, TimeUnit.SECONDS).get(topic);
            return d == null ? 0 : d.partitions().size();
        } catch (Exception e) {
            return 0;
        }
    }

    static void createTopic(String brokers, String topic, int partitions) throws Exception {
        try (Admin a = admin(brokers)) {
            createTopic(a, topic, partitions, Map.of());
        }
    }

    static void createTopic(Admin a, String topic, int partitions, Map<String, String> configs) throws Exception {
        a.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get(STEP, TimeUnit.SECONDS);
        waitFor(() -> partitionCount(a, topic) == partitions, "topic " + topic + " with " + partitions + " partitions", STEP);
    }

    static List<TopicPartition> partitions(String topic, int n) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        return tps;
    }

    /** Sends every record and waits for each acknowledgement; returns the metadata. */
    static List<RecordMetadata> sendAll(KafkaProducer<byte[], byte[]> p, List<ProducerRecord<byte[], byte[]>> records) throws Exception {
        List<java.util.concurrent.Future<RecordMetadata>> futs = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> r : records) {
            futs.add(p.send(r));
        }
        p.flush();
        List<RecordMetadata> out = new ArrayList<>();
        for (java.util.concurrent.Future<RecordMetadata> f : futs) {
            out.add(f.get(STEP, TimeUnit.SECONDS));
        }
        return out;
    }

    /**
     * Reads every partition of topic from the start until the position
     * reaches the end offset (the last stable offset for read_committed)
     * everywhere.
     */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String brokers, String topic, int n, String isolation) throws Exception {
        List<TopicPartition> tps = partitions(topic, n);
        try (KafkaConsumer<byte[], byte[]> c = consumer(brokers, Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP);
            while (true) {
                c.poll(Duration.ofMillis(200)).forEach(got::add);
                boolean done = true;
                for (TopicPartition tp : tps) {
                    if (c.position(tp) < end.get(tp)) {
                        done = false;
                    }
                }
                if (done) {
                    return got;
                }
                if (System.nanoTime() > deadline) {
                    Map<TopicPartition, Long> pos = new HashMap<>();
                    tps.forEach(tp -> pos.put(tp, c.position(tp)));
                    throw new Failure(isolation + " reader of " + topic + " stuck at " + pos + ", end " + end);
                }
            }
        }
    }

    // --- scenarios ----------------------------------------------------------

    static String admin_(String brokers) throws Exception {
        String topic = "compat-java-admin" + RUN;
        try (Admin a = admin(brokers)) {
            createTopic(a, topic, 3, Map.of("retention.ms", "3600000"));
            // listTopics may ask a broker that learns of the topic a moment
            // after the one that answered createTopics, as on any Kafka cluster.
            waitFor(() -> {
                try {
                    return a.listTopics().names().get(STEP, TimeUnit.SECONDS).contains(topic);
                } catch (Exception e) {
                    return false;
                }
            }, "listTopics to list " + topic, STEP);
            check(!a.describeCluster().nodes().get(STEP, TimeUnit.SECONDS).isEmpty(), "describeCluster lists no node");
            ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            waitConfig(a, res, "retention.ms", "3600000", "after createTopics");
            a.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET))))
                    .all().get(STEP, TimeUnit.SECONDS);
            waitConfig(a, res, "retention.ms", "7200000", "after incrementalAlterConfigs");
            waitConfig(a, res, "cleanup.policy", "compact", "after incrementalAlterConfigs");
            a.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get(STEP, TimeUnit.SECONDS);
            waitFor(() -> partitionCount(a, topic) == 4, "4 partitions of " + topic, STEP);
            a.deleteTopics(List.of(topic)).all().get(STEP, TimeUnit.SECONDS);
            waitFor(() -> {
                try {
                    return !a.listTopics().names().get(STEP, TimeUnit.SECONDS).contains(topic);
                } catch (Exception e) {
                    return false;
                }
            }, topic + " to leave the topic list", STEP);
        }
        return "createTopics (3 partitions, retention.ms), listTopics, describeCluster, describeConfigs,"
                + " incrementalAlterConfigs, createPartitions to 4, deleteTopics";
    }

    /**
     * Polls describeConfigs until config name of res is want, at most
     * CONFIG_WAIT seconds: Kafka's brokers apply a config from the metadata
     * log after the controller acknowledged the change, so a describe right
     * after an alter may still show the old value.
     */
    static void waitConfig(Admin a, ConfigResource res, String name, String want, String when) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CONFIG_WAIT);
        String got;
        while (!want.equals(got = configValue(a, res, name))) {
            check(System.nanoTime() < deadline, when + ": describeConfigs " + name + " = " + got + ", want " + want
                    + " (waited " + CONFIG_WAIT + "s)");
            Thread.sleep(50);
        }
    }

    static String configValue(Admin a, ConfigResource res, String name) throws Exception {
        Config cfg = a.describeConfigs(List.of(res)).all().get(STEP, TimeUnit.SECONDS).get(res);
        ConfigEntry e = cfg == null ? null : cfg.get(name);
        return e == null ? null : e.value();
    }

    /** One line per record: everything the produce-consume scenario compares. */
    static String describe(int partition, long offset, byte[] key, byte[] value, Iterable<Header> headers, long ts) {
        StringBuilder sb = new StringBuilder();
        sb.append(partition).append('@').append(offset).append(" key=").append(s(key)).append(" value=").append(s(value))
                .append(" ts=").append(ts).append(" headers=[");
        for (Header h : headers) {
            sb.append(h.key()).append('=').append(s(h.value())).append(';');
        }
        return sb.append(']').toString();
    }

    static String produceConsume(String brokers) throws Exception {
        String topic = "compat-java-pc" + RUN;
        createTopic(brokers, topic, 2);
        long base = System.currentTimeMillis() - 3600_000L;
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            List<Header> headers = new ArrayList<>();
            if (i % 2 == 0) {
                headers.add(new RecordHeader("dup", b("one")));
                headers.add(new RecordHeader("dup", b("two")));
                headers.add(new RecordHeader("i", b(Integer.toString(i))));
            }
            if (i % 3 == 0) {
                headers.add(new RecordHeader("empty", new byte[0]));
            }
            byte[] key = i % 10 == 9 ? null : b("key-" + i);
            byte[] value = i == 7 ? null : b("value " + i + " \u2713");
            records.add(new ProducerRecord<>(topic, i % 2, base + i * 1000L, key, value, headers));
        }
        List<RecordMetadata> acks;
        try (KafkaProducer<byte[], byte[]> p = producer(brokers, Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            acks = sendAll(p, records);
        }
        List<String> want = new ArrayList<>();
        long[] next = new long[2];
        for (int i = 0; i < records.size(); i++) {
            ProducerRecord<byte[], byte[]> r = records.get(i);
            RecordMetadata md = acks.get(i);
            int part = r.partition();
            check(md.partition() == part && md.offset() == next[part],
                    "record " + i + " acknowledged at " + md.partition() + "@" + md.offset() + ", want " + part + "@" + next[part]);
            want.add(describe(part, next[part]++, r.key(), r.value(), r.headers(), r.timestamp()));
        }
        List<String> got = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> m : readAll(brokers, topic, 2, "read_uncommitted")) {
            check(m.timestampType() == TimestampType.CREATE_TIME,
                    "record " + m.partition() + "@" + m.offset() + " has timestamp type " + m.timestampType() + ", want CreateTime");
            got.add(describe(m.partition(), m.offset(), m.key(), m.value(), m.headers(), m.timestamp()));
        }
        for (int part = 0; part < 2; part++) {
            final int q = part;
            List<String> w = want.stream().filter(x -> x.startsWith(q + "@")).collect(Collectors.toList());
            List<String> g = got.stream().filter(x -> x.startsWith(q + "@")).collect(Collectors.toList());
            if (!w.equals(g)) {
                int first = 0;
                while (first < Math.min(w.size(), g.size()) && w.get(first).equals(g.get(first))) {
                    first++;
                }
                throw new Failure("partition " + part + ": " + g.size() + " records, want " + w.size() + "; first difference at "
                        + first + ": got " + (first < g.size() ? g.get(first) : "nothing") + " want "
                        + (first < w.size() ? w.get(first) : "nothing"));
            }
        }
        return got.size() + " records: keys (some null), a null value, duplicate and empty headers, explicit timestamps,"
                + " 2 partitions, offsets checked";
    }

    static String compression(String brokers) throws Exception {
        List<String> checked = new ArrayList<>();
        for (String codec : List.of("gzip", "snappy", "lz4", "zstd")) {
            String topic = "compat-java-z-" + codec + RUN;
            createTopic(brokers, topic, 1);
            List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
            List<String> values = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                String v = codec + " record " + i + " " + "x".repeat(50);
                values.add(v);
                records.add(new ProducerRecord<>(topic, 0, b("k"), b(v)));
            }
            try (KafkaProducer<byte[], byte[]> p = producer(brokers,
                    Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.LINGER_MS_CONFIG, 50))) {
                sendAll(p, records);
            }
            List<String> got = readAll(brokers, topic, 1, "read_uncommitted").stream().map(m -> s(m.value()))
                    .collect(Collectors.toList());
            check(got.equals(values), codec + ": consumed " + got.size() + " records differing from 300 produced (checked so far: "
                    + checked + ")");
            checked.add(codec);
        }
        return "codecs checked: " + String.join(" ", checked) + " (300 records each)";
    }

    static String offsetsByTime(String brokers) throws Exception {
        String topic = "compat-java-time" + RUN;
        createTopic(brokers, topic, 1);
        long base = System.currentTimeMillis() - 3600_000L;
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            records.add(new ProducerRecord<>(topic, 0, base + i * 1000L, null, b("t" + i)));
        }
        try (KafkaProducer<byte[], byte[]> p = producer(brokers, Map.of())) {
            sendAll(p, records);
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        long[][] cases = {{-5000, 0}, {0, 0}, {4000, 4}, {4500, 5}, {9000, 9}, {60000, -1}};
        try (KafkaConsumer<byte[], byte[]> c = consumer(brokers, Map.of())) {
            for (long[] cs : cases) {
                Map<TopicPartition, OffsetAndTimestamp> r = c.offsetsForTimes(Map.of(tp, base + cs[0]));
                OffsetAndTimestamp o = r.get(tp);
                long got = o == null ? -1 : o.offset();
                check(got == cs[1], "offsetsForTimes(base" + (cs[0] >= 0 ? "+" : "") + cs[0] + ") = " + got + ", want " + cs[1]);
                if (o != null) {
                    check(o.timestamp() == base + cs[1] * 1000L,
                            "offsetsForTimes(base+" + cs[0] + ") timestamp = base+" + (o.timestamp() - base) + ", want base+" + cs[1] * 1000L);
                }
            }
        }
        return "offsetsForTimes: before the first -> 0, exact -> 4, between -> 5, last -> 9, after the end -> null";
    }

    static KafkaConsumer<byte[], byte[]> groupMember(String brokers, String group, String name, String protocol) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        conf.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        conf.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            // The consumer protocol takes these from the broker instead.
            conf.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10000);
            conf.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
            conf.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer.RangeAssignor");
        }
        return consumer(brokers, conf);
    }

    static Set<Integer> owned(KafkaConsumer<byte[], byte[]> c) {
        return c.assignment().stream().map(TopicPartition::partition).collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * The group scenario with either protocol: two members split four
     * partitions, read every record once, commit; the group is of the
     * expected type; a restarted member reads only what follows the commit.
     */
    static String group(String brokers, String protocol, String tag) throws Exception {
        String topic = "compat-java-" + tag + RUN;
        String group = topic;
        int n = 200;
        GroupType wantType = protocol.equals("consumer") ? GroupType.CONSUMER : GroupType.CLASSIC;
        List<TopicPartition> tps = partitions(topic, 4);
        String split;
        try (Admin adm = admin(brokers); KafkaProducer<byte[], byte[]> p = producer(brokers, Map.of())) {
            createTopic(adm, topic, 4, Map.of());
            Map<String, KafkaConsumer<byte[], byte[]>> members = new LinkedHashMap<>();
            Map<String, List<ConsumerRecord<byte[], byte[]>>> seen = new LinkedHashMap<>();
            try {
                for (String name : List.of("a", "b")) {
                    KafkaConsumer<byte[], byte[]> c = groupMember(brokers, group, name, protocol);
                    members.put(name, c);
                    seen.put(name, new ArrayList<>());
                    c.subscribe(List.of(topic));
                }
                // Both members poll in turn; the split is done when each owns
                // two partitions and they share none.
                BooleanSupplier pollAll = () -> {
                    for (Map.Entry<String, KafkaConsumer<byte[], byte[]>> e : members.entrySet()) {
                        e.getValue().poll(Duration.ofMillis(100)).forEach(seen.get(e.getKey())::add);
                    }
                    Set<Integer> a = owned(members.get("a"));
                    Set<Integer> b = owned(members.get("b"));
                    Set<Integer> both = new HashSet<>(a);
                    both.retainAll(b);
                    return a.size() == 2 && b.size() == 2 && both.isEmpty();
                };
                waitFor(pollAll, "the group to split 4 partitions 2 + 2", 3 * STEP);
                split = "a owns " + owned(members.get("a")) + ", b owns " + owned(members.get("b"));
                // Produce only once the split is done, so no record is read
                // before a rebalance moves its partition.
                List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    records.add(new ProducerRecord<>(topic, i % 4, null, b("g" + i)));
                }
                sendAll(p, records);
                waitFor(() -> {
                    pollAll.getAsBoolean();
                    return seen.values().stream().mapToInt(List::size).sum() >= n;
                }, n + " records read by two members", STEP);
                List<String> values = new ArrayList<>();
                seen.values().forEach(l -> l.forEach(m -> values.add(s(m.value()))));
                Set<String> distinct = new HashSet<>(values);
                Set<String> want = new HashSet<>();
                for (int i = 0; i < n; i++) {
                    want.add("g" + i);
                }
                check(values.size() == n && distinct.equals(want),
                        "two members read " + values.size() + " records (" + distinct.size() + " distinct), want " + n + " once");
                for (Map.Entry<String, KafkaConsumer<byte[], byte[]>> e : members.entrySet()) {
                    Set<Integer> own = owned(e.getValue());
                    for (ConsumerRecord<byte[], byte[]> m : seen.get(e.getKey())) {
                        check(own.contains(m.partition()), "member " + e.getKey() + " read partition " + m.partition()
                                + " it does not own (owns " + own + ")");
                    }
                    e.getValue().commitSync(Duration.ofSeconds(STEP));
                }
                ConsumerGroupDescription d = adm.describeConsumerGroups(List.of(group)).all().get(STEP, TimeUnit.SECONDS).get(group);
                check(d.type() == wantType, "describeConsumerGroups: group type " + d.type() + ", want " + wantType);
                check(d.members().size() == 2, "describeConsumerGroups: " + d.members().size() + " members, want 2");
            } finally {
                for (KafkaConsumer<byte[], byte[]> c : members.values()) {
                    c.close(Duration.ofSeconds(STEP));
                }
            }
            // OffsetFetch: the committed offsets are the partitions' ends.
            Map<TopicPartition, OffsetAndMetadata> committed = adm.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(STEP, TimeUnit.SECONDS);
            for (TopicPartition tp : tps) {
                OffsetAndMetadata o = committed.get(tp);
                check(o != null && o.offset() == n / 4, "committed offset of " + tp + " = " + (o == null ? "none" : o.offset())
                        + ", want " + n / 4);
            }
            // A restarted member resumes at the committed offsets.
            List<ProducerRecord<byte[], byte[]>> late = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                late.add(new ProducerRecord<>(topic, i % 4, null, b("late" + i)));
            }
            sendAll(p, late);
        }
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = groupMember(brokers, group, "c", protocol)) {
            c.subscribe(List.of(topic));
            waitFor(() -> {
                c.poll(Duration.ofMillis(200)).forEach(m -> got.add(s(m.value())));
                return got.size() >= 8;
            }, "the restarted member to read 8 new records", 2 * STEP);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            waitFor(() -> {
                c.poll(Duration.ofMillis(100)).forEach(m -> got.add(s(m.value())));
                return tps.stream().allMatch(tp -> c.position(tp) == end.get(tp));
            }, "the restarted member to reach the end", STEP);
        }
        Set<String> want = new TreeSet<>();
        for (int i = 0; i < 8; i++) {
            want.add("late" + i);
        }
        check(got.size() == 8 && new TreeSet<>(got).equals(want),
                "restarted member read " + got.subList(0, Math.min(12, got.size())) + ", want only the 8 records after the commit");
        return "group.protocol=" + protocol + " (" + wantType + " group): two members split 4 partitions (" + split + "), " + n
                + " records once, offsets committed and fetched; restarted member resumed at the committed offsets";
    }

    static String idempotent(String brokers) throws Exception {
        String topic = "compat-java-idem" + RUN;
        createTopic(brokers, topic, 3);
        int n = 1500;
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            records.add(new ProducerRecord<>(topic, i % 3, null, b("i" + i)));
        }
        try (KafkaProducer<byte[], byte[]> p = producer(brokers, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5))) {
            sendAll(p, records);
        }
        List<TopicPartition> tps = partitions(topic, 3);
        try (Admin a = admin(brokers)) {
            // DescribeProducers: one producer id per partition, its last
            // sequence that of the partition's last record.
            for (TopicPartition tp : tps) {
                List<ProducerState> states = a.describeProducers(List.of(tp)).partitionResult(tp).get(STEP, TimeUnit.SECONDS)
                        .activeProducers();
                check(states.size() == 1, "describeProducers " + tp + ": " + states.size() + " producers, want 1");
                check(states.get(0).lastSequence() == n / 3 - 1,
                        "describeProducers " + tp + ": last sequence " + states.get(0).lastSequence() + ", want " + (n / 3 - 1));
            }
        }
        List<ConsumerRecord<byte[], byte[]>> got = readAll(brokers, topic, 3, "read_uncommitted");
        for (int part = 0; part < 3; part++) {
            final int q = part;
            List<String> vals = got.stream().filter(m -> m.partition() == q).map(m -> s(m.value())).collect(Collectors.toList());
            List<String> want = new ArrayList<>();
            for (int i = part; i < n; i += 3) {
                want.add("i" + i);
            }
            check(vals.equals(want), "partition " + part + " holds " + vals.size() + " records (" + new HashSet<>(vals).size()
                    + " distinct), want " + want.size() + " in order");
        }
        return n + " records on 3 partitions with enable.idempotence, each once and in order; describeProducers shows"
                + " one producer per partition at the last sequence";
    }

    static KafkaProducer<byte[], byte[]> txnProducer(String brokers, String txnId) {
        KafkaProducer<byte[], byte[]> p = producer(brokers, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId,
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60000));
        p.initTransactions();
        return p;
    }

    static String transactions(String brokers) throws Exception {
        String topic = "compat-java-txn" + RUN;
        createTopic(brokers, topic, 2);
        try (KafkaProducer<byte[], byte[]> p = txnProducer(brokers, topic)) {
            String[] kinds = {"committed-a", "aborted", "committed-b"};
            for (String kind : kinds) {
                p.beginTransaction();
                List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    records.add(new ProducerRecord<>(topic, i % 2, null, b(kind + "-" + i)));
                }
                sendAll(p, records); // the aborted records reach the log too
                if (kind.equals("aborted")) {
                    p.abortTransaction();
                } else {
                    p.commitTransaction();
                }
            }
        }
        List<String> rc = readAll(brokers, topic, 2, "read_committed").stream().map(m -> s(m.value())).sorted()
                .collect(Collectors.toList());
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            want.add("committed-a-" + i);
            want.add("committed-b-" + i);
        }
        want.sort(null);
        check(rc.equals(want), "read_committed saw " + rc.size() + " records (" + rc.stream().filter(v -> v.startsWith("aborted")).count()
                + " aborted), want the 20 committed");
        int ru = readAll(brokers, topic, 2, "read_uncommitted").size();
        check(ru == 30, "read_uncommitted saw " + ru + " records, want 30");
        return "commit 10, abort 10, commit 10: read_committed saw the 20 committed, read_uncommitted all 30";
    }

    static String consumeTransformProduce(String brokers) throws Exception {
        String src = "compat-java-ctp-in" + RUN;
        String dst = "compat-java-ctp-out" + RUN;
        String group = "compat-java-ctp" + RUN;
        int n = 200;
        createTopic(brokers, src, 2);
        createTopic(brokers, dst, 2);
        List<ProducerRecord<byte[], byte[]>> input = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            input.add(new ProducerRecord<>(src, i % 2, b(Integer.toString(i)), b("in-" + i)));
        }
        try (KafkaProducer<byte[], byte[]> plain = producer(brokers, Map.of())) {
            sendAll(plain, input);
        }
        List<TopicPartition> srcTps = partitions(src, 2);
        Map<String, Object> conf = new HashMap<>();
        conf.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        conf.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        conf.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        conf.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10000);
        conf.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        conf.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50);
        int processed = 0;
        boolean aborted = false;
        try (KafkaConsumer<byte[], byte[]> c = consumer(brokers, conf); KafkaProducer<byte[], byte[]> p = txnProducer(brokers, group)) {
            c.subscribe(List.of(src));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(6 * STEP);
            while (processed < n) {
                check(System.nanoTime() < deadline, "stuck after " + processed + " of " + n + " records");
                List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>();
                c.poll(Duration.ofMillis(500)).forEach(batch::add);
                if (batch.isEmpty()) {
                    continue;
                }
                p.beginTransaction();
                for (ConsumerRecord<byte[], byte[]> m : batch) {
                    p.send(new ProducerRecord<>(dst, m.partition(), m.key(), b("out-" + s(m.value()).substring(3))));
                }
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (TopicPartition tp : c.assignment()) {
                    offsets.put(tp, new OffsetAndMetadata(c.position(tp)));
                }
                p.sendOffsetsToTransaction(offsets, c.groupMetadata());
                if (!aborted) {
                    // The first batch is aborted: output and offsets roll back
                    // and the input is read again from the committed offsets.
                    aborted = true;
                    p.abortTransaction();
                    Map<TopicPartition, OffsetAndMetadata> committed = c.committed(c.assignment());
                    for (TopicPartition tp : c.assignment()) {
                        OffsetAndMetadata o = committed.get(tp);
                        c.seek(tp, o == null ? 0 : o.offset());
                    }
                    continue;
                }
                p.commitTransaction();
                processed += batch.size();
            }
            Map<TopicPartition, OffsetAndMetadata> committed = c.committed(new HashSet<>(srcTps));
            Map<TopicPartition, Long> end = c.endOffsets(srcTps);
            for (TopicPartition tp : srcTps) {
                OffsetAndMetadata o = committed.get(tp);
                check(o != null && o.offset() == end.get(tp), "group offset of " + tp + " = " + (o == null ? "none" : o.offset())
                        + ", want " + end.get(tp));
            }
        }
        List<String> out = readAll(brokers, dst, 2, "read_committed").stream().map(m -> s(m.value())).sorted()
                .collect(Collectors.toList());
        List<String> want = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            want.add("out-" + i);
        }
        want.sort(null);
        check(out.equals(want), "output holds " + out.size() + " records (" + new HashSet<>(out).size() + " distinct), want " + n
                + " exactly once");
        return n + " records through sendOffsetsToTransaction (first transaction aborted and replayed): output exactly once,"
                + " group offsets at the end";
    }

    // --- share groups (KIP-932) ----------------------------------------------

    /**
     * A share group member acknowledging explicitly, fetching at most 10
     * records at a time (record_limit), so that members take turns on one
     * partition.
     */
    static KafkaShareConsumer<byte[], byte[]> shareMember(String brokers, String group) {
        Properties p = props(brokers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
        p.put(ConsumerConfig.SHARE_ACQUIRE_MODE_CONFIG, "record_limit");
        p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, STEP * 1000);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, STEP * 1000);
        return new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /**
     * Three KafkaShareConsumers of one group on a topic of one partition:
     * each gets records, every record is delivered once and its ACCEPT
     * acknowledged without error (commitSync). The group's
     * share.auto.offset.reset is left at latest, so records are written
     * until a member sees one before the counted ones.
     */
    static String shareGroup(String brokers) throws Exception {
        String topic = "compat-share" + RUN;
        String group = "compat-share" + RUN;
        createTopic(brokers, topic, 1);
        int members = 3;
        int n = 300;
        Map<String, Integer> seen = new ConcurrentHashMap<>();
        AtomicIntegerArray per = new AtomicIntegerArray(members);
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            int me = i;
            Thread t = new Thread(() -> {
                try (KafkaShareConsumer<byte[], byte[]> c = shareMember(brokers, group)) {
                    c.subscribe(List.of(topic));
                    while (!stop.get()) {
                        var records = c.poll(Duration.ofMillis(200));
                        for (ConsumerRecord<byte[], byte[]> r : records) {
                            String v = s(r.value());
                            seen.merge(v, 1, Integer::sum);
                            if (v.startsWith("r-")) {
                                per.incrementAndGet(me);
                            }
                            c.acknowledge(r, AcknowledgeType.ACCEPT);
                        }
                        if (!records.isEmpty()) {
                            for (Map.Entry<TopicIdPartition, java.util.Optional<KafkaException>> e : c.commitSync().entrySet()) {
                                e.getValue().ifPresent(x -> errors.add(e.getKey() + ": " + x));
                            }
                        }
                    }
                } catch (Exception e) {
                    errors.add("member " + me + ": " + e);
                }
            });
            t.start();
            threads.add(t);
        }
        try (KafkaProducer<byte[], byte[]> p = producer(brokers, Map.of())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(6 * STEP);
            for (int k = 0; seen.keySet().stream().noneMatch(v -> v.startsWith("warm-")); k++) {
                check(System.nanoTime() < deadline, "no share consumer got a record within " + 6 * STEP + "s");
                p.send(new ProducerRecord<>(topic, 0, null, b("warm-" + k))).get(STEP, TimeUnit.SECONDS);
                Thread.sleep(200);
            }
            List<ProducerRecord<byte[], byte[]>> rs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                rs.add(new ProducerRecord<>(topic, 0, null, b("r-" + i)));
            }
            sendAll(p, rs);
        }
        try {
            waitFor(() -> seen.keySet().stream().filter(v -> v.startsWith("r-")).count() == n, n + " records delivered", 3 * STEP);
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(STEP));
            }
        }
        check(errors.isEmpty(), "errors: " + errors);
        List<String> twice = seen.entrySet().stream().filter(e -> e.getValue() != 1).map(e -> e.getKey() + "x" + e.getValue()).sorted()
                .collect(Collectors.toList());
        check(twice.isEmpty(), "delivered more than once: " + twice);
        for (int i = 0; i < members; i++) {
            check(per.get(i) > 0, "member " + i + " got no record: " + per);
        }
        return members + " share consumers on one partition: " + n + " records each delivered once and accepted, every member got some";
    }

    // --- main ---------------------------------------------------------------

    static String oneLine(String s) {
        String t = String.join(" ", (s == null ? "" : s).trim().split("\\s+"));
        return t.length() > 300 ? t.substring(0, 300) : t;
    }

    /** The client's own exception, unwrapped from the future that carried it. */
    static Throwable cause(Throwable e) {
        while (e instanceof ExecutionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: dev.klog.compat.Main BROKERS [scenario ...]");
            System.exit(2);
        }
        String brokers = args[0];
        Set<String> only = new HashSet<>(Arrays.asList(args).subList(1, args.length));
        Map<String, Scenario> scenarios = new LinkedHashMap<>();
        scenarios.put("admin", Main::admin_);
        scenarios.put("produce-consume", Main::produceConsume);
        scenarios.put("compression", Main::compression);
        scenarios.put("offsets-by-time", Main::offsetsByTime);
        scenarios.put("group", br -> group(br, "classic", "group"));
        scenarios.put("group-kip848", br -> group(br, "consumer", "group848"));
        scenarios.put("idempotent", Main::idempotent);
        scenarios.put("transactions", Main::transactions);
        scenarios.put("consume-transform-produce", Main::consumeTransformProduce);
        scenarios.put("share-group", Main::shareGroup);
        log("kafka-clients " + org.apache.kafka.common.utils.internals.AppInfoParser.getVersion() + ", Java " + System.getProperty("java.version"));
        int failed = 0;
        for (Map.Entry<String, Scenario> e : scenarios.entrySet()) {
            String name = e.getKey();
            if (!only.isEmpty() && !only.contains(name)) {
                continue;
            }
            long start = System.nanoTime();
            log("--- " + name);
            String status;
            String detail;
            try {
                detail = e.getValue().run(brokers);
                status = "PASS";
            } catch (Failure f) {
                detail = f.getMessage();
                status = "FAIL";
            } catch (Exception x) { // a client error is a scenario failure
                Throwable c = cause(x);
                c.printStackTrace(System.err);
                detail = c.getClass().getSimpleName() + (c.getMessage() == null ? " (no message)" : ": " + c.getMessage());
                status = "FAIL";
            }
            if (status.equals("FAIL")) {
                failed++;
            }
            log(String.format("%s: %s in %.1fs", name, status, (System.nanoTime() - start) / 1e9));
            System.out.println("RESULT " + CLIENT + " " + name + " " + status + " " + (oneLine(detail).isEmpty() ? "ok" : oneLine(detail)));
            System.out.flush();
        }
        System.exit(failed == 0 ? 0 : 1);
    }
}

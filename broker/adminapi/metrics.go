package adminapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/klogdev/klog/broker"
)

// GET /metrics: the node's metrics in Prometheus' text format.
//
// Names follow one scheme, that of the Prometheus JMX exporter's example
// configuration for Kafka brokers, so that dashboards and alerts written
// for Kafka find klog's: Kafka's MBean kafka.D:type=T,name=N,k=v is
// kafka_d_t_n{k="v"}, lowercased; a PerSec meter is the counter of its
// events, kafka_d_t_x_total with PerSec dropped (Prometheus computes the
// rate); a *Ms histogram is a Prometheus histogram in milliseconds. What
// Kafka's broker has no metric for is klog_. Each HELP names the Kafka
// metric.
//
// Every value is read at scrape time from the node's counters and a
// snapshot of its replicas (broker.Node.Stats), and consumer group lag
// from its group coordinator (broker.Node.GroupLags); nothing runs
// between scrapes. Series are bounded: per local replica, per topic the
// node served (gone with the topic), per API the node serves, and at most
// maxLagSeries of group lag. Two scrapes run at once at most; more are
// answered 503.

// maxClientMetricSeries bounds the series of klog_client_metric;
// klog_client_metric_truncated is 1 when it left some out.
const maxClientMetricSeries = 10000

// maxLagSeries bounds the series of klog_consumergroup_records_lag;
// klog_consumergroup_records_lag_truncated is 1 when it left some out.
const maxLagSeries = 10000

// lagTimeout bounds reading the groups' committed offsets in a scrape.
const lagTimeout = 2 * time.Second

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	underReplicated = desc("kafka_server_replicamanager_underreplicatedpartitions",
		"Partitions led by this node with fewer in-sync replicas than replicas (kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions).")
	underMinISR = desc("kafka_server_replicamanager_underminisrpartitioncount",
		"Partitions led by this node with fewer in-sync replicas than min.insync.replicas (kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount).")
	leaderCount = desc("kafka_server_replicamanager_leadercount",
		"Partitions this node leads (kafka.server:type=ReplicaManager,name=LeaderCount).")
	partitionCount = desc("kafka_server_replicamanager_partitioncount",
		"Partitions this node has a replica of (kafka.server:type=ReplicaManager,name=PartitionCount).")
	offlinePartitions = desc("kafka_controller_kafkacontroller_offlinepartitionscount",
		"Partitions without a leader, on the active controller; 0 on the other nodes (kafka.controller:type=KafkaController,name=OfflinePartitionsCount).")
	activeController = desc("kafka_controller_kafkacontroller_activecontrollercount",
		"1 on the node that leads the metadata quorum, else 0 (kafka.controller:type=KafkaController,name=ActiveControllerCount).")
	logSize = desc("kafka_log_log_size",
		"Bytes of the local replica's log segments (kafka.log:type=Log,name=Size).", "topic", "partition")
	logStart = desc("kafka_log_log_logstartoffset",
		"The local replica's log start offset (kafka.log:type=Log,name=LogStartOffset).", "topic", "partition")
	logEnd = desc("kafka_log_log_logendoffset",
		"The local replica's log end offset (kafka.log:type=Log,name=LogEndOffset).", "topic", "partition")
	bytesIn = desc("kafka_server_brokertopicmetrics_bytesin_total",
		"Record bytes appended by produce requests to partitions this node leads (kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec).", "topic")
	bytesOut = desc("kafka_server_brokertopicmetrics_bytesout_total",
		"Record bytes answered to consumers' fetches, replication not counted (kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec).", "topic")
	messagesIn = desc("kafka_server_brokertopicmetrics_messagesin_total",
		"Records appended by produce requests (kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec).", "topic")
	isrShrinks = desc("kafka_server_replicamanager_isrshrinks_total",
		"ISR shrinks of partitions this node leads (kafka.server:type=ReplicaManager,name=IsrShrinksPerSec).")
	isrExpands = desc("kafka_server_replicamanager_isrexpands_total",
		"ISR expands of partitions this node leads (kafka.server:type=ReplicaManager,name=IsrExpandsPerSec).")
	requests = desc("kafka_network_requestmetrics_requests_total",
		"Requests handled, by Kafka's API name; Fetch also as FetchConsumer and FetchFollower (kafka.network:type=RequestMetrics,name=RequestsPerSec).", "request")
	totalTime = desc("kafka_network_requestmetrics_totaltimems",
		"Milliseconds from a request's decoding to its handler's return, its waits included (long-poll fetches, acks=all produces); Kafka's also counts the response's queueing and sending (kafka.network:type=RequestMetrics,name=TotalTimeMs).", "request")
	clientPushes = desc("klog_client_telemetry_pushes_total",
		"Telemetry pushes (KIP-714 PushTelemetry) taken from a client instance; Kafka hands them to a ClientTelemetry plugin.", "client_id", "client_instance_id")
	clientMetric = desc("klog_client_metric",
		"A metric a client instance pushed (KIP-714): a gauge's last value, a counter's total, a histogram's sum; name and attrs are the client's.", "client_id", "client_instance_id", "name", "attrs")
	clientMetricTruncated = desc("klog_client_metric_truncated",
		"1 when klog_client_metric left series out (at most 10000 are listed).")
	groupLag = desc("klog_consumergroup_records_lag",
		"Records between a group's committed offset and the high watermark, for the groups this node coordinates and the partitions it has a replica of; a consumer's own view is Kafka's records-lag client metric.", "group", "topic", "partition")
	groupLagTruncated = desc("klog_consumergroup_records_lag_truncated",
		fmt.Sprintf("1 when klog_consumergroup_records_lag left series out past its bound (%d), else 0.", maxLagSeries))
)

// metricsHandler serves node's metrics, with the Go runtime's and the
// process's.
func metricsHandler(node *broker.Node) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(nodeCollector{node}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: 2, ErrorHandling: promhttp.ContinueOnError})
}

// nodeCollector turns a node's snapshots into metrics at each scrape.
type nodeCollector struct{ node *broker.Node }

func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		underReplicated, underMinISR, leaderCount, partitionCount, offlinePartitions, activeController,
		logSize, logStart, logEnd, bytesIn, bytesOut, messagesIn, isrShrinks, isrExpands,
		requests, totalTime, groupLag, groupLagTruncated, clientPushes, clientMetric, clientMetricTruncated,
	} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.node.Stats()
	var under, underMin, leaders int
	for _, r := range st.Replicas {
		part := strconv.Itoa(int(r.Partition))
		ch <- prometheus.MustNewConstMetric(logSize, prometheus.GaugeValue, float64(r.Size), r.Topic, part)
		ch <- prometheus.MustNewConstMetric(logStart, prometheus.GaugeValue, float64(r.LogStartOffset), r.Topic, part)
		ch <- prometheus.MustNewConstMetric(logEnd, prometheus.GaugeValue, float64(r.LogEndOffset), r.Topic, part)
		if !r.Leader {
			continue
		}
		leaders++
		if r.ISR < r.Replicas {
			under++
		}
		if r.ISR < r.MinISR {
			underMin++
		}
	}
	ch <- prometheus.MustNewConstMetric(underReplicated, prometheus.GaugeValue, float64(under))
	ch <- prometheus.MustNewConstMetric(underMinISR, prometheus.GaugeValue, float64(underMin))
	ch <- prometheus.MustNewConstMetric(leaderCount, prometheus.GaugeValue, float64(leaders))
	ch <- prometheus.MustNewConstMetric(partitionCount, prometheus.GaugeValue, float64(len(st.Replicas)))
	ch <- prometheus.MustNewConstMetric(offlinePartitions, prometheus.GaugeValue, float64(st.OfflinePartitions))
	ch <- prometheus.MustNewConstMetric(activeController, prometheus.GaugeValue, boolValue(st.ActiveController))
	for _, t := range st.Topics {
		ch <- prometheus.MustNewConstMetric(bytesIn, prometheus.CounterValue, float64(t.BytesIn), t.Topic)
		ch <- prometheus.MustNewConstMetric(bytesOut, prometheus.CounterValue, float64(t.BytesOut), t.Topic)
		ch <- prometheus.MustNewConstMetric(messagesIn, prometheus.CounterValue, float64(t.MessagesIn), t.Topic)
	}
	ch <- prometheus.MustNewConstMetric(isrShrinks, prometheus.CounterValue, float64(st.IsrShrinks))
	ch <- prometheus.MustNewConstMetric(isrExpands, prometheus.CounterValue, float64(st.IsrExpands))
	bounds := broker.RequestTimeBucketsMs()
	for _, r := range st.Requests {
		ch <- prometheus.MustNewConstMetric(requests, prometheus.CounterValue, float64(r.Count), r.Request)
		buckets := make(map[float64]uint64, len(bounds))
		for i, b := range bounds {
			buckets[b] = r.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(totalTime, r.Count, r.SumMs, buckets, r.Request)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
	defer cancel()
	lags, truncated := c.node.GroupLags(ctx, maxLagSeries)
	for _, l := range lags {
		ch <- prometheus.MustNewConstMetric(groupLag, prometheus.GaugeValue, float64(l.Lag), l.Group, l.Topic, strconv.Itoa(int(l.Partition)))
	}
	ch <- prometheus.MustNewConstMetric(groupLagTruncated, prometheus.GaugeValue, boolValue(truncated))
	c.collectTelemetry(ch)
}

// collectTelemetry lists what clients pushed, at most
// maxClientMetricSeries series.
func (c nodeCollector) collectTelemetry(ch chan<- prometheus.Metric) {
	listed, truncated := 0, false
	for _, cl := range c.node.TelemetryClients() {
		ch <- prometheus.MustNewConstMetric(clientPushes, prometheus.CounterValue, float64(cl.Pushes), cl.ClientID, cl.InstanceID)
		for _, s := range cl.Series {
			if listed == maxClientMetricSeries {
				truncated = true
				break
			}
			listed++
			ch <- prometheus.MustNewConstMetric(clientMetric, prometheus.GaugeValue, s.Value, cl.ClientID, cl.InstanceID, s.Name, s.Attrs)
		}
	}
	ch <- prometheus.MustNewConstMetric(clientMetricTruncated, prometheus.GaugeValue, boolValue(truncated))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

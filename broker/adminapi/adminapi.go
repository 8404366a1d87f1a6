// Package adminapi serves a klog node's admin HTTP API: JSON views of the
// node's state and requests no Kafka API has (klog topic compact). Its
// contract, the paths and JSON shapes, is package nodeapi; this package
// only maps a broker.Node onto it.
//
// GET /metrics serves the node's metrics in Prometheus' text format
// (metrics.go); this is the one package that imports the metrics library.
//
// It listens on loopback by default (klog up --admin-listen, 127.0.0.1:9644
// for the first node). Everything is bounded: connections (maxConns, more
// wait to be accepted), header size and read time, and each answer is
// built from a snapshot the node takes at once; a compaction runs one pass
// at a time on the node, and waits for another only as long as its
// request lasts; a long poll of GET /v1/events waits at most 30 s, holding
// one of the maxConns connections and nothing of the node.
package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/store/log"
)

// maxConns bounds the connections served at once.
const maxConns = 64

// Server is a node's admin API on a listener.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	err  error
	// stop ends the requests' contexts at Close, so that long polls
	// (GET /v1/events?wait=) end at once.
	stop context.CancelFunc
}

// Options configure a Server.
type Options struct {
	// Version is klog's version, for GET /v1/node.
	Version string
	Logger  *slog.Logger
}

// Listen serves node's admin API on addr (host:port; port 0 picks one)
// until Close.
func Listen(addr string, node *broker.Node, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	return Serve(ln, node, opts), nil
}

// Serve serves node's admin API on ln, a listener the caller bound, until
// Close, which closes ln.
func Serve(ln net.Listener, node *broker.Node, opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{ln: &limitListener{Listener: ln, slots: make(chan struct{}, maxConns)}, done: make(chan struct{})}
	base, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.srv = &http.Server{
		Handler:           Handler(node, ln.Addr().String(), opts.Version),
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// An answer waits for its work (a compaction, a long poll) and
		// is then written; a reader slower than this loses it.
		WriteTimeout:   10 * time.Minute,
		IdleTimeout:    time.Minute,
		MaxHeaderBytes: 16 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s
}

// Addr is the address served, host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving: requests in progress get a short while to finish.
func (s *Server) Close() error {
	s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return s.err
}

// Handler is the API of node; admin is the address it is served on and
// version klog's, for GET /v1/node.
func Handler(node *broker.Node, admin, version string) http.Handler {
	h := &handler{node: node, admin: admin, version: version}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+nodeapi.PathNode, h.nodeInfo)
	mux.HandleFunc("GET "+nodeapi.PathCleaner, h.cleaner)
	mux.HandleFunc("POST "+nodeapi.PathCompact, h.compact)
	mux.HandleFunc("GET "+nodeapi.PathCluster, h.cluster)
	mux.HandleFunc("POST "+nodeapi.PathBrokerExited, h.brokerExited)
	mux.HandleFunc("GET "+nodeapi.PathThroughput, h.throughput)
	mux.HandleFunc("GET "+nodeapi.PathPartitions, h.partitions)
	mux.HandleFunc("GET "+nodeapi.PathPartition, h.partition)
	mux.HandleFunc("GET "+nodeapi.PathSegments, h.segments)
	mux.HandleFunc("GET "+nodeapi.PathIndex, h.index)
	mux.HandleFunc("GET "+nodeapi.PathBatch, h.batch)
	mux.Handle("GET /metrics", metricsHandler(node))
	mux.HandleFunc("GET "+nodeapi.PathEvents, h.events)
	mux.HandleFunc("GET "+nodeapi.PathACLExplain, h.explainACL)
	mux.HandleFunc("GET "+nodeapi.PathTelemetry, h.telemetry)
	h.transactionRoutes(mux)
	h.clockRoutes(mux)
	return muxErrors{mux}
}

type handler struct {
	node           *broker.Node
	admin, version string
}

func (h *handler) nodeInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, nodeapi.Node{NodeID: h.node.ID(), Kafka: h.node.Advertised(), Admin: h.admin, Version: h.version})
}

func (h *handler) cleaner(w http.ResponseWriter, _ *http.Request) {
	out := nodeapi.Cleaner{NodeID: h.node.ID(), Partitions: []nodeapi.CleanerPartition{}}
	for _, p := range h.node.CleanerStates() {
		out.Partitions = append(out.Partitions, cleanerPartition(p.Topic, p.Partition, p.MinCleanableDirtyRatio, p.CleanerState))
	}
	writeJSON(w, out)
}

func (h *handler) compact(w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("topic")
	q := r.URL.Query()
	partition := int32(-1)
	if v := q.Get("partition"); v != "" {
		p, err := strconv.ParseInt(v, 10, 32)
		if err != nil || p < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("partition %q: want a partition number", v))
			return
		}
		partition = int32(p)
	}
	dryRun := false
	if v := q.Get("dry_run"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("dry_run %q: want true or false", v))
			return
		}
		dryRun = b
	}
	res, err := h.node.CompactNow(r.Context(), topic, partition, dryRun)
	switch {
	case errors.Is(err, broker.ErrUnknownTopic):
		writeError(w, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, broker.ErrNotCompacted):
		writeError(w, http.StatusConflict, err.Error())
		return
	case errors.Is(err, log.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "the node is stopping")
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := nodeapi.Compaction{NodeID: h.node.ID(), Topic: topic, DryRun: dryRun, Partitions: []nodeapi.CompactedPartition{}}
	for _, c := range res {
		out.Partitions = append(out.Partitions, compactedPartition(c))
	}
	writeJSON(w, out)
}

func cleanerPartition(topic string, partition int32, minRatio float64, st log.CleanerState) nodeapi.CleanerPartition {
	p := nodeapi.CleanerPartition{
		Topic: topic, Partition: partition, DirtyRatio: st.DirtyRatio, MinCleanableDirtyRatio: minRatio,
		FirstDirtyOffset: st.FirstDirtyOffset, FirstUncleanableOffset: st.FirstUncleanableOffset,
		CleanBytes: st.CleanBytes, DirtyBytes: st.DirtyBytes,
		LastDurationMs:   float64(st.LastDuration.Microseconds()) / 1000,
		LastBytesRemoved: st.LastBytesRemoved, LastRecordsRemoved: st.LastRecordsRemoved,
		BytesRemoved: st.BytesRemoved, RecordsRemoved: st.RecordsRemoved, Runs: st.Runs,
	}
	p.LastRun = utcOrNil(st.LastRun)
	return p
}

func compactedPartition(c broker.Compaction) nodeapi.CompactedPartition {
	r := c.Result
	p := nodeapi.CompactedPartition{
		Partition: c.Partition, Cleaned: r.Cleaned,
		FirstDirtyOffset: r.FirstDirty, EndOffset: r.End, FirstUncleanableOffset: r.Uncleanable,
		SegmentsBefore: r.SegmentsBefore, SegmentsAfter: r.SegmentsAfter,
		BytesRemoved: r.BytesRemoved, RecordsRemoved: r.RecordsRemoved,
		TombstonesRemoved: r.TombstonesRemoved, MarkersRemoved: r.MarkersRemoved,
		Cleaner: cleanerPartition(c.Topic, c.Partition, c.MinCleanableDirtyRatio, c.CleanerState),
	}
	if plan := r.Plan; plan != nil {
		p.Plan = &nodeapi.CompactionPlan{
			Keys: []nodeapi.KeyRemoval{}, KeysAffected: plan.KeysAffected, KeysCapped: plan.KeysCapped,
			AbortedRecords: plan.AbortedRecords, KeylessRecords: plan.KeylessRecords,
			Tombstones: []nodeapi.PendingTombstone{}, TombstonesPending: plan.TombstonesPending,
		}
		for _, k := range plan.Keys {
			p.Plan.Keys = append(p.Plan.Keys, nodeapi.KeyRemoval{Bytes: nodeapi.KeyOf(k.Key), Records: k.Records})
		}
		for _, t := range plan.Tombstones {
			p.Plan.Tombstones = append(p.Plan.Tombstones, nodeapi.PendingTombstone{Bytes: nodeapi.KeyOf(t.Key), Offset: t.Offset, Expires: t.Expires.UTC()})
		}
	}
	return p
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(nodeapi.Error{Error: msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// muxErrors answers the mux's own plain-text errors, 404 (no such path)
// and 405 (a path served for another method), with the API's JSON error.
type muxErrors struct{ mux *http.ServeMux }

func (m muxErrors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mux.ServeHTTP(&muxError{ResponseWriter: w, r: r}, r)
}

// muxError replaces a plain-text 404 or 405 (http.Error's) by JSON.
type muxError struct {
	http.ResponseWriter
	r        *http.Request
	replaced bool
}

func (e *muxError) WriteHeader(status int) {
	if plain := strings.HasPrefix(e.Header().Get("Content-Type"), "text/plain"); plain {
		switch status {
		case http.StatusNotFound:
			e.replaced = true
			writeError(e.ResponseWriter, status, fmt.Sprintf("no endpoint %s %s", e.r.Method, e.r.URL.Path))
			return
		case http.StatusMethodNotAllowed:
			e.replaced = true
			writeError(e.ResponseWriter, status, "method not allowed; allowed: "+e.Header().Get("Allow"))
			return
		}
	}
	e.ResponseWriter.WriteHeader(status)
}

func (e *muxError) Write(b []byte) (int, error) {
	if e.replaced {
		return len(b), nil
	}
	return e.ResponseWriter.Write(b)
}

// limitListener accepts at most cap(slots) connections at a time; more
// wait in the kernel's backlog.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/recordjson"
	"github.com/klogdev/klog/store/log/record"
)

// batch is GET /v1/partitions/{topic}/{partition}/batch?offset=N.
func (h *handler) batch(w http.ResponseWriter, r *http.Request) {
	topic, index, ok := topicPartition(w, r)
	if !ok {
		return
	}
	v := r.URL.Query().Get("offset")
	offset, err := strconv.ParseInt(v, 10, 64)
	if err != nil || offset < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("offset %q: want an offset, 0 or more", v))
		return
	}
	raw, err := h.node.BatchAt(topic, index, offset)
	switch {
	case errors.Is(err, broker.ErrUnknownTopic):
		notLocal(w, topic, index)
		return
	case errors.Is(err, broker.ErrNoBatch):
		writeError(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, describeBatch(h.node.ID(), topic, index, raw))
}

// describeBatch decodes a batch as the log holds it.
func describeBatch(node int32, topic string, partition int32, raw []byte) nodeapi.Batch {
	out := nodeapi.Batch{NodeID: node, Topic: topic, Partition: partition, Records: []recordjson.Record{}}
	b, err := record.Parse(raw)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	a := b.Attributes()
	out.BaseOffset, out.LastOffset, out.Size, out.Count = b.BaseOffset(), b.LastOffset(), b.Size(), b.RecordCount()
	out.CRCValid = b.CheckCRC() == nil
	out.PartitionLeaderEpoch, out.Codec = b.PartitionLeaderEpoch(), a.Compression().String()
	out.TimestampType = "create"
	if a.TimestampType() == record.LogAppendTime {
		out.TimestampType = "log_append"
	}
	out.Transactional, out.Control, out.DeleteHorizon = a.Transactional(), a.Control(), a.DeleteHorizon()
	out.BaseTimestamp, out.MaxTimestamp = b.BaseTimestamp(), b.MaxTimestamp()
	out.ProducerID, out.ProducerEpoch, out.BaseSequence = b.ProducerID(), b.ProducerEpoch(), b.BaseSequence()
	var dec record.Decompressor
	defer dec.Close()
	it, err := b.Records(&dec)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	for it.Next() {
		if len(out.Records) == nodeapi.MaxBatchRecords {
			out.Truncated = true
			break
		}
		rec := it.Record()
		offset, ts := b.BaseOffset()+int64(rec.OffsetDelta), b.BaseTimestamp()+rec.TimestampDelta
		jr := recordjson.Record{Offset: &offset, Timestamp: &ts, Headers: []recordjson.Header{}}
		if a.TimestampType() == record.LogAppendTime {
			ts, jr.TimestampType = b.MaxTimestamp(), recordjson.TimestampLogAppend
		}
		jr.Key, jr.KeyEncoding = recordjson.EncodeBytes(rec.Key)
		jr.Value, jr.ValueEncoding = recordjson.EncodeBytes(rec.Value)
		for _, hd := range rec.Headers.Decode() {
			var jh recordjson.Header
			key, keyEnc := recordjson.EncodeBytes([]byte(hd.Key))
			jh.Key, jh.KeyEncoding = *key, keyEnc
			jh.Value, jh.ValueEncoding = recordjson.EncodeBytes(hd.Value)
			jr.Headers = append(jr.Headers, jh)
		}
		out.Records = append(out.Records, jr)
	}
	if err := it.Err(); err != nil {
		out.Error = err.Error()
	}
	return out
}

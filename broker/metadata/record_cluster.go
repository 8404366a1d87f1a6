package metadata

import (
	"fmt"
	"maps"
	"math"
)

// SetClusterIDRecord sets the cluster ID, once. The cluster-wide dynamic
// broker configs in BrokerDefaults are set with it, the first time only:
// the configs a new cluster starts with, as Kafka's storage format writes
// min.insync.replicas.
type SetClusterIDRecord struct {
	ClusterID      string            `json:"clusterID"`
	BrokerDefaults map[string]string `json:"brokerDefaults,omitempty"`
}

// Type returns "SetClusterID".
func (*SetClusterIDRecord) Type() string { return "SetClusterID" }

// apply applies the record to img (see Image.Apply).
func (r *SetClusterIDRecord) apply(img *Image) (*Image, error) {
	if r.ClusterID == "" {
		return nil, fmt.Errorf("%w: empty cluster id", ErrInvalidRecord)
	}
	if img.ClusterID != "" && img.ClusterID != r.ClusterID {
		return nil, fmt.Errorf("%w: %q, not %q", ErrClusterIDSet, img.ClusterID, r.ClusterID)
	}
	n := img.shallowCopy()
	if img.ClusterID == "" && len(r.BrokerDefaults) > 0 {
		clusterWide := ""
		var err error
		if n, err = img.applyAlterBrokerConfigs(&AlterTopicConfigsRecord{Broker: &clusterWide, Set: r.BrokerDefaults}); err != nil {
			return nil, err
		}
	}
	n.ClusterID = r.ClusterID
	return n, nil
}

// RegisterBrokerRecord adds or replaces a broker's registration. Without
// IfIncarnation it is a registration: a first one is applied as it says,
// one of a new incarnation fenced (Broker), one of the registered
// incarnation keeps its Fenced and ShuttingDown. With IfIncarnation, the
// broker's incarnation, it is an amendment that fences, unfences or shuts
// down that run, applied as it says only while that incarnation is the
// registered one, so that it never replaces the registration of the next.
type RegisterBrokerRecord struct {
	Broker        Broker `json:"broker"`
	IfIncarnation *UUID  `json:"ifIncarnation,omitempty"`
}

// Type returns "RegisterBroker".
func (*RegisterBrokerRecord) Type() string { return "RegisterBroker" }

// apply applies the record to img (see Image.Apply).
func (r *RegisterBrokerRecord) apply(img *Image) (*Image, error) {
	b := r.Broker
	if b.ID < 0 {
		return nil, fmt.Errorf("%w: broker id %d", ErrInvalidRecord, b.ID)
	}
	if b.Port < 0 || b.Port > math.MaxUint16 {
		return nil, fmt.Errorf("%w: broker %d port %d", ErrInvalidRecord, b.ID, b.Port)
	}
	for _, e := range b.Endpoints {
		if e.Name == "" || e.Port < 0 || e.Port > math.MaxUint16 {
			return nil, fmt.Errorf("%w: broker %d endpoint %q port %d", ErrInvalidRecord, b.ID, e.Name, e.Port)
		}
	}
	prev, ok := img.Brokers[b.ID]
	switch {
	case r.IfIncarnation != nil:
		// An amendment (fenced, unfenced, shutting down) of the run it
		// was made for, applied as it says.
		if *r.IfIncarnation != b.Incarnation {
			return nil, fmt.Errorf("%w: broker %d amended as incarnation %v for incarnation %v", ErrInvalidRecord, b.ID, b.Incarnation, *r.IfIncarnation)
		}
		if !ok || prev.Incarnation != *r.IfIncarnation {
			return nil, fmt.Errorf("%w: broker %d is registered as incarnation %v, not %v", ErrStaleIncarnation, b.ID, prev.Incarnation, *r.IfIncarnation)
		}
	case !ok:
		// A first registration, as it says.
	case b.Incarnation == UUID{}:
		// A record written before registrations named their run, when
		// fencing changes were plain registrations: as it says, so that
		// an older metadata log replays to the image it made.
	case prev.Incarnation != b.Incarnation:
		// A new incarnation (a restart, clean or not) starts fenced, as
		// a Kafka broker registers fenced: the active controller first
		// takes it out of every ISR and elects other leaders, at a new
		// leader epoch, then unfences it on a heartbeat (controller's
		// liveness.go). Its replicas rejoin as followers, truncate by
		// leader epoch and fetch what they lack.
		b.Fenced = true
	default:
		// The same run registering again (a retry, a new controller's
		// setup on an image not yet current) changes its address at
		// most: only amendments fence, unfence or shut it down, as
		// Kafka's amended registration keeps them.
		b.Fenced, b.ShuttingDown = prev.Fenced, prev.ShuttingDown
	}
	n := img.shallowCopy()
	n.Brokers = maps.Clone(img.Brokers)
	if n.Brokers == nil {
		n.Brokers = map[int32]Broker{}
	}
	n.Brokers[b.ID] = b
	return n, nil
}

// UnregisterBrokerRecord removes a broker's registration, as Kafka's
// UnregisterBrokerRecord: the broker leaves Brokers, and its replicas stay
// in the partitions' replica lists, offline, until they are reassigned.
// It applies only while Incarnation is the registered one, as Kafka's
// carries the broker epoch, so that it never removes the registration of
// a run that came after it was asked for.
type UnregisterBrokerRecord struct {
	ID          int32 `json:"id"`
	Incarnation UUID  `json:"incarnation"`
}

// Type returns "UnregisterBroker".
func (*UnregisterBrokerRecord) Type() string { return "UnregisterBroker" }

// apply applies the record to img (see Image.Apply).
func (r *UnregisterBrokerRecord) apply(img *Image) (*Image, error) {
	b, ok := img.Brokers[r.ID]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrUnknownBroker, r.ID)
	}
	if b.Incarnation != r.Incarnation {
		return nil, fmt.Errorf("%w: broker %d is registered as incarnation %v, not %v", ErrStaleIncarnation, r.ID, b.Incarnation, r.Incarnation)
	}
	n := img.shallowCopy()
	n.Brokers = maps.Clone(img.Brokers)
	delete(n.Brokers, r.ID)
	return n, nil
}

// SetControllerRecord records which node is the active controller.
type SetControllerRecord struct {
	ID int32 `json:"id"`
}

// Type returns "SetController".
func (*SetControllerRecord) Type() string { return "SetController" }

// apply applies the record to img (see Image.Apply).
func (r *SetControllerRecord) apply(img *Image) (*Image, error) {
	if r.ID < -1 {
		return nil, fmt.Errorf("%w: controller id %d", ErrInvalidRecord, r.ID)
	}
	n := img.shallowCopy()
	n.Controller = r.ID
	return n, nil
}

// AllocateProducerIDsRecord hands out the block [NextProducerID,
// NextProducerID+BlockSize).
type AllocateProducerIDsRecord struct {
	BlockSize int64 `json:"blockSize"`
}

// Type returns "AllocateProducerIDs".
func (*AllocateProducerIDsRecord) Type() string { return "AllocateProducerIDs" }

// apply applies the record to img (see Image.Apply).
func (r *AllocateProducerIDsRecord) apply(img *Image) (*Image, error) {
	if r.BlockSize <= 0 || r.BlockSize > MaxProducerIDBlock {
		return nil, fmt.Errorf("%w: producer id block size %d not in [1, %d]", ErrInvalidRecord, r.BlockSize, MaxProducerIDBlock)
	}
	if img.NextProducerID < 0 || img.NextProducerID > math.MaxInt64-r.BlockSize {
		return nil, fmt.Errorf("%w: next %d, block %d", ErrProducerIDsExhausted, img.NextProducerID, r.BlockSize)
	}
	n := img.shallowCopy()
	n.NextProducerID += r.BlockSize
	return n, nil
}

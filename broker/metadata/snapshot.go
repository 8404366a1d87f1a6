package metadata

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// imageVersion is the current layout version of an encoded image.
const imageVersion = 1

// maxImageBytes bounds the size of an encoded image DecodeImage accepts.
const maxImageBytes = 1 << 30

type imageJSON struct {
	ClusterID      string      `json:"clusterID"`
	Controller     int32       `json:"controller"`
	Brokers        []Broker    `json:"brokers"`
	Topics         []topicJSON `json:"topics"`
	NextProducerID int64       `json:"nextProducerID"`
	Index          uint64      `json:"index"`
	// BrokerConfigs are the dynamic broker configs by resource name.
	BrokerConfigs map[string]map[string]string `json:"brokerConfigs,omitempty"`
	// ClientMetrics are the client metrics resources' configs by name.
	ClientMetrics map[string]map[string]string `json:"clientMetrics,omitempty"`
	// ACLs are the ACL bindings, by id.
	ACLs []ACLEntry `json:"acls,omitempty"`
	// SCRAMCredentials are the users' SCRAM credentials, by user and
	// then mechanism.
	SCRAMCredentials []SCRAMCredential `json:"scramCredentials,omitempty"`
	// ClientQuotas are the client quotas, in SortedQuotaEntities' order.
	ClientQuotas []quotaJSON `json:"clientQuotas,omitempty"`
	// DelegationTokens are the delegation tokens, by id.
	DelegationTokens []DelegationToken `json:"delegationTokens,omitempty"`
	// FeatureLevels are the feature levels UpdateFeatures set, by name.
	FeatureLevels map[string]int16 `json:"featureLevels,omitempty"`
}

type quotaJSON struct {
	Entity QuotaEntity        `json:"entity"`
	Values map[string]float64 `json:"values"`
}

type topicJSON struct {
	Name       string            `json:"name"`
	ID         UUID              `json:"id"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
	Internal   bool              `json:"internal,omitempty"`
}

// EncodeImage encodes a whole image, for Raft snapshots. Brokers and topics
// are written in ascending order so equal images encode to equal bytes.
func EncodeImage(img *Image) ([]byte, error) {
	ij := imageJSON{
		ClusterID:      img.ClusterID,
		Controller:     img.Controller,
		NextProducerID: img.NextProducerID,
		Index:          img.Index,
		BrokerConfigs:  img.BrokerConfigs,
		ClientMetrics:  img.ClientMetrics,
		Brokers:        make([]Broker, 0, len(img.Brokers)),
		Topics:         make([]topicJSON, 0, len(img.Topics)),
		ACLs:           img.ACLs.Sorted(),
		// SCRAMCredentials: SortedSCRAMCredentials' order.
		SCRAMCredentials: img.SortedSCRAMCredentials(),
		DelegationTokens: img.SortedDelegationTokens(),
		FeatureLevels:    img.FeatureLevels,
	}
	for _, e := range img.SortedQuotaEntities() {
		ij.ClientQuotas = append(ij.ClientQuotas, quotaJSON{Entity: e, Values: img.ClientQuotas[e]})
	}
	for _, id := range img.SortedBrokerIDs() {
		ij.Brokers = append(ij.Brokers, img.Brokers[id])
	}
	for _, name := range img.SortedTopicNames() {
		t := img.Topics[name]
		ij.Topics = append(ij.Topics, topicJSON{Name: t.Name, ID: UUID(t.ID), Partitions: t.Partitions, Configs: t.Configs, Internal: t.Internal})
	}
	data, err := json.Marshal(ij)
	if err != nil {
		return nil, fmt.Errorf("encode image: %w", err)
	}
	return json.Marshal(envelope{V: imageVersion, Type: "Image", Data: data})
}

// DecodeImage decodes an image written by EncodeImage and checks that it is
// consistent (unique names and IDs, valid partitions).
func DecodeImage(b []byte) (*Image, error) {
	if len(b) > maxImageBytes {
		return nil, fmt.Errorf("%w: image of %d bytes", ErrMalformedRecord, len(b))
	}
	var env envelope
	if err := strictUnmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("%w: image envelope: %v", ErrMalformedRecord, err)
	}
	if env.Type != "Image" {
		return nil, fmt.Errorf("%w: %q is not an image", ErrMalformedRecord, env.Type)
	}
	if env.V < 1 || env.V > imageVersion {
		return nil, fmt.Errorf("%w: image v%d", ErrUnsupportedVersion, env.V)
	}
	var ij imageJSON
	if err := strictUnmarshal(env.Data, &ij); err != nil {
		return nil, fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
	}
	img := Empty()
	img.ClusterID = ij.ClusterID
	img.Controller = ij.Controller
	img.NextProducerID = ij.NextProducerID
	img.Index = ij.Index
	if err := img.decodeConfigs(&ij); err != nil {
		return nil, err
	}
	if err := img.decodeSecurity(&ij); err != nil {
		return nil, err
	}
	if err := img.decodeFeatureLevels(ij.FeatureLevels); err != nil {
		return nil, err
	}
	for _, br := range ij.Brokers {
		if _, dup := img.Brokers[br.ID]; dup || br.ID < 0 {
			return nil, fmt.Errorf("%w: image broker %d", ErrMalformedRecord, br.ID)
		}
		img.Brokers[br.ID] = br
	}
	for _, tj := range ij.Topics {
		id := [16]byte(tj.ID)
		if err := ValidateTopicName(tj.Name); err != nil {
			return nil, fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
		}
		if _, dup := img.Topics[tj.Name]; dup {
			return nil, fmt.Errorf("%w: image topic %q twice", ErrMalformedRecord, tj.Name)
		}
		if _, dup := img.TopicIDs[id]; dup || id == ([16]byte{}) {
			return nil, fmt.Errorf("%w: image topic %q id %v", ErrMalformedRecord, tj.Name, tj.ID)
		}
		if len(tj.Partitions) > MaxPartitions {
			return nil, fmt.Errorf("%w: image topic %q has %d partitions", ErrMalformedRecord, tj.Name, len(tj.Partitions))
		}
		for i, p := range tj.Partitions {
			if int(p.Index) != i {
				return nil, fmt.Errorf("%w: image topic %q partition %d at %d", ErrMalformedRecord, tj.Name, p.Index, i)
			}
			// Replicas of unregistered brokers were replicas when
			// their brokers unregistered.
			if err := img.checkPartition(tj.Name, p, p.Replicas); err != nil {
				return nil, fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
			}
		}
		t := &Topic{Name: tj.Name, ID: id, Partitions: slices.Clone(tj.Partitions), Configs: maps.Clone(tj.Configs), Internal: tj.Internal}
		if t.Configs == nil {
			t.Configs = map[string]string{}
		}
		img.Topics[t.Name] = t
		img.TopicIDs[id] = t.Name
	}
	return img, nil
}

// decodeConfigs sets the dynamic broker configs and the client metrics
// resources of an image being decoded.
func (img *Image) decodeConfigs(ij *imageJSON) error {
	for name, cfg := range ij.BrokerConfigs {
		if name != "" {
			if id, err := strconv.ParseInt(name, 10, 32); err != nil || id < 0 {
				return fmt.Errorf("%w: image broker configs of %q", ErrMalformedRecord, name)
			}
		}
		if len(cfg) > 0 {
			if img.BrokerConfigs == nil {
				img.BrokerConfigs = map[string]map[string]string{}
			}
			img.BrokerConfigs[name] = cfg
		}
	}
	for name, cfg := range ij.ClientMetrics {
		if name == "" || len(cfg) == 0 || len(ij.ClientMetrics) > MaxClientMetricsResources {
			return fmt.Errorf("%w: image client metrics resource %q", ErrMalformedRecord, name)
		}
	}
	if len(ij.ClientMetrics) > 0 {
		img.ClientMetrics = ij.ClientMetrics
	}
	return nil
}

// decodeSecurity sets the ACLs, SCRAM credentials, delegation tokens
// and client quotas of an image being decoded.
func (img *Image) decodeSecurity(ij *imageJSON) error {
	if err := img.decodeACLs(ij.ACLs); err != nil {
		return err
	}
	if err := img.decodeSCRAMCredentials(ij.SCRAMCredentials); err != nil {
		return err
	}
	if err := img.decodeDelegationTokens(ij.DelegationTokens); err != nil {
		return err
	}
	return img.decodeClientQuotas(ij.ClientQuotas)
}

// decodeACLs sets the ACLs of an image being decoded.
func (img *Image) decodeACLs(entries []ACLEntry) error {
	if len(entries) == 0 {
		return nil
	}
	img.ACLs = img.ACLs.clone()
	for _, e := range entries {
		if err := img.ACLs.add(e); err != nil {
			return fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
		}
	}
	return nil
}

// decodeSCRAMCredentials sets the SCRAM credentials of an image being
// decoded.
func (img *Image) decodeSCRAMCredentials(creds []SCRAMCredential) error {
	if len(creds) == 0 {
		return nil
	}
	scram, err := img.Apply(&AlterSCRAMCredentialsRecord{Upsert: creds})
	if err != nil {
		return fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
	}
	img.SCRAMCredentials = scram.SCRAMCredentials
	return nil
}

// decodeClientQuotas sets img's client quotas from an encoded image's,
// checked as ClientQuotaRecord checks them.
func (img *Image) decodeClientQuotas(qs []quotaJSON) error {
	for _, q := range qs {
		if _, dup := img.ClientQuotas[q.Entity]; dup || len(q.Values) == 0 {
			return fmt.Errorf("%w: image client quotas of %s", ErrMalformedRecord, q.Entity)
		}
		rec := &ClientQuotaRecord{}
		for _, k := range slices.Sorted(maps.Keys(q.Values)) {
			rec.Changes = append(rec.Changes, QuotaChange{Entity: q.Entity, Key: k, Value: new(q.Values[k])})
		}
		n, err := rec.apply(img)
		if err != nil {
			return fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
		}
		img.ClientQuotas = n.ClientQuotas
	}
	return nil
}

package main

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Resource types and operations of the authorization corpus, short.
const (
	rtTopic   = kmsg.ACLResourceTypeTopic
	rtGroup   = kmsg.ACLResourceTypeGroup
	rtTxn     = kmsg.ACLResourceTypeTransactionalId
	rtCluster = kmsg.ACLResourceTypeCluster

	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
	opClusterAction   = kmsg.ACLOperationClusterAction
)

// withTopicSetup creates the case's one-partition topic.
func withTopicSetup(s *side, name string) error { return s.createTopic(name, 1) }

// withGroupSetup creates the topic and a group of that name holding an
// offset of it (a standalone commit).
func withGroupSetup(s *side, name string) error {
	if err := withTopicSetup(s, name); err != nil {
		return err
	}
	resp, err := s.do(offsetCommitReq(name, "", -1, name, 0))
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode)
	}
	if err != nil {
		return errSetupf(s, "commit an offset of group %s: %v", name, err)
	}
	return nil
}

// withTxnSetup creates the topic and initializes the transactional id of
// that name.
func withTxnSetup(s *side, name string) error {
	if err := withTopicSetup(s, name); err != nil {
		return err
	}
	resp, err := s.do(initProducerIDReq(&name))
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.InitProducerIDResponse).ErrorCode)
	}
	if err != nil {
		return errSetupf(s, "InitProducerId of %s: %v", name, err)
	}
	return nil
}

// initProducerIDReq asks for a producer id, transactional with txnID.
func initProducerIDReq(txnID *string) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = txnID, 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	return req
}

// authzAPIs are the APIs of the corpus, each with the resource and
// operation Kafka decides it by (KafkaApis, AuthorizerIntegrationTest).
func authzAPIs() []authzAPI {
	return append(append(topicAuthzAPIs(), groupAuthzAPIs()...), append(txnAuthzAPIs(), clusterAuthzAPIs()...)...)
}

func topicAuthzAPIs() []authzAPI {
	return []authzAPI{
		{name: "produce", rt: rtTopic, op: opWrite, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return produceReq(n, 0, nil, plainBatch(1)) }},
		{name: "fetch", rt: rtTopic, op: opRead, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return fetchReq(n, 0, -1, 0) }},
		{name: "list-offsets", rt: rtTopic, op: opDescribe, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return listOffsetsReq(n, -1, -1, 0) }},
		{name: "metadata", rt: rtTopic, op: opDescribe, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return metadataReq(n) }},
		// DESCRIBE is implied by READ, WRITE, DELETE and ALTER; a DENY of
		// WRITE does not deny the DESCRIBE an ALLOW of WRITE implies.
		{name: "metadata-by-write", rt: rtTopic, op: opWrite, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return metadataReq(n) }},
		{name: "metadata-auto-create", rt: rtTopic, op: opCreate,
			req: func(n string) kmsg.Request {
				req := metadataReq(n)
				req.AllowAutoTopicCreation = true
				return req
			}, also: []aclGrant{{rtTopic, opDescribe}}},
		{name: "describe-configs", rt: rtTopic, op: opDescribeConfigs, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return describeConfigsReq(n) }},
		{name: "describe-configs-by-alter", rt: rtTopic, op: opAlterConfigs, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return describeConfigsReq(n) }},
		{name: "alter-configs", rt: rtTopic, op: opAlterConfigs, setup: withTopicSetup,
			req: func(n string) kmsg.Request {
				req := incrementalAlterReq(n, "retention.ms", kmsg.StringPtr("3600000"))
				req.ValidateOnly = true
				return req
			}},
		{name: "create-partitions", rt: rtTopic, op: opAlter, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return createPartitionsReq(n, 2, true) }},
		{name: "create-topics", rt: rtTopic, op: opCreate,
			req: func(n string) kmsg.Request {
				req := createReq([]string{n}, 1, 1)
				req.ValidateOnly = true
				return req
			}},
		{name: "delete-records", rt: rtTopic, op: opDelete, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return deleteRecordsReq(n, 0, 0) }},
		{name: "delete-topics", rt: rtTopic, op: opDelete, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return deleteReq(n) }},
		{name: "describe-producers", rt: rtTopic, op: opRead, setup: withTopicSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				t := kmsg.NewDescribeProducersRequestTopic()
				t.Topic, t.Partitions = n, []int32{0}
				req.Topics = append(req.Topics, t)
				return req
			}},
		{name: "describe-topic-partitions", rt: rtTopic, op: opDescribe, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return describePartitionsReq(10, "", 0, n) }},
	}
}

func groupAuthzAPIs() []authzAPI {
	topicRead := []aclGrant{{rtTopic, opRead}}
	return []authzAPI{
		{name: "offset-commit", rt: rtGroup, op: opRead, also: topicRead, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return offsetCommitReq(n, "", -1, n, 0) }},
		{name: "offset-fetch", rt: rtGroup, op: opDescribe, also: []aclGrant{{rtTopic, opDescribe}}, setup: withGroupSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.SetVersion(8) // v10 names topics by id
				g := kmsg.NewOffsetFetchRequestGroup()
				g.Group = n
				t := kmsg.NewOffsetFetchRequestGroupTopic()
				t.Topic, t.Partitions = n, []int32{0}
				g.Topics = append(g.Topics, t)
				req.Groups = append(req.Groups, g)
				return req
			}},
		{name: "find-coordinator-group", rt: rtGroup, op: opDescribe,
			req: func(n string) kmsg.Request { return findCoordinatorReq(0, n) }},
		{name: "join-group", rt: rtGroup, op: opRead,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = n, 30000, 30000
				req.ProtocolType = "consumer"
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0}
				req.Protocols = append(req.Protocols, p)
				return req
			}},
		{name: "describe-groups", rt: rtGroup, op: opDescribe, setup: withGroupSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups = []string{n}
				return req
			}},
		{name: "list-groups", rt: rtGroup, op: opDescribe, setup: withGroupSetup,
			req: func(string) kmsg.Request {
				req := kmsg.NewPtrListGroupsRequest()
				req.TypesFilter = []string{"classic"}
				return req
			}},
		{name: "delete-groups", rt: rtGroup, op: opDelete,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{n}
				return req
			}},
		{name: "offset-delete", rt: rtGroup, op: opDelete, also: topicRead, setup: withGroupSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = n
				t := kmsg.NewOffsetDeleteRequestTopic()
				t.Topic = n
				p := kmsg.NewOffsetDeleteRequestTopicPartition()
				t.Partitions = append(t.Partitions, p)
				req.Topics = append(req.Topics, t)
				return req
			}},
		{name: "consumer-group-heartbeat", rt: rtGroup, op: opRead, also: []aclGrant{{rtTopic, opDescribe}}, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return firstHeartbeatReq(n, "", n) }},
		{name: "consumer-group-describe", rt: rtGroup, op: opDescribe,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrConsumerGroupDescribeRequest()
				req.Groups = []string{n}
				return req
			}},
	}
}

func txnAuthzAPIs() []authzAPI {
	return []authzAPI{
		{name: "init-producer-id-txn", rt: rtTxn, op: opWrite,
			req: func(n string) kmsg.Request { return initProducerIDReq(&n) }},
		{name: "find-coordinator-txn", rt: rtTxn, op: opDescribe,
			req: func(n string) kmsg.Request { return findCoordinatorReq(1, n) }},
		{name: "describe-transactions", rt: rtTxn, op: opDescribe, setup: withTxnSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrDescribeTransactionsRequest()
				req.TransactionalIDs = []string{n}
				return req
			}},
		{name: "list-transactions", rt: rtTxn, op: opDescribe, setup: withTxnSetup,
			req: func(n string) kmsg.Request {
				// Only the case's own id (v2's pattern), not those of
				// other cases, whose states may differ.
				req := kmsg.NewPtrListTransactionsRequest()
				req.ProducerIDFilters, req.StateFilters = []int64{}, []string{}
				req.TransactionalIDPattern = kmsg.StringPtr("^" + n + "$")
				return req
			}},
		{name: "add-partitions-to-txn", rt: rtTxn, op: opWrite, also: []aclGrant{{rtTopic, opWrite}}, setup: withTopicSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				req.SetVersion(3) // v4+ is for brokers
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = n, 123456, 0
				t := kmsg.NewAddPartitionsToTxnRequestTopic()
				t.Topic, t.Partitions = n, []int32{0}
				req.Topics = append(req.Topics, t)
				return req
			}},
		{name: "add-offsets-to-txn", rt: rtTxn, op: opWrite, also: []aclGrant{{rtGroup, opRead}},
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = n, 123456, 0, n
				return req
			}},
		{name: "end-txn", rt: rtTxn, op: opWrite,
			req: func(n string) kmsg.Request { return endTxnReq(n, 123456, 0, true) }},
	}
}

func clusterAuthzAPIs() []authzAPI {
	return []authzAPI{
		{name: "init-producer-id-idempotent", rt: rtCluster, op: opIdempotentWrite,
			req: func(string) kmsg.Request { return initProducerIDReq(nil) }},
		{name: "describe-acls", rt: rtCluster, op: opDescribe,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourceName, req.ResourcePatternType = rtTopic, &n, kmsg.ACLResourcePatternTypeLiteral
				req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				return req
			}},
		{name: "create-acls", rt: rtCluster, op: opAlter,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrCreateACLsRequest()
				req.Creations = append(req.Creations, aliceACL(rtTopic, n, kmsg.ACLResourcePatternTypeLiteral, opRead, kmsg.ACLPermissionTypeAllow))
				return req
			}},
		{name: "describe-log-dirs", rt: rtCluster, op: opDescribe, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return describeLogDirsReq(n, 0) }},
		{name: "alter-replica-log-dirs", rt: rtCluster, op: opAlter, setup: withTopicSetup,
			req: func(n string) kmsg.Request {
				// A directory neither broker has: allowed, the answer is
				// LOG_DIR_NOT_FOUND on both.
				req := kmsg.NewPtrAlterReplicaLogDirsRequest()
				d := kmsg.NewAlterReplicaLogDirsRequestDir()
				d.Dir = "/nonexistent/protodiff"
				t := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
				t.Topic, t.Partitions = n, []int32{0}
				d.Topics = append(d.Topics, t)
				req.Dirs = append(req.Dirs, d)
				return req
			}},
		{name: "describe-cluster", rt: rtCluster, op: opDescribe,
			req: func(string) kmsg.Request {
				req := kmsg.NewPtrDescribeClusterRequest()
				req.IncludeClusterAuthorizedOperations = true
				return req
			}},
		{name: "describe-client-quotas", rt: rtCluster, op: opDescribeConfigs,
			req: func(string) kmsg.Request { return kmsg.NewPtrDescribeClientQuotasRequest() }},
		{name: "alter-client-quotas", rt: rtCluster, op: opAlterConfigs,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrAlterClientQuotasRequest()
				req.ValidateOnly = true
				e := kmsg.NewAlterClientQuotasRequestEntry()
				c := kmsg.NewAlterClientQuotasRequestEntryEntity()
				c.Type, c.Name = "client-id", &n
				e.Entity = append(e.Entity, c)
				op := kmsg.NewAlterClientQuotasRequestEntryOp()
				op.Key, op.Value = "producer_byte_rate", 1048576
				e.Ops = append(e.Ops, op)
				req.Entries = append(req.Entries, e)
				return req
			}},
		{name: "describe-user-scram", rt: rtCluster, op: opDescribe,
			req: func(string) kmsg.Request {
				// Every user, as an empty list: Kafka 4.4 answers a null
				// one it refuses with nothing (a NullPointerException in
				// DescribeUserScramCredentialsRequest.getErrorResponse).
				req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
				req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{}
				return req
			}},
		{name: "alter-user-scram", rt: rtCluster, op: opAlter,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
				d.Name, d.Mechanism = n, 2
				req.Deletions = append(req.Deletions, d)
				return req
			}},
		{name: "elect-leaders", rt: rtCluster, op: opAlter, setup: withTopicSetup,
			req: func(n string) kmsg.Request { return electLeadersReq(0, n, 0) }},
		{name: "list-partition-reassignments", rt: rtCluster, op: opDescribe,
			req: func(string) kmsg.Request { return kmsg.NewPtrListPartitionReassignmentsRequest() }},
		{name: "write-txn-markers", rt: rtCluster, op: opClusterAction, setup: withTopicSetup,
			req: func(n string) kmsg.Request {
				req := kmsg.NewPtrWriteTxnMarkersRequest()
				m := kmsg.NewWriteTxnMarkersRequestMarker()
				m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = 123456, 0, true, 0
				t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				t.Topic, t.Partitions = n, []int32{0}
				m.Topics = append(m.Topics, t)
				req.Markers = append(req.Markers, m)
				return req
			}},
	}
}

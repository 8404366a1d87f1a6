package main

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's cases of ListConfigResources.

// listConfigResourcesReq asks for the config resources of types (none:
// every type).
func listConfigResourcesReq(types ...int8) *kmsg.ListConfigResourcesRequest {
	req := kmsg.NewPtrListConfigResourcesRequest()
	req.ResourceTypes = types
	return req
}

// listConfigResourcesOf is a case that creates a topic and lists the
// config resources of types. Of the topics it keeps its own alone, since
// the brokers hold the other cases' topics too, and it sorts the names
// within a type, which Kafka orders as its hash maps do.
func listConfigResourcesOf(base string, types ...int8) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		topic := s.topic(base)
		if err := s.createTopic(topic, 1); err != nil {
			return nil, err
		}
		resp, err := s.do(listConfigResourcesReq(types...))
		if err != nil {
			return nil, err
		}
		r := resp.(*kmsg.ListConfigResourcesResponse)
		r.ConfigResources = slices.DeleteFunc(r.ConfigResources, func(c kmsg.ListConfigResourcesResponseConfigResource) bool {
			return c.Type == int8(kmsg.ConfigResourceTypeTopic) && c.Name != topic
		})
		slices.SortStableFunc(r.ConfigResources, func(a, b kmsg.ListConfigResourcesResponseConfigResource) int {
			if a.Type != b.Type {
				return 0 // Kafka's order of types is compared
			}
			return cmp.Compare(a.Name, b.Name)
		})
		return []kmsg.Response{r}, nil
	}
}

func configResourceCases() []testCase {
	return []testCase{
		// Every type (none named), and topics alone.
		{"listconfigresources-all", listConfigResourcesOf("lcr-all")},
		{"listconfigresources-topics", listConfigResourcesOf("lcr-topics", 2)},
		// The node as broker and broker logger, in Kafka's order of
		// types whatever the request's; a type named twice lists once.
		{"listconfigresources-brokers", noSetup(func(*side) kmsg.Request { return listConfigResourcesReq(4, 8, 4) })},
		{"listconfigresources-groups-client-metrics", noSetup(func(*side) kmsg.Request { return listConfigResourcesReq(32, 16) })},
		// A type v1 does not list fails the request: ANY (1), UNKNOWN
		// (0), a type no one defines.
		{"listconfigresources-any", noSetup(func(*side) kmsg.Request { return listConfigResourcesReq(1) })},
		{"listconfigresources-unknown", noSetup(func(*side) kmsg.Request { return listConfigResourcesReq(2, 0) })},
		{"listconfigresources-undefined", noSetup(func(*side) kmsg.Request { return listConfigResourcesReq(4, 99, -1) })},
	}
}

package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

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

// cmStep is one request of a client metrics case, built from the
// case's resource name, and the configs it leaves set (a value) or unset
// (nil) when it passes.
type cmStep struct {
	req   func(name string) kmsg.Request
	after map[string]*string
}

// clientMetricsSteps is a case of several requests on the client metrics
// resource the case names after itself; the last deletes what the others
// set. After a change the case waits until the side describes and lists
// the resource as the change left it (Kafka applies it a moment after
// answering), and ListConfigResources keeps the case's resource alone.
func clientMetricsSteps(base string, steps ...cmStep) func(s *side) ([]kmsg.Response, error) {
	return func(s *side) ([]kmsg.Response, error) {
		name := s.topic(base)
		state := map[string]*string{}
		var out []kmsg.Response
		for _, step := range steps {
			resp, err := s.do(step.req(name))
			if err != nil {
				return out, err
			}
			if r, ok := resp.(*kmsg.ListConfigResourcesResponse); ok {
				r.ConfigResources = slices.DeleteFunc(r.ConfigResources, func(c kmsg.ListConfigResourcesResponseConfigResource) bool { return c.Name != name })
				if len(r.ConfigResources) == 0 {
					r.ConfigResources = nil // none of this case's, whatever else the broker holds
				}
			}
			out = append(out, resp)
			if step.after != nil && changed(resp) {
				if err := s.waitClientMetrics(name, state, step.after); err != nil {
					return out, err
				}
			}
		}
		return out, nil
	}
}

// changed reports whether an IncrementalAlterConfigs or AlterConfigs
// response is a success.
func changed(resp kmsg.Response) bool {
	switch r := resp.(type) {
	case *kmsg.IncrementalAlterConfigsResponse:
		return r.Resources[0].ErrorCode == 0
	case *kmsg.AlterConfigsResponse:
		return r.Resources[0].ErrorCode == 0
	}
	return false
}

// waitClientMetrics records after in state and waits until the side
// describes each config of after as it says and lists the resource while
// one is set.
func (s *side) waitClientMetrics(name string, state, after map[string]*string) error {
	const cm = kmsg.ConfigResourceTypeClientMetrics
	exists := false
	for k, v := range after {
		state[k] = v
		if err := s.waitConfig(cm, name, k, kmsg.ConfigSourceClientMetricsConfig, v); err != nil {
			return err
		}
	}
	for _, v := range state {
		exists = exists || v != nil
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := s.do(listConfigResourcesReq(16))
		if err != nil {
			return err
		}
		listed := slices.ContainsFunc(resp.(*kmsg.ListConfigResourcesResponse).ConfigResources,
			func(c kmsg.ListConfigResourcesResponseConfigResource) bool { return c.Name == name })
		if listed == exists {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: client metrics resource %s listed %v on %s", errSetup, name, listed, s.name)
		}
		time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
	}
}

func clientMetricsCases() []testCase {
	const cm = kmsg.ConfigResourceTypeClientMetrics
	// alter is an IncrementalAlterConfigs step; after, the configs it
	// sets ("k=v") and deletes ("k").
	alter := func(ops []alterOp, after ...string) cmStep {
		st := cmStep{req: func(name string) kmsg.Request { return incrementalAlterOf(cm, name, false, ops...) }, after: map[string]*string{}}
		for _, a := range after {
			k, v, set := strings.Cut(a, "=")
			st.after[k] = nil
			if set {
				st.after[k] = &v
			}
		}
		return st
	}
	ops := func(o ...alterOp) []alterOp { return o }
	describe := cmStep{req: func(name string) kmsg.Request { return describeConfigsOf(cm, name) }}
	list := cmStep{req: func(string) kmsg.Request { return listConfigResourcesReq(16) }}
	bad := func(o alterOp) cmStep { return alter(ops(o)) }
	return []testCase{
		// A subscription set, described, listed, emptied (gone).
		{"clientmetrics-set-describe-list", clientMetricsSteps("cm-set",
			alter(ops(setOp("interval.ms", "1000"), setOp("metrics", "org.apache.kafka.producer.")), "interval.ms=1000", "metrics=org.apache.kafka.producer."),
			describe, list,
			alter(ops(setOp("match", "client_id=a, client_software_name=b.*")), "match=client_id=a,client_software_name=b.*"), describe,
			alter(ops(deleteOp("interval.ms"), deleteOp("metrics"), deleteOp("match")), "interval.ms", "metrics", "match"), describe, list)},
		// The legacy AlterConfigs replaces a subscription's configs.
		{"clientmetrics-legacy-alter", clientMetricsSteps("cm-legacy",
			cmStep{func(name string) kmsg.Request {
				return alterConfigsOf(cm, name, "interval.ms", "1000", "metrics", "a, b")
			},
				map[string]*string{"interval.ms": kmsg.StringPtr("1000"), "metrics": kmsg.StringPtr("a,b")}},
			describe,
			cmStep{func(name string) kmsg.Request { return alterConfigsOf(cm, name) }, map[string]*string{"interval.ms": nil, "metrics": nil}},
			list)},
		{"clientmetrics-describe-empty-name", noSetup(func(*side) kmsg.Request { return describeConfigsOf(cm, "") })},
		// Refused, in Kafka's words: nothing is left to delete.
		{"clientmetrics-unknown-config", clientMetricsSteps("cm-bad", bad(setOp("nosuch", "1")))},
		{"clientmetrics-interval-not-int", clientMetricsSteps("cm-bad", bad(setOp("interval.ms", "abc")))},
		{"clientmetrics-interval-range", clientMetricsSteps("cm-bad", bad(setOp("interval.ms", "99")))},
		{"clientmetrics-empty-name", noSetup(func(*side) kmsg.Request { return incrementalAlterOf(cm, "", false, setOp("interval.ms", "1000")) })},
		{"clientmetrics-null-value", clientMetricsSteps("cm-bad", bad(alterOp{kmsg.IncrementalAlterConfigOpSet, "interval.ms", nil}))},
		{"clientmetrics-append", clientMetricsSteps("cm-bad", bad(alterOp{kmsg.IncrementalAlterConfigOpAppend, "metrics", kmsg.StringPtr("a")}))},
		{"clientmetrics-match-no-value", clientMetricsSteps("cm-bad", bad(setOp("match", "client_id")))},
		{"clientmetrics-match-unknown-key", clientMetricsSteps("cm-bad", bad(setOp("match", "bogus=x")))},
		{"clientmetrics-match-bad-regex", clientMetricsSteps("cm-bad", bad(setOp("match", "client_id=[")))},
	}
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testCase is one entry of the corpus. run builds the case's state on one
// broker and returns the responses to compare; it runs on both brokers at
// once with the same names.
type testCase struct {
	name string
	run  func(s *side) ([]kmsg.Response, error)
}

// diff is one field whose values differ.
type diff struct {
	path         string
	klog, kafka  string
	message      bool   // an error message, reported apart
	expectReason string // set when the expected list explains it
}

type result struct {
	name      string
	versions  string
	setupErr  error  // the case could not build its state
	suffix    string // the run's unique suffix, shown as RUN
	klogTree  []byte // klog's normalised responses, as JSON
	kafkaTree []byte // and Kafka's
	diffs     []diff
}

// runCase runs c on both brokers and compares what they answered.
func runCase(c testCase, klog, kafka *side) result {
	type out struct {
		resps []kmsg.Response
		err   error
	}
	klog.sent, kafka.sent = nil, nil
	ko, fo := runBoth(klog, kafka, func(s *side) out {
		r, err := c.run(s)
		return out{r, err}
	})
	res := result{name: c.name, versions: klog.sentVersions(), suffix: klog.suffix}
	for _, err := range []error{ko.err, fo.err} {
		if errors.Is(err, errSetup) {
			res.setupErr = err
			return res
		}
	}
	kt, ft := tree(ko.resps, ko.err), tree(fo.resps, fo.err)
	res.klogTree, _ = json.Marshal(kt)
	res.kafkaTree, _ = json.Marshal(ft)
	compare("", kt, ft, &res.diffs)
	for i := range res.diffs {
		res.diffs[i].expectReason = expectedReason(c.name, res.diffs[i].path)
	}
	return res
}

// tree is the normalised JSON tree of the responses, or the error with
// the responses before it.
func tree(resps []kmsg.Response, err error) any {
	if err != nil {
		m := map[string]any{"error": err.Error()}
		if len(resps) > 0 {
			m["before"] = tree(resps, nil) // answered before the error
		}
		return m
	}
	var out []any
	for _, r := range resps {
		b, jerr := json.Marshal(r)
		if jerr != nil {
			return map[string]any{"error": jerr.Error()}
		}
		var v any
		_ = json.Unmarshal(b, &v)
		out = append(out, normalise("", v))
	}
	if len(out) == 1 {
		return out[0]
	}
	return out
}

// normalised are the fields whose values differ between any two brokers
// by nature: ids, timestamps, addresses. A set value becomes
// "<set>"; the zero value and -1 ("none") are kept, as they mean
// something.
var normalised = map[string]bool{
	"TopicID": true, "ProducerID": true,
	"MemberID": true, "ClusterID": true, "Host": true,
	"Port":      true,
	"Timestamp": true, "LogAppendTime": true, "Brokers": true,
	"StartTimestamp": true, "LastTimestamp": true, "CoordinatorEpoch": true,
	"TransactionStartTimeMillis": true, "FinalizedFeaturesEpoch": true,
	"Dir": true, "TotalBytes": true, "UsableBytes": true,
}

// nodeFields hold node ids. Any node id becomes "<node>" and a list of
// them "<N nodes>", -1 ("none") kept: two clusters number their leaders
// and replicas differently, but how many replicas are in sync, or whether
// a partition has a leader at all, must agree.
var nodeFields = map[string]bool{
	"NodeID": true, "Leader": true, "LeaderID": true, "ControllerID": true,
	"Replicas": true, "ISR": true, "OfflineReplicas": true,
}

// dropped are fields left out of the comparison: kmsg's own bookkeeping,
// and throttle times, which are the broker's own business whatever their
// value.
var dropped = map[string]bool{"UnknownTags": true, "ThrottleMillis": true}

// clockNumbers are the numbers of 13 digits or more in an error message:
// millisecond timestamps and bounds computed from the broker's clock
// ("Timestamp T ... should be within [LO, HI]").
var clockNumbers = regexp.MustCompile(`-?[0-9]{13,}`)

func normalise(key string, v any) any {
	if s, ok := v.(string); ok && (key == "ErrorMessage" || key == "Message") {
		return clockNumbers.ReplaceAllString(s, "<ms>")
	}
	if key == "RecordBatches" || key == "Records" {
		if s, ok := v.(string); ok {
			return fmt.Sprintf("<%d bytes base64>", len(s))
		}
		return v
	}
	if nodeFields[key] {
		return normaliseNode(v)
	}
	if normalised[key] {
		return normaliseValue(v)
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if dropped[k] {
				delete(x, k)
				continue
			}
			x[k] = normalise(k, e)
		}
		if c, ok := x["ErrorCode"].(float64); ok {
			x["ErrorCode"] = codeName(int16(c))
		}
	case []any:
		for i, e := range x {
			x[i] = normalise(key, e)
		}
	}
	return v
}

func normaliseNode(v any) any {
	switch x := v.(type) {
	case float64:
		if x >= 0 {
			return "<node>"
		}
	case []any:
		return fmt.Sprintf("<%d nodes>", len(x))
	}
	return v
}

func normaliseValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 || x == -1 {
			return x
		}
	case string:
		if x == "" {
			return x
		}
	case nil:
		return nil
	case []any:
		allZero := true
		for _, e := range x {
			if f, ok := e.(float64); !ok || f != 0 {
				allZero = false
			}
		}
		if allZero {
			return fmt.Sprintf("<%d zeros>", len(x))
		}
		if _, ok := x[0].(map[string]any); ok {
			return fmt.Sprintf("<%d set>", len(x)) // a list of brokers: how many
		}
	}
	return "<set>"
}

func codeName(c int16) string {
	if c == 0 {
		return "0"
	}
	if err := kerr.ErrorForCode(c); err != nil {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return fmt.Sprintf("%s(%d)", ke.Message, c)
		}
	}
	return fmt.Sprint(c)
}

// identity are the fields that name an element of an array: arrays of
// objects are matched by them, not by position, as brokers order topics,
// configs and partitions differently.
var identity = []string{"Topic", "Name", "Partition", "ResourceName", "ResourceType", "Group", "TransactionalID", "ApiKey", "MemberID", "ConfigName"}

func elemKey(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	var parts []string
	for _, k := range identity {
		if e, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, e))
		}
	}
	return strings.Join(parts, ","), len(parts) > 0
}

// compare appends the differing leaves of a and b under p.
func compare(p string, a, b any, out *[]diff) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		compareKeyed(am, bm, func(k string) string { return join(p, k) }, out)
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok {
		ak, akeyed := keyed(as)
		bk, bkeyed := keyed(bs)
		if akeyed && bkeyed && (len(as) > 0 || len(bs) > 0) {
			compareKeyed(ak, bk, func(k string) string { return p + "[" + k + "]" }, out)
			return
		}
		for i := range max(len(as), len(bs)) {
			var av, bv any = "<absent>", "<absent>"
			if i < len(as) {
				av = as[i]
			}
			if i < len(bs) {
				bv = bs[i]
			}
			compare(fmt.Sprintf("%s[%d]", p, i), av, bv, out)
		}
		return
	}
	sa, sb := show(a), show(b)
	if sa != sb {
		last := path.Base(strings.ReplaceAll(p, ".", "/"))
		*out = append(*out, diff{path: p, klog: sa, kafka: sb, message: last == "ErrorMessage" || last == "Message"})
	}
}

// compareKeyed compares the values of each key of either map, a key
// missing on one side shown as "<absent>"; at names a key's path.
func compareKeyed(a, b map[string]any, at func(string) string, out *[]diff) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		av, ain := a[k]
		bv, bin := b[k]
		switch {
		case !ain:
			av = "<absent>"
		case !bin:
			bv = "<absent>"
		}
		compare(at(k), av, bv, out)
	}
}

// keyed maps the elements of an array of objects by their identity, or
// reports that they have none (or repeat one).
func keyed(s []any) (map[string]any, bool) {
	m := map[string]any{}
	for _, e := range s {
		k, ok := elemKey(e)
		if !ok {
			return nil, false
		}
		if _, dup := m[k]; dup {
			return nil, false
		}
		m[k] = e
	}
	return m, true
}

func join(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// report prints the mismatch tables and the summary; the exit code is 1
// if any mismatch (or, with failMessages, message difference) is
// unexplained or a case could not set up, else 0.
func report(w io.Writer, results []result, failMessages bool) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var unexpected, expected, messages, setup, clean int
	fmt.Fprintln(tw, "CASE\tFIELD\tKLOG\tKAFKA")
	for _, r := range results {
		if r.setupErr != nil {
			setup++
			fmt.Fprintf(tw, "%s\t(setup)\t%v\t\n", r.name, r.clip(r.setupErr.Error()))
			continue
		}
		if len(r.diffs) == 0 {
			clean++
		}
		for _, d := range r.diffs {
			switch {
			case d.expectReason != "":
				expected++
			case d.message:
				messages++
			default:
				unexpected++
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.name, r.clip(d.path), r.clip(d.klog), r.clip(d.kafka))
			}
		}
	}
	_ = tw.Flush()
	if messages > 0 {
		fmt.Fprintln(w, "\nerror messages that differ (same field, other words):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CASE\tFIELD\tKLOG\tKAFKA")
		for _, r := range results {
			for _, d := range r.diffs {
				if d.message && d.expectReason == "" {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.name, r.clip(d.path), r.clip(d.klog), r.clip(d.kafka))
				}
			}
		}
		_ = tw.Flush()
	}
	if expected > 0 {
		fmt.Fprintln(w, "\nexpected differences (expected.go):")
		for _, r := range results {
			byReason := map[string][]string{}
			var reasons []string
			for _, d := range r.diffs {
				if d.expectReason != "" {
					if byReason[d.expectReason] == nil {
						reasons = append(reasons, d.expectReason)
					}
					byReason[d.expectReason] = append(byReason[d.expectReason], d.path)
				}
			}
			for _, why := range reasons {
				fmt.Fprintf(w, "  %s: %d field(s), %s: %s\n", r.name, len(byReason[why]), r.clip(strings.Join(byReason[why], " ")), why)
			}
		}
	}
	fmt.Fprintf(w, "\nprotodiff: %d cases, %d alike, %d unexplained field mismatches, %d expected, %d error messages differ, %d cases failed to set up\n",
		len(results), clean, unexpected, expected, messages, setup)
	if unexpected > 0 || setup > 0 || (failMessages && messages > 0) {
		return 1
	}
	return 0
}

// clip shortens s for the table, the run's suffix shown as RUN and long
// runs of one character elided.
func (r result) clip(s string) string {
	if r.suffix != "" {
		s = strings.ReplaceAll(s, r.suffix, "RUN")
	}
	s = strings.ReplaceAll(s, strings.Repeat("x", 240), "x{240}")
	if len(s) > 90 {
		return s[:87] + "..."
	}
	return s
}

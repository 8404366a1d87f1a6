package broker

import "sync"

// maxDeletedTopics bounds the names deletedTopics keeps.
const maxDeletedTopics = 4096

// deletedTopics are the topics this node saw deleted whose name no
// Metadata has asked to auto-create since. The first such Metadata is
// answered as Kafka answers it, UNKNOWN_TOPIC_OR_PARTITION with no
// partitions, without creating the topic (Kafka creates it in the
// background, after that answer): a client that deletes a topic and asks
// for it right after sees it gone instead of made again at once. The next
// request creates it as any other.
type deletedTopics struct {
	mu struct {
		sync.Mutex
		names map[string]struct{}
	}
}

// update records the topics of prev that next no longer holds and forgets
// those next holds again; reconcile calls it with each image's topics.
func (d *deletedTopics) update(prev, next topicConfigs) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name := range d.mu.names {
		if _, ok := next[name]; ok {
			delete(d.mu.names, name)
		}
	}
	for name := range prev {
		if _, ok := next[name]; ok {
			continue
		}
		if d.mu.names == nil {
			d.mu.names = make(map[string]struct{})
		}
		if len(d.mu.names) >= maxDeletedTopics {
			for old := range d.mu.names { // any one: a bound, not an order
				delete(d.mu.names, old)
				break
			}
		}
		d.mu.names[name] = struct{}{}
	}
}

// take reports whether name is a deleted topic no Metadata asked to
// auto-create yet, and forgets it.
func (d *deletedTopics) take(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.mu.names[name]
	delete(d.mu.names, name)
	return ok
}

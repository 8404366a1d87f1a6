package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type consumerGroup struct{}

func (cg *consumerGroup) empty() bool                                        { return true }
func (cg *consumerGroup) deadlines(add func(time.Time))                      {}
func (cg *consumerGroup) tick(now time.Time)                                 {}
func (cg *consumerGroup) validateCommit(req *kmsg.OffsetCommitRequest) int16 { return 0 }
func (cg *consumerGroup) validateFetch(id string, epoch int32) int16         { return 0 }
func (cg *consumerGroup) subscribed(out map[string]bool)                     {}
func (cg *consumerGroup) stateName() string                                  { return "Empty" }
func (cg *consumerGroup) snapshot(s *GroupSnapshot)                          {}

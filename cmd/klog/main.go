package main
import (
 _ "github.com/twmb/franz-go/pkg/kgo"
 _ "github.com/twmb/franz-go/pkg/kmsg"
 _ "github.com/twmb/franz-go/pkg/kerr"
 _ "github.com/twmb/franz-go/pkg/kadm"
 _ "github.com/spf13/cobra"
 _ "go.etcd.io/bbolt"
 _ "github.com/hashicorp/raft"
 _ "github.com/hashicorp/raft-boltdb/v2"
 _ "github.com/klauspost/compress/zstd"
 _ "github.com/pierrec/lz4/v4"
 _ "github.com/twmb/franz-go/pkg/kfake"
 _ "github.com/cockroachdb/datadriven"
)
func main(){}

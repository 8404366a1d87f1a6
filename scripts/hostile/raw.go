package main

import "github.com/klogdev/klog/scripts/internal/kwire"

// rawConn is one connection speaking the Kafka protocol by hand, for
// requests no well-behaved client sends.
type rawConn = kwire.Conn

// dialRaw connects to the node; requests left at version 0 go at the
// highest version both kmsg and the node know.
func dialRaw(n *node) (*rawConn, error) {
	return kwire.Dial(n.Addr(), "hostile", n.versions)
}

// fetchVersions asks the node which API versions it serves.
func fetchVersions(n *node) (map[int16]int16, error) {
	return kwire.Versions(n.Addr(), "hostile")
}

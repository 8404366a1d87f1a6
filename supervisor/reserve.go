package supervisor

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
)

// Reserved holds the listening sockets bound while a new cluster's ports
// were chosen, until the node that serves on each starts. The node gets
// the bound socket itself (ListenerFD), so no other process can take a
// port between the choice and the node's start: on a busy machine the
// port a free-port probe found is soon some client's ephemeral port.
// After that first start a node binds its recorded ports itself.
//
// The zero value is empty and a nil *Reserved holds nothing; its methods
// are safe for concurrent use.
type Reserved struct {
	mu  sync.Mutex
	lns map[string]*net.TCPListener // by the address a node is given
}

// hold keeps ln, bound to addr, for the node that will serve on addr.
func (r *Reserved) hold(addr string, ln net.Listener) {
	tl, ok := ln.(*net.TCPListener)
	if r == nil || !ok {
		ln.Close()
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lns == nil {
		r.lns = make(map[string]*net.TCPListener)
	}
	if old := r.lns[addr]; old != nil {
		old.Close()
	}
	r.lns[addr] = tl
}

// free binds a free port on host, holds its socket and returns the port.
func (r *Reserved) free(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("pick a free port on %s: %w", host, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	r.hold(net.JoinHostPort(host, strconv.Itoa(port)), ln)
	return port, nil
}

// take removes the socket held for addr and returns a duplicate of it
// for a child process, or nil when none is held. The caller closes the
// file once the child has started.
func (r *Reserved) take(addr string) (*os.File, error) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	ln := r.lns[addr]
	delete(r.lns, addr)
	r.mu.Unlock()
	if ln == nil {
		return nil, nil
	}
	defer ln.Close()
	f, err := ln.File()
	if err != nil {
		return nil, fmt.Errorf("pass the listener on %s to its node: %w", addr, err)
	}
	return f, nil
}

// Close releases every socket still held.
func (r *Reserved) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for addr, ln := range r.lns {
		ln.Close()
		delete(r.lns, addr)
	}
}

// Listener names of ListenerFD: the node's primary Kafka listener, its
// Raft address, its admin API, and the Kafka listeners of klog up
// --secure, by their names in the listeners config.
const (
	ListenerKafka  = "kafka"
	ListenerQuorum = "quorum"
	ListenerAdmin  = "admin"
	ListenerSecure = "SASL_SSL"
	ListenerMTLS   = "SSL"
)

// ListenerFD is the value of a node's hidden --listener-fd flag: the
// listener name and the file descriptor, in the node's process, of the
// socket its supervisor bound for it.
func ListenerFD(name string, fd int) string { return fmt.Sprintf("%s=%d", name, fd) }

// InheritedListener returns the listener a supervisor passed to this
// process as file descriptor fd.
func InheritedListener(fd int) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), fmt.Sprintf("listener-fd-%d", fd))
	if f == nil {
		return nil, fmt.Errorf("listener fd %d: not an open file", fd)
	}
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listener fd %d: %w", fd, err)
	}
	return ln, nil
}

package supervisor

import "errors"

// ErrNodeCount reports a cluster directory laid out for a different number
// of nodes than asked for.
var ErrNodeCount = errors.New("cluster has a different number of nodes")

// ErrLayoutChanged reports a --listen or --hosts that differs from the one
// the cluster directory was laid out with.
var ErrLayoutChanged = errors.New("cluster layout differs")

// ErrRunning reports a cluster directory whose supervisor is already
// running.
var ErrRunning = errors.New("cluster is already running")

// ErrNoSuchNode reports a node id that is not in the cluster.
var ErrNoSuchNode = errors.New("no such node")

// ErrNotFound reports that no running supervisor serves the addresses or
// directory asked for.
var ErrNotFound = errors.New("no running local cluster found")

// ErrStartFailed reports a node that exited or did not become ready.
var ErrStartFailed = errors.New("node failed to start")

// ErrUnsupported reports an act the operating system cannot do (SIGSTOP on
// Windows).
var ErrUnsupported = errors.New("not supported on this operating system")

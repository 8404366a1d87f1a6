package main

import (
	"errors"
	"testing"
)

// A /proc/net/tcp table: the node listens on 127.0.0.1:9092 (0x2384);
// clients 40000 (0x9C40) and 40001 (0x9C41) have closed (the node's side
// is CLOSE-WAIT, 08), 40002 (0x9C42) is established (01), and a socket
// on another local port is in CLOSE-WAIT towards 40000.
const tcpTable = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2384 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:2384 0100007F:9C40 08 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:2384 0100007F:9C41 08 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:2384 0100007F:9C42 01 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 20 4 30 10 -1
   4: 0100007F:1F90 0100007F:9C40 08 00000000:00000000 00:00000000 00000000     0        0 5 1 0000000000000000 20 4 30 10 -1
`

func TestCountCloseWait(t *testing.T) {
	for _, c := range []struct {
		ports map[int]bool
		want  int
	}{
		{map[int]bool{40000: true, 40001: true, 40002: true}, 2},
		{map[int]bool{40001: true}, 1},
		{map[int]bool{40002: true}, 0},
		{nil, 0},
	} {
		got, err := countCloseWait([]byte(tcpTable), 9092, c.ports)
		if err != nil || got != c.want {
			t.Errorf("ports %v: %d, %v; want %d", c.ports, got, err, c.want)
		}
	}
	bad := tcpTable + "   5: 0100007F:2384 0100007F:ZZZZ 08 0\n"
	if _, err := countCloseWait([]byte(bad), 9092, nil); !errors.Is(err, errBadProc) {
		t.Errorf("bad port: %v, want errBadProc", err)
	}
}

package nodeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultAddr is the admin API of klog up's first node.
const DefaultAddr = "127.0.0.1:9644"

// maxResponseBytes bounds an answer read by a Client.
const maxResponseBytes = 64 << 20

// Client calls one node's admin API.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client of the admin API at addr: host:port, or a
// URL (http://host:port). Each call is bounded by its context and by
// timeout (0: 30 s).
func NewClient(addr string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	base := strings.TrimSuffix(addr, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return &Client{base: base, http: &http.Client{Timeout: timeout}}
}

// Addr is the address the client calls.
func (c *Client) Addr() string { return strings.TrimPrefix(c.base, "http://") }

// StatusError is an error answer of the API.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string { return e.Message }

// IsNotFound reports whether err is a 404 answer: an unknown topic or
// partition.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status == http.StatusNotFound
}

// Node is GET /v1/node.
func (c *Client) Node(ctx context.Context) (Node, error) {
	var out Node
	return out, c.call(ctx, http.MethodGet, PathNode, nil, &out)
}

// Cleaner is GET /v1/cleaner.
func (c *Client) Cleaner(ctx context.Context) (Cleaner, error) {
	var out Cleaner
	return out, c.call(ctx, http.MethodGet, PathCleaner, nil, &out)
}

// Compact is POST /v1/topics/{topic}/compact: partition -1 for every
// partition of the topic the node has.
func (c *Client) Compact(ctx context.Context, topic string, partition int32, dryRun bool) (Compaction, error) {
	q := url.Values{}
	if partition >= 0 {
		q.Set("partition", strconv.Itoa(int(partition)))
	}
	if dryRun {
		q.Set("dry_run", "true")
	}
	var out Compaction
	return out, c.call(ctx, http.MethodPost, CompactPath(topic), q, &out)
}

func (c *Client) call(ctx context.Context, method, path string, q url.Values, out any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("admin API %s: %w", c.Addr(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("admin API %s: %s %s: %w", c.Addr(), method, path, err)
	}
	if len(body) > maxResponseBytes {
		return fmt.Errorf("admin API %s: %s %s: answer larger than %d bytes", c.Addr(), method, path, maxResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return &StatusError{Status: resp.StatusCode, Message: fmt.Sprintf("admin API %s: %s", c.Addr(), e.Error)}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("admin API %s: %s %s: %w", c.Addr(), method, path, err)
	}
	return nil
}

func escapePath(s string) string { return url.PathEscape(s) }

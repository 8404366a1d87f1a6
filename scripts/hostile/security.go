package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/devca"
	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/scripts/internal/kwire"
)

// Security probes (issue 30's bad input): a node with a SASL_PLAINTEXT
// listener (PLAIN and SCRAM-SHA-512) and an SSL listener beside its
// PLAINTEXT one, attacked with bad logins and TLS handshakes that never
// finish, while an authenticated SCRAM client keeps producing.
const (
	plainAdmin, plainAdminPass = "admin", "admin-secret"
	scramUser, scramPass       = "alice", "alice-secret"
	// saslMaxReceive is the node's bound on a frame before a connection
	// authenticated (Kafka's sasl.server.max.receive.size default).
	saslMaxReceive = 524288
	floodConns     = 8                     // connections failing to log in at once
	floodFor       = 8 * time.Second       // how long they keep at it
	stalledTLS     = 100                   // TLS handshakes that never finish
	tlsTimeout     = 2 * time.Second       // the node's progress timeout, which bounds a handshake
	tlsCloseBound  = 10 * time.Second      // by when every stalled handshake must be closed
	producePace    = 20 * time.Millisecond // between two records of the SCRAM producer
)

// security is where a secure node's extra listeners are.
type security struct {
	sasl, ssl string // SASL_PLAINTEXT and SSL listener addresses
	roots     *x509.CertPool
}

// secureOpts adds to opts a SASL_PLAINTEXT and an SSL listener on free
// ports, with a dev CA written under dir.
func secureOpts(dir string, opts nodeOpts) (nodeOpts, *security, error) {
	ca, err := devca.Ensure(filepath.Join(dir, "ca"), nil, []int32{0})
	if err != nil {
		return opts, nil, err
	}
	pem, err := os.ReadFile(ca.CA)
	if err != nil {
		return opts, nil, err
	}
	sec := &security{
		sasl:  fmt.Sprintf("127.0.0.1:%d", klogproc.FreePort()),
		ssl:   fmt.Sprintf("127.0.0.1:%d", klogproc.FreePort()),
		roots: x509.NewCertPool(),
	}
	sec.roots.AppendCertsFromPEM(pem)
	opts.listeners = []string{"SASL_PLAINTEXT://" + sec.sasl, "SSL://" + sec.ssl}
	opts.configs = append(slices.Clone(opts.configs),
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
		fmt.Sprintf(`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_%s="%s";`, plainAdmin, plainAdminPass),
		"ssl.keystore.type=PEM",
		"ssl.keystore.location="+ca.Nodes[0].PEM,
		fmt.Sprintf("socket.request.progress.timeout.ms=%d", tlsTimeout.Milliseconds()),
	)
	return opts, sec, nil
}

// saslLogins: wrong passwords, a wrong SCRAM proof, a replayed nonce, a
// truncated and an oversized token, a disabled mechanism and a request
// before authentication each get Kafka's error or a closed connection;
// a flood of failed logins leaves an authenticated producer served,
// and the node's memory and descriptors where they were.
func saslLogins(p *run) {
	if err := createScramUser(p.ctx, p.n); err != nil {
		p.failf("creating the SCRAM user: %v", err)
		return
	}
	sec := p.n.sec
	for _, c := range []struct {
		name string
		try  func(addr string) (string, error)
	}{
		{"plain-wrong-password", func(a string) (string, error) { return plainLogin(a, plainAdmin, "wrong") }},
		{"plain-unknown-user", func(a string) (string, error) { return plainLogin(a, "mallory", plainAdminPass) }},
		{"scram-wrong-proof", func(a string) (string, error) { return scramLogin(a, scramUser, "wrong", nil) }},
		{"scram-replayed-nonce", replayedNonce},
		{"scram-truncated", func(a string) (string, error) { return tokenAfterHandshake(a, "SCRAM-SHA-512", []byte("n,,n=ali")) }},
		{"oversized-token", func(a string) (string, error) {
			return tokenAfterHandshake(a, "SCRAM-SHA-512", make([]byte, saslMaxReceive+1))
		}},
		{"disabled-mechanism", func(a string) (string, error) { return handshakeOnly(a, "GSSAPI") }},
		{"before-auth", requestBeforeAuth},
	} {
		got, err := c.try(sec.sasl)
		if err != nil {
			p.failf("%s: %v", c.name, err)
			continue
		}
		p.codeText(c.name, got)
	}
	if got, err := scramLogin(sec.sasl, scramUser, scramPass, nil); err != nil || got != "NONE" {
		p.failf("the right SCRAM password: %s %v", got, err)
	}
	loginFlood(p)
	p.checkRSS()
}

// createScramUser gives scramUser SCRAM-SHA-512 credentials.
func createScramUser(ctx context.Context, n *node) error {
	return adminAt(ctx, n.Addr(), func(ctx context.Context, adm *kadm.Client) error {
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{
			User: scramUser, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: scramPass,
		}})
		if err == nil {
			err = res[scramUser].Err
		}
		return err
	})
}

// saslConn connects to addr and sends a SaslHandshake v1 for mechanism;
// it returns the connection and the handshake's error code.
func saslConn(addr, mechanism string) (*rawConn, int16, error) {
	r, err := klogDial(addr)
	if err != nil {
		return nil, 0, err
	}
	resp, _, err := r.Do(kwire.SASLHandshake(mechanism), clientTimeout)
	if err != nil {
		r.Close()
		return nil, 0, fmt.Errorf("SaslHandshake %s: %w", mechanism, err)
	}
	return r, resp.(*kmsg.SASLHandshakeResponse).ErrorCode, nil
}

// klogDial opens a raw connection that sends each request at the version
// it was given.
func klogDial(addr string) (*rawConn, error) { return kwire.Dial(addr, "hostile", nil) }

// authenticate sends one SaslAuthenticate v2 token and returns the answer.
func authenticate(r *rawConn, token []byte) (*kmsg.SASLAuthenticateResponse, error) {
	resp, _, err := r.Do(kwire.SASLAuthenticate(token), clientTimeout)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.SASLAuthenticateResponse), nil
}

// failed names a failed authentication's answer and checks the node then
// closed the connection, as Kafka does.
func failed(r *rawConn, code int16) (string, error) {
	if code == 0 {
		return "NONE", nil
	}
	if !r.ClosedWithin(clientTimeout) {
		return "", fmt.Errorf("%s answered, then the connection stayed open %s", codeName(code), clientTimeout)
	}
	return codeName(code) + "+closed", nil
}

// plainLogin authenticates with PLAIN.
func plainLogin(addr, user, pass string) (string, error) {
	r, code, err := saslConn(addr, "PLAIN")
	if err != nil {
		return "", err
	}
	defer r.Close()
	if code != 0 {
		return "", fmt.Errorf("PLAIN handshake: %s", codeName(code))
	}
	resp, err := authenticate(r, []byte("\x00"+user+"\x00"+pass))
	if err != nil {
		return "", err
	}
	return failed(r, resp.ErrorCode)
}

// scramLogin runs a SCRAM-SHA-512 exchange as user with pass. With final
// set, the client's final message replaces the one pass computes: a
// replay of another conversation's. It returns the outcome and, through
// sent, the final message the client sent.
func scramLogin(addr, user, pass string, final []byte, sent ...*[]byte) (string, error) {
	r, code, err := saslConn(addr, "SCRAM-SHA-512")
	if err != nil {
		return "", err
	}
	defer r.Close()
	if code != 0 {
		return "", fmt.Errorf("SCRAM handshake: %s", codeName(code))
	}
	sess, first, err := scram.Auth{User: user, Pass: pass}.AsSha512Mechanism().Authenticate(context.Background(), addr)
	if err != nil {
		return "", err
	}
	resp, err := authenticate(r, first)
	if err != nil || resp.ErrorCode != 0 {
		return codeOf(resp), err
	}
	_, msg, err := sess.Challenge(resp.SASLAuthBytes)
	if err != nil {
		return "", err
	}
	if final != nil {
		msg = final
	}
	if len(sent) > 0 {
		*sent[0] = msg
	}
	if resp, err = authenticate(r, msg); err != nil {
		return "", err
	}
	return failed(r, resp.ErrorCode)
}

// codeOf names resp's error code.
func codeOf(resp *kmsg.SASLAuthenticateResponse) string {
	if resp == nil {
		return "-"
	}
	return codeName(resp.ErrorCode)
}

// replayedNonce logs in rightly, then sends that conversation's final
// message in a new one, whose server nonce differs.
func replayedNonce(addr string) (string, error) {
	var final []byte
	if got, err := scramLogin(addr, scramUser, scramPass, nil, &final); err != nil || got != "NONE" {
		return "", fmt.Errorf("the first, right, login: %s %v", got, err)
	}
	return scramLogin(addr, scramUser, scramPass, final)
}

// tokenAfterHandshake sends token as the first of mechanism's exchange.
// An answer must be a failure with the connection closed after it; a
// frame beyond what the node reads before authentication closes the
// connection without one.
func tokenAfterHandshake(addr, mechanism string, token []byte) (string, error) {
	r, code, err := saslConn(addr, mechanism)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if code != 0 {
		return "", fmt.Errorf("%s handshake: %s", mechanism, codeName(code))
	}
	resp, err := authenticate(r, token)
	if err != nil {
		if errors.Is(err, io.EOF) || isReset(err) {
			return "closed", nil
		}
		return "", err
	}
	if resp.ErrorCode == 0 {
		return "", errors.New("the token was accepted")
	}
	return failed(r, resp.ErrorCode)
}

// isReset reports a connection the node reset.
func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

// handshakeOnly asks for mechanism; a disabled one is answered
// UNSUPPORTED_SASL_MECHANISM with the enabled ones listed.
func handshakeOnly(addr, mechanism string) (string, error) {
	r, err := klogDial(addr)
	if err != nil {
		return "", err
	}
	defer r.Close()
	resp, _, err := r.Do(kwire.SASLHandshake(mechanism), clientTimeout)
	if err != nil {
		return "", err
	}
	hr := resp.(*kmsg.SASLHandshakeResponse)
	if hr.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Contains(hr.SupportedMechanisms, "SCRAM-SHA-512") {
		return "", fmt.Errorf("answered %s, mechanisms %v", codeName(hr.ErrorCode), hr.SupportedMechanisms)
	}
	return codeName(hr.ErrorCode), nil
}

// requestBeforeAuth sends a Metadata request before any SASL: the node
// closes the connection, as Kafka does.
func requestBeforeAuth(addr string) (string, error) {
	r, err := klogDial(addr)
	if err != nil {
		return "", err
	}
	defer r.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	if err := r.Send(req); err != nil {
		return "", err
	}
	if !r.ClosedWithin(clientTimeout) {
		return "", fmt.Errorf("the connection stayed open %s", clientTimeout)
	}
	return "closed", nil
}

// loginFlood runs floodConns connections failing to log in, each again
// as soon as the node closed it, for floodFor, while a SCRAM-authenticated
// producer sends one record at a time; its latency before and during the
// flood is reported, and every record must be acknowledged.
func loginFlood(p *run) {
	const topic = "hostile-scram"
	if err := createTopic(p.ctx, p.n, topic, 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.n.sec.sasl), kgo.DefaultProduceTopic(topic),
		kgo.SASL(scram.Auth{User: scramUser, Pass: scramPass}.AsSha512Mechanism()))
	if err != nil {
		p.failf("%v", err)
		return
	}
	defer cl.Close()
	_, fds0 := p.n.sampler().now()
	// The first record pays for the connection and the login.
	_, err = produceLatencies(p.ctx, cl, 1)
	var before []time.Duration
	if err == nil {
		before, err = produceLatencies(p.ctx, cl, 50)
	}
	if err != nil {
		p.failf("the SCRAM producer before the flood: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, floodFor)
	defer cancel()
	var attempts, refused atomic.Int64
	var wg sync.WaitGroup
	for range floodConns {
		wg.Go(func() {
			for ctx.Err() == nil {
				attempts.Add(1)
				if got, err := plainLogin(p.n.sec.sasl, plainAdmin, "guess"); err == nil && got != "NONE" {
					refused.Add(1)
				}
			}
		})
	}
	var during []time.Duration
	for ctx.Err() == nil {
		d, err := produceLatencies(p.ctx, cl, 1)
		if err != nil {
			p.failf("the SCRAM producer during the flood: %v", err)
			break
		}
		during = append(during, d...)
	}
	wg.Wait()
	p.notef("%d failed logins refused of %d in %s over %d connections; SCRAM produce p50 %s p99 %s before, p50 %s p99 %s during (%d records)",
		refused.Load(), attempts.Load(), floodFor, floodConns, quantile(before, 0.5), quantile(before, 0.99),
		quantile(during, 0.5), quantile(during, 0.99), len(during))
	// Normal latency: the median acknowledgement during the flood within
	// a few times the one before, with room for a loaded machine's jitter.
	if p50, bound := quantile(during, 0.5), 4*quantile(before, 0.5)+10*time.Millisecond; p50 > bound {
		p.failf("the SCRAM producer's median latency %s during the flood, more than %s (4x its %s before, plus 10ms)", p50, bound, quantile(before, 0.5))
	}
	if refused.Load() != attempts.Load() {
		p.failf("%d of %d bad logins not refused with a closed connection", attempts.Load()-refused.Load(), attempts.Load())
	}
	p.descriptorsBack(fds0, "after the login flood")
}

// produceLatencies produces count records one at a time with cl and
// returns how long each took to be acknowledged.
func produceLatencies(ctx context.Context, cl *kgo.Client, count int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, count)
	for range count {
		ctx, cancel := context.WithTimeout(ctx, clientTimeout)
		start := time.Now()
		err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("scram")}).FirstErr()
		cancel()
		if err != nil {
			return out, err
		}
		out = append(out, time.Since(start))
		time.Sleep(producePace) // a producer's pace, not a wait for a condition
	}
	return out, nil
}

// quantile is the q quantile of ds, rounded to 0.1 ms.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(100 * time.Microsecond)
}

// descriptorsBack waits until the node holds at most a few descriptors
// more than fds0 (the attack's connections closed), and fails the probe
// if it does not within tlsCloseBound.
func (p *run) descriptorsBack(fds0 int, when string) {
	const slack = 16 // the canary's and the SCRAM producer's connections, the log's files
	deadline := time.Now().Add(tlsCloseBound)
	for {
		_, fds := p.n.sampler().now()
		if fds <= fds0+slack {
			p.notef("%d descriptors %s (%d before)", fds, when, fds0)
			return
		}
		if time.Now().After(deadline) {
			p.failf("%d descriptors %s %s later, %d before", fds, when, tlsCloseBound, fds0)
			return
		}
		time.Sleep(100 * time.Millisecond) // a poll of the node's descriptor count, bounded above
	}
}

// tlsHandshakes: stalledTLS connections to the SSL listener that send
// nothing, or the start of a ClientHello and then nothing, are closed by
// the node within its progress timeout; a client with the CA's trust
// completes its handshake and is served meanwhile.
func tlsHandshakes(p *run) {
	_, fds0 := p.n.sampler().now()
	partial := []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01} // a handshake record claiming 512 bytes, then one
	conns := make([]net.Conn, 0, stalledTLS)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range stalledTLS {
		c, err := net.DialTimeout("tcp", p.n.sec.ssl, clientTimeout)
		if err != nil {
			p.failf("connection %d: %v", i, err)
			return
		}
		conns = append(conns, c)
		if i%2 == 1 {
			_, _ = c.Write(partial)
		}
	}
	start := time.Now()
	served := tlsServed(p)
	var open int
	for _, c := range conns {
		_ = c.SetReadDeadline(start.Add(tlsCloseBound))
		var b [64]byte
		for {
			n, err := c.Read(b[:])
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					open++
				}
				break
			}
			_ = n // an alert before the close is fine
		}
	}
	p.codeText("stalled-handshakes", fmt.Sprintf("%d-of-%d-closed", stalledTLS-open, stalledTLS))
	p.notef("%d stalled TLS handshakes closed in %.1fs (progress timeout %s); a trusted client served: %v",
		stalledTLS-open, time.Since(start).Seconds(), tlsTimeout, served)
	if open > 0 {
		p.failf("%d of %d stalled TLS handshakes still open after %s", open, stalledTLS, tlsCloseBound)
	}
	p.descriptorsBack(fds0, "after the stalled handshakes")
}

// tlsServed asks the SSL listener for metadata with a client trusting the
// dev CA, and fails the probe if it is not answered.
func tlsServed(p *run) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.n.sec.ssl), kgo.DialTLSConfig(&tls.Config{RootCAs: p.n.sec.roots}), kgo.RequestRetries(0))
	if err != nil {
		p.failf("%v", err)
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(p.ctx, clientTimeout)
	defer cancel()
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err != nil {
		p.failf("a trusted TLS client during the stalled handshakes: %v", err)
		return false
	}
	return true
}

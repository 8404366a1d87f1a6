package wire

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"strings"
)

// TLSFailure is why a connection was refused at its TLS handshake, for
// the node's security events: a developer whose client cannot connect to
// an SSL listener sees which side refused what.
type TLSFailure struct {
	// Reason is a short, fixed phrase, the same for every failure of its
	// kind; Err the handshake's own error.
	Reason string
	Err    error
	// Subject is the client certificate's subject, when it sent one.
	Subject string
}

// principalError is a connection refused by ServerConfig.TLSPrincipal.
type principalError struct {
	err     error
	subject string
}

func (e *principalError) Error() string {
	return "principal of the client certificate: " + e.err.Error()
}
func (e *principalError) Unwrap() error { return e.err }

// peerSubject is the subject of the client's certificate, "" without one.
func peerSubject(cs tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return ""
	}
	return cs.PeerCertificates[0].Subject.String()
}

// classifyTLSFailure says why a handshake failed; false for a connection
// that closed before sending anything.
func classifyTLSFailure(err error) (TLSFailure, bool) {
	f := TLSFailure{Err: err}
	var (
		pe     *principalError
		header tls.RecordHeaderError
		alert  tls.AlertError
		unk    x509.UnknownAuthorityError
		inv    x509.CertificateInvalidError
	)
	msg := err.Error()
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) && len(verify.UnverifiedCertificates) > 0 {
		f.Subject = verify.UnverifiedCertificates[0].Subject.String()
	}
	switch {
	case errors.Is(err, io.EOF) && !strings.Contains(msg, "unexpected"):
		return f, false
	case errors.As(err, &pe):
		f.Reason, f.Subject = "no principal for the client certificate (ssl.principal.mapping.rules)", pe.subject
	case errors.As(err, &header):
		f.Reason = "not TLS: the client spoke another protocol to an SSL listener (security.protocol PLAINTEXT or SASL_PLAINTEXT?)"
	case errors.As(err, &unk):
		f.Reason = "client certificate not signed by a CA of the truststore"
	case errors.As(err, &inv):
		f.Reason = "client certificate not valid (expired, not yet valid, or not for client authentication)"
	case strings.Contains(msg, "didn't provide a certificate"):
		f.Reason = "no client certificate (ssl.client.auth=required)"
	case errors.As(err, &alert) || strings.Contains(msg, "remote error"):
		f.Reason = "the client refused the handshake (does its truststore hold the broker's CA, and its TLS version and suites match?)"
	case errors.Is(err, os.ErrDeadlineExceeded) || strings.Contains(msg, "context deadline exceeded"):
		f.Reason = "handshake not finished within socket.request.progress.timeout.ms"
	default:
		f.Reason = "handshake failed"
	}
	return f, true
}

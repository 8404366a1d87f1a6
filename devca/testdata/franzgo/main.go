// A franz-go client of a klog up --secure cluster over SASL_SSL: it
// trusts the dev CA and logs in with SCRAM. Run it with go run.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const (
	bootstrap = "127.0.0.1:9093"
	caFile    = "/path/to/ca.pem"
	user      = "app"
	password  = "app-secret"
)

func main() {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		log.Fatalf("%s holds no certificate", caFile)
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.DialTLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: user, Pass: password}.AsSha512Mechanism()),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		log.Fatal(err)
	}
	log.Printf("connected to %s as %s", bootstrap, user)
}

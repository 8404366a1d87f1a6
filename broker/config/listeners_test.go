package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestListeners(t *testing.T) {
	for _, tc := range []struct {
		name    string
		configs map[string]string
		want    []Listener
		ib      string
		// ctrl is the controller listener, none when its Name is "".
		ctrl Listener
		err  string
	}{
		{name: "default", want: []Listener{{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "127.0.0.1:9092"}}, ib: "PLAINTEXT"},
		{name: "two", configs: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0, SASL_SSL://:9093", "advertised.listeners": "SASL_SSL://kafka.example:19093"},
			want: []Listener{{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "127.0.0.1:0"}, {Name: "SASL_SSL", Protocol: "SASL_SSL", Addr: ":9093", Advertised: "kafka.example:19093"}}, ib: "PLAINTEXT"},
		{name: "custom names", configs: map[string]string{"listeners": "client://[::1]:1,INTERNAL://127.0.0.1:2", "listener.security.protocol.map": "CLIENT:SASL_SSL,INTERNAL:SSL", "inter.broker.listener.name": "internal"},
			want: []Listener{{Name: "CLIENT", Protocol: "SASL_SSL", Addr: "[::1]:1"}, {Name: "INTERNAL", Protocol: "SSL", Addr: "127.0.0.1:2"}}, ib: "INTERNAL"},
		{name: "by protocol", configs: map[string]string{"listeners": "SSL://127.0.0.1:1", "security.inter.broker.protocol": "SSL"},
			want: []Listener{{Name: "SSL", Protocol: "SSL", Addr: "127.0.0.1:1"}}, ib: "SSL"},
		{name: "no protocol", configs: map[string]string{"listeners": "CLIENT://127.0.0.1:1"}, err: "no security protocol"},
		{name: "no inter-broker", configs: map[string]string{"listeners": "SSL://127.0.0.1:1"}, err: "inter-broker listener PLAINTEXT"},
		{name: "twice", configs: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:1,PLAINTEXT://127.0.0.1:2"}, err: "twice"},
		{name: "bad form", configs: map[string]string{"listeners": "127.0.0.1:1"}, err: "NAME://HOST:PORT"},
		{name: "advertised unknown", configs: map[string]string{"advertised.listeners": "SSL://h:1"}, err: "which listeners does not"},
		{name: "advertised wildcard", configs: map[string]string{"advertised.listeners": "PLAINTEXT://0.0.0.0:1"}, err: "advertise a host"},
		{name: "bad map", configs: map[string]string{"listener.security.protocol.map": "A:TLS"}, err: "no security protocol TLS"},
		{name: "controller listener of Kafka's config", configs: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2", "controller.listener.names": "controller"},
			want: []Listener{{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "127.0.0.1:1"}}, ib: "PLAINTEXT", ctrl: Listener{Name: "CONTROLLER", Protocol: "PLAINTEXT"}},
		{name: "controller listener SSL", configs: map[string]string{"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL"},
			want: []Listener{{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "127.0.0.1:9092"}}, ib: "PLAINTEXT", ctrl: Listener{Name: "CONTROLLER", Protocol: "SSL"}},
		{name: "controller listener not mapped", configs: map[string]string{"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"}, err: "no security protocol"},
		{name: "controller listener SASL", configs: map[string]string{"controller.listener.names": "SASL_SSL"}, err: "not SASL"},
		{name: "two controller listeners", configs: map[string]string{"controller.listener.names": "A,B"}, err: "one listener"},
		{name: "controller listener at the voter's port", configs: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:1,CONTROLLER://:9093", "controller.listener.names": "CONTROLLER",
			"node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094"},
			want: []Listener{{Name: "PLAINTEXT", Protocol: "PLAINTEXT", Addr: "127.0.0.1:1"}}, ib: "PLAINTEXT", ctrl: Listener{Name: "CONTROLLER", Protocol: "PLAINTEXT"}},
		{name: "controller listener elsewhere", configs: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:1,CONTROLLER://:9095", "controller.listener.names": "CONTROLLER",
			"node.id": "1", "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094"}, err: "voters entry, 127.0.0.1:9093"},
		{name: "only the controller listener", configs: map[string]string{"listeners": "CONTROLLER://127.0.0.1:2", "controller.listener.names": "CONTROLLER"}, err: "only the controller listener"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBroker(tc.configs)
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want ErrInvalidValue with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Listeners()
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Listeners() = %+v, %v; want %+v", got, err, tc.want)
			}
			if ib := b.InterBrokerListener(); ib != tc.ib {
				t.Errorf("inter-broker listener %s, want %s", ib, tc.ib)
			}
			if ctrl, ok := b.ControllerListener(); ctrl != tc.ctrl || ok != (tc.ctrl.Name != "") {
				t.Errorf("controller listener %+v, %v; want %+v", ctrl, ok, tc.ctrl)
			}
		})
	}
}

// TestListenerScopedConfigs checks Kafka's per-listener overrides,
// listener.name.<name>.<config>: validated as their config, and seen
// only by their listener.
func TestListenerScopedConfigs(t *testing.T) {
	b, err := ParseBroker(map[string]string{
		"ssl.client.auth":                              "requested",
		"listener.name.client.ssl.client.auth":         "required",
		"listener.name.client.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.client.ssl.keystore.password":   "secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	// Per listener and SASL mechanism, as Kafka's OAUTHBEARER configs.
	if _, err := ParseBroker(map[string]string{
		"listener.name.client.oauthbearer.sasl.oauthbearer.jwks.endpoint.url": "https://issuer.example/jwks",
		"listener.name.client.oauthbearer.sasl.server.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
	}); err != nil {
		t.Errorf("per-mechanism SASL configs: %v", err)
	}
	if v, _ := b.ListenerValue("CLIENT", "ssl.client.auth"); v != "required" {
		t.Errorf("CLIENT's ssl.client.auth = %q, want required", v)
	}
	if v, _ := b.ListenerValue("OTHER", "ssl.client.auth"); v != "requested" {
		t.Errorf("OTHER's ssl.client.auth = %q, want requested", v)
	}
	if v, ok := b.BrokerValue("listener.name.client.ssl.keystore.password"); !ok || !v.Sensitive || v.Value != "" {
		t.Errorf("a per-listener password is described as %+v; want sensitive and hidden", v)
	}
	listed := map[string]Value{}
	for _, v := range b.BrokerValues() {
		listed[v.Name] = v
	}
	if v, ok := listed["listener.name.client.ssl.client.auth"]; !ok || v.Value != "required" || v.Source != SourceStaticBrokerConfig {
		t.Errorf("BrokerValues lists the override as %+v (listed %v), want required, static", v, ok)
	}
	if v := listed["listener.name.client.ssl.keystore.password"]; !v.Sensitive || v.Value != "" || !v.Null {
		t.Errorf("BrokerValues lists a per-listener password as %+v, want null and sensitive", v)
	}
	for _, bad := range []map[string]string{
		{"listener.name.client.ssl.client.auth": "always"},
		{"listener.name.client.log.retention.ms": "1"},
		{"listener.name.CLIENT.ssl.client.auth": "none"},
		{"listener.name.client.oauthbearer.log.retention.ms": "1"},
		{"listener.name.client.oauthbearer.sasl.oauthbearer.clock.skew.seconds": "-1"},
	} {
		if _, err := ParseBroker(bad); err == nil {
			t.Errorf("ParseBroker(%v) took it", bad)
		}
	}
}

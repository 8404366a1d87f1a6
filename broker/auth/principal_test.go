package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"testing"
)

func TestPrincipalRulesParse(t *testing.T) {
	for _, ok := range []string{
		"",
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,\nRULE:^CN=(.*?),OU=(.*?).*$/$1@$2/L,\nDEFAULT",
		`RULE:^CN=([^,]*)\/x,.*$/$1/`,
	} {
		if _, err := ParsePrincipalRules(ok); err != nil {
			t.Errorf("ParsePrincipalRules(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:CN=(.*?),OU=ServiceUsers.*/$1/",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1/L/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/L",
		"RULE:CN=(.*?),OU=ServiceUsers.*/LU",
		"RULE:CN=(/$1/",
	} {
		if _, err := ParsePrincipalRules(bad); err == nil {
			t.Errorf("ParsePrincipalRules(%q) took it", bad)
		}
	}
}

func TestPrincipalRulesMap(t *testing.T) {
	rules := "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L," +
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,DEFAULT"
	pr, err := ParsePrincipalRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dn, want string }{
		{"CN=Duke,OU=ServiceUsers,O=Org,C=US", "Duke"},
		{"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"},
		{"cn=duke,ou=JavaSoft,dc=mycp,dc=com", "DUKE@JAVASOFT"},
		{"cN=duke,OU=JavaSoft,O=mycp", "DUKE"},
		{"OU=JavaSoft,O=mycp,C=US", "OU=JavaSoft,O=mycp,C=US"},
	} {
		if got, err := pr.Map(tc.dn); err != nil || got != tc.want {
			t.Errorf("Map(%q) = %q, %v; want %q", tc.dn, got, err, tc.want)
		}
	}
	only, _ := ParsePrincipalRules("RULE:^CN=(.*)$/$1/")
	if _, err := only.Map("O=x"); !errors.Is(err, ErrNoPrincipalRule) {
		t.Errorf("a subject no rule maps: %v, want ErrNoPrincipalRule", err)
	}
	dollar, _ := ParsePrincipalRules(`RULE:^CN=(.*)$/\$$1/`)
	if got, _ := dollar.Map("CN=a"); got != "$a" {
		t.Errorf(`an escaped dollar maps to %q, want "$a"`, got)
	}
}

func TestCertificatePrincipal(t *testing.T) {
	pr, _ := ParsePrincipalRules("RULE:^CN=([^,]*),.*$/$1/L,DEFAULT")
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "Alice", Organization: []string{"klog"}}}
	if p, err := CertificatePrincipal(cert, pr); err != nil || p != "User:alice" {
		t.Errorf("CertificatePrincipal = %q, %v; want User:alice", p, err)
	}
	if p, _ := CertificatePrincipal(nil, pr); p != "User:ANONYMOUS" {
		t.Errorf("without a certificate: %q, want User:ANONYMOUS", p)
	}
}

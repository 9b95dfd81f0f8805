package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
)

// mapResolver answers from a table; a name not in it does not exist.
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// TestAddressPolicy is the SSRF table: every range a webhook must not
// reach, in production and in a sandbox that allows private addresses.
func TestAddressPolicy(t *testing.T) {
	t.Parallel()
	prod, sandbox := addressPolicy{}, addressPolicy{allowPrivate: true}
	for _, tc := range []struct {
		addr            string
		prodOK, sandbox bool
	}{
		{"93.184.215.14", true, true},
		{"8.8.8.8", true, true},
		{"2606:4700:4700::1111", true, true},
		{"127.0.0.1", false, true},
		{"127.1.2.3", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"10.0.0.1", false, true},
		{"172.16.5.4", false, true},
		{"172.31.255.255", false, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"fd12:3456::1", false, true},
		{"fec0::1", false, true},
		{"169.254.169.254", false, false},
		{"169.254.1.1", false, false},
		{"fe80::1", false, false},
		{"fe80::1%eth0", false, false},
		{"fd00:ec2::254", false, false},
		{"fd00:ec2::253", false, false},
		{"fd00:ec2::23", false, false},
		{"100.100.100.200", false, false},
		{"168.63.129.16", false, false},
		{"::ffff:168.63.129.16", false, false},
		{"64:ff9b::a83f:8110", false, false}, // NAT64 of 168.63.129.16
		{"2002:a83f:8110::1", false, false},  // 6to4 of 168.63.129.16
		{"168.63.129.15", true, true},
		{"168.63.129.17", true, true},
		{"fd20:ce::254", false, false},
		{"fd00:a9fe:a9fe::1", false, false},
		{"169.254.170.2", false, false},
		{"169.254.42.42", false, false},
		{"169.254.0.23", false, false},
		{"192.0.0.192", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"ff02::1", false, false},
		{"255.255.255.255", false, false},
		{"240.0.0.1", false, false},
		{"192.0.2.1", false, false},
		{"198.51.100.7", false, false},
		{"203.0.113.9", false, false},
		{"198.18.0.1", false, false},
		{"2001:db8::1", false, false},
		{"2001::1", false, false},
		{"100::1", false, false},
		{"64:ff9b::7f00:1", false, true},    // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", true, true},    // NAT64 of 8.8.8.8
		{"2002:a9fe:a9fe::1", false, false}, // 6to4 of 169.254.169.254
		{"2002:0808:0808::1", true, true},   // 6to4 of 8.8.8.8
		{"64:ff9b:1::1", false, false},
		{"1::", false, false},
		{"4000::1", false, false},
		{"::ffff:169.254.169.254", false, false},
	} {
		a := netip.MustParseAddr(tc.addr)
		if err := prod.check(a); (err == nil) != tc.prodOK {
			t.Errorf("production %s: %v, want allowed=%v", tc.addr, err, tc.prodOK)
		}
		if err := sandbox.check(a); (err == nil) != tc.sandbox {
			t.Errorf("private sandbox %s: %v, want allowed=%v", tc.addr, err, tc.sandbox)
		}
	}
}

// TestCheckWebhookURL: the URLs refused at registration, with the field
// named, in each environment.
func TestCheckWebhookURL(t *testing.T) {
	t.Parallel()
	res := mapResolver{
		"hooks.example.com":            {"93.184.215.14"},
		"dual.example.com":             {"93.184.215.14", "10.0.0.5"},
		"metadata.google.internal":     {"169.254.169.254"},
		"internal.example.com":         {"192.168.0.10"},
		"v6.example.com":               {"2606:4700:4700::1111"},
		"localhost":                    {"127.0.0.1"},
		"wire.example.com":             {"93.184.215.14", "168.63.129.16"},
		"imds6.example.com":            {"fd00:ec2::254"},
		"metadata.goog":                {"169.254.169.254"},
		"metadata.platformequinix.com": {"145.40.1.1"},
	}
	strict := &Service{resolver: res, cfg: Config{}.withDefaults()}
	open := &Service{resolver: res, cfg: Config{AllowPrivateSandbox: true}.withDefaults()}
	for _, tc := range []struct {
		svc  *Service
		env  string
		url  string
		want string // "" for accepted, else a word of the message
	}{
		{strict, auth.EnvProduction, "https://hooks.example.com/denar", ""},
		{strict, auth.EnvProduction, "https://v6.example.com:8443/x?y=1", ""},
		{strict, auth.EnvProduction, "HTTPS://hooks.example.com/", ""},
		{strict, auth.EnvProduction, "http://hooks.example.com/", "https"},
		{strict, auth.EnvProduction, "ftp://hooks.example.com/", "scheme must be https"},
		{strict, auth.EnvSandbox, "ftp://hooks.example.com/", "or http, in the sandbox"},
		{strict, auth.EnvProduction, "hooks.example.com/x", "absolute"},
		{strict, auth.EnvProduction, "https://user:pw@hooks.example.com/", "credentials"},
		{strict, auth.EnvProduction, "https://hooks.example.com/#frag", "fragment"},
		{strict, auth.EnvProduction, "https://hooks.example.com:0/", "port"},
		{strict, auth.EnvProduction, "https://hooks.example.com:99999/", "port"},
		{strict, auth.EnvProduction, "https:///x", "host"},
		{strict, auth.EnvProduction, "https://127.0.0.1/", "loopback"},
		{strict, auth.EnvProduction, "https://[::1]:8443/", "loopback"},
		{strict, auth.EnvProduction, "https://localhost/", "loopback"},
		{strict, auth.EnvProduction, "https://api.localhost/", "loopback"},
		{strict, auth.EnvProduction, "https://10.1.2.3/", "private"},
		{strict, auth.EnvProduction, "https://internal.example.com/", "private"},
		{strict, auth.EnvProduction, "https://dual.example.com/", "private"},
		{strict, auth.EnvProduction, "https://169.254.169.254/latest/meta-data", "link-local"},
		{strict, auth.EnvProduction, "https://metadata.google.internal/", "metadata service"},
		{strict, auth.EnvProduction, "https://[fe80::1]/", "link-local"},
		{strict, auth.EnvProduction, "https://[fe80::1%25eth0]/", "zone"},
		{strict, auth.EnvProduction, "https://100.64.1.1/", "shared"},
		{strict, auth.EnvProduction, "https://224.0.0.1/", "multicast"},
		{strict, auth.EnvProduction, "https://0.0.0.0/", "reserved"},
		{strict, auth.EnvProduction, "https://nowhere.example.com/", "resolve"},
		{strict, auth.EnvProduction, "https://" + strings.Repeat("a", 2050) + ".com/", "longer"},
		{strict, auth.EnvSandbox, "http://hooks.example.com/", ""},
		// Refused in the sandbox, the setting that admits them is named.
		{strict, auth.EnvSandbox, "http://127.0.0.1:9000/", "loopback address (the sandbox admits loopback and private addresses when the operator starts denar with DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX=true)"},
		{strict, auth.EnvSandbox, "http://localhost:9000/", "loopback name (the sandbox admits loopback and private addresses when the operator starts denar with DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX=true)"},
		{strict, auth.EnvSandbox, "http://internal.example.com/", "private address (the sandbox admits"},
		{open, auth.EnvSandbox, "http://127.0.0.1:9000/", ""},
		{open, auth.EnvSandbox, "http://localhost:9000/", ""},
		{open, auth.EnvSandbox, "http://192.168.0.10/", ""},
		{open, auth.EnvSandbox, "http://169.254.169.254/", "link-local"},
		{open, auth.EnvSandbox, "http://metadata.google.internal/", "metadata service"},
		{open, auth.EnvProduction, "https://127.0.0.1/", "loopback"},
		// Cloud metadata and platform addresses, everywhere.
		{strict, auth.EnvProduction, "https://168.63.129.16/", "Azure"},
		{open, auth.EnvSandbox, "http://168.63.129.16/machine?comp=goalstate", "Azure"},
		{open, auth.EnvSandbox, "http://100.100.100.200/latest/meta-data", "Alibaba"},
		{open, auth.EnvSandbox, "http://[fd00:ec2::254]/latest/meta-data", "AWS"},
		{open, auth.EnvSandbox, "http://[fd20:ce::254]/computeMetadata/v1/", "Google"},
		{open, auth.EnvSandbox, "http://[fd00:a9fe:a9fe::1]/v1/token", "Linode"},
		{strict, auth.EnvProduction, "https://wire.example.com/", "Azure"},
		{open, auth.EnvSandbox, "http://wire.example.com/", "Azure"},
		{open, auth.EnvSandbox, "http://imds6.example.com/", "AWS"},
		{strict, auth.EnvProduction, "https://metadata.goog/", "metadata service"},
		{open, auth.EnvSandbox, "http://metadata/computeMetadata/v1/", "metadata service"},
		{open, auth.EnvSandbox, "http://METADATA.GOOGLE.INTERNAL./", "metadata service"},
		{strict, auth.EnvProduction, "https://metadata.platformequinix.com/metadata", "metadata service"},
		{strict, auth.EnvProduction, "https://instance-data.ec2.internal/", "metadata service"},
		{open, auth.EnvProduction, "https://internal.example.com/", "private"},
	} {
		_, err := tc.svc.checkWebhookURL(t.Context(), tc.env, tc.url)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %.60s: refused: %v", tc.env, tc.url, err)
			}
			continue
		}
		var de *denar.Error
		if !errors.As(err, &de) || de.Code != "webhook_url_refused" || len(de.Fields) != 1 || de.Fields[0].Path != "url" ||
			!strings.Contains(de.Message, tc.want) {
			t.Errorf("%s %.60s: %v, want webhook_url_refused at url mentioning %q", tc.env, tc.url, err, tc.want)
		}
		// Production never admits them: no setting is named there.
		if tc.env == auth.EnvProduction && strings.Contains(de.Message, "DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX") {
			t.Errorf("%s %.60s: %v names the sandbox's setting", tc.env, tc.url, err)
		}
	}
}

// TestDialRefusesRebinding: a name that resolved to a public address when
// the endpoint was registered and resolves to loopback at delivery time is
// refused when the delivery connects, and the Control function refuses a
// refused address even when asked to dial it directly.
func TestDialRefusesRebinding(t *testing.T) {
	t.Parallel()
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	res := mapResolver{"rebind.example.com": {"93.184.215.14"}}
	s := &Service{resolver: res, cfg: Config{}.withDefaults()}
	if _, err := s.checkWebhookURL(t.Context(), auth.EnvSandbox, "http://rebind.example.com:"+port+"/"); err != nil {
		t.Fatalf("registration: %v", err)
	}
	res["rebind.example.com"] = []string{"127.0.0.1"}
	client := newWebhookClient(s.policy(auth.EnvSandbox), res, s.cfg.Timeout)
	_, err := client.Post("http://rebind.example.com:"+port+"/", "application/json", strings.NewReader("{}"))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("delivery to a rebound name: %v", err)
	}
	// The dialer's last check, on the socket's own address.
	d := net.Dialer{Control: addressPolicy{}.control}
	if _, err := d.Dial("tcp", srv.Listener.Addr().String()); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("Control let a loopback dial through: %v", err)
	}
	// The sandbox that allows private addresses reaches it.
	ok := newWebhookClient(addressPolicy{allowPrivate: true}, res, s.cfg.Timeout)
	resp, err := ok.Post("http://rebind.example.com:"+port+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits != 1 {
		t.Fatalf("%d requests reached the receiver, want 1 (the allowed one)", hits)
	}
}

// TestDialRefusesMetadata: at connection time, even where private
// addresses are allowed, a name that now resolves to a cloud platform's
// address, or a metadata host name, is not connected to; nor is the
// address itself dialed directly.
func TestDialRefusesMetadata(t *testing.T) {
	t.Parallel()
	res := mapResolver{"hooks.example.com": {"93.184.215.14"}}
	s := &Service{resolver: res, cfg: Config{AllowPrivateSandbox: true}.withDefaults()}
	if _, err := s.checkWebhookURL(t.Context(), auth.EnvSandbox, "http://hooks.example.com/"); err != nil {
		t.Fatalf("registration: %v", err)
	}
	for _, tc := range []struct{ url, addr, want string }{
		{"http://hooks.example.com/", "168.63.129.16", "Azure"},
		{"http://hooks.example.com/", "fd00:ec2::254", "AWS"},
		{"http://hooks.example.com/", "100.100.100.200", "Alibaba"},
		{"http://hooks.example.com/", "169.254.169.254", "link-local"},
		{"http://metadata.google.internal/", "93.184.215.14", "metadata service"},
	} {
		res["hooks.example.com"] = []string{tc.addr}
		res["metadata.google.internal"] = []string{tc.addr}
		client := newWebhookClient(s.policy(auth.EnvSandbox), res, time.Second)
		_, err := client.Post(tc.url, "application/json", strings.NewReader("{}"))
		if err == nil || !strings.Contains(err.Error(), "refusing to connect") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s resolving to %s: %v", tc.url, tc.addr, err)
		}
	}
	d := net.Dialer{Control: addressPolicy{allowPrivate: true}.control, Timeout: time.Second}
	for _, a := range []string{"168.63.129.16:80", "[fd00:ec2::254]:80", "100.100.100.200:80"} {
		if _, err := d.Dial("tcp", a); err == nil || !strings.Contains(err.Error(), "refusing to connect") {
			t.Errorf("Control let %s through: %v", a, err)
		}
	}
}

// TestNoRedirects: a 3xx is the answer, not a hop.
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	var followed bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			followed = true
			return
		}
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := newWebhookClient(addressPolicy{allowPrivate: true}, net.DefaultResolver, 15*time.Second)
	resp, err := c.Post(srv.URL+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || followed {
		t.Fatalf("status %d, followed %v", resp.StatusCode, followed)
	}
}

// FuzzCheckWebhookURL: whatever URL is accepted is absolute http(s)
// (https in production), without credentials or fragment, and its host
// resolves only to addresses the environment admits; whatever is refused
// is webhook_url_refused at url.
func FuzzCheckWebhookURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "http://127.0.0.1:80/", "https://[::ffff:10.0.0.1]/",
		"https://user@hooks.example.com", "https://hooks.example.com:443/#x", "https://0x7f.1/", "https://2130706433/", "http://[fe80::1%25eth0]/"} {
		f.Add(s)
	}
	res := mapResolver{"hooks.example.com": {"93.184.215.14"}, "inside.example.com": {"10.0.0.1"}}
	s := &Service{resolver: res, cfg: Config{}.withDefaults()}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, env := range []string{auth.EnvSandbox, auth.EnvProduction} {
			got, err := s.checkWebhookURL(context.Background(), env, raw)
			if err != nil {
				var de *denar.Error
				if !errors.As(err, &de) || de.Code != "webhook_url_refused" || len(de.Fields) != 1 || de.Fields[0].Path != "url" {
					t.Fatalf("%q: %v", raw, err)
				}
				continue
			}
			u, perr := url.Parse(got)
			if perr != nil || (u.Scheme != "https" && (u.Scheme != "http" || env == auth.EnvProduction)) || u.User != nil || u.Fragment != "" {
				t.Fatalf("%s accepted %q as %q", env, raw, got)
			}
			addrs, rerr := resolve(context.Background(), res, strings.TrimSuffix(strings.ToLower(u.Hostname()), "."))
			if rerr != nil {
				t.Fatalf("accepted %q whose host does not resolve", raw)
			}
			for _, a := range addrs {
				if s.policy(env).check(a) != nil {
					t.Fatalf("%s accepted %q reaching %s", env, raw, a)
				}
			}
		}
	})
}

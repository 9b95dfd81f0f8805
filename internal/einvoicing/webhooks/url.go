package webhooks

// Where webhooks may go. An endpoint URL names a host the service will
// connect to from inside the operator's network, so a URL must not reach
// what only that network can: loopback, private and shared address space,
// link-local addresses (where cloud metadata services answer), multicast,
// and the reserved ranges. The check runs when the URL is registered (the
// host's addresses are resolved then) and again when a delivery connects:
// the dialer resolves the host itself, skips refused addresses, and a
// net.Dialer Control function checks the address the socket actually
// connects to, so a name that resolved to a public address at registration
// and to 127.0.0.1 later (DNS rebinding) is still refused. Redirects are
// never followed.
//
// Cloud platforms' metadata and platform addresses (168.63.129.16,
// 100.100.100.200, fd00:ec2::254, …) and metadata host names are refused
// in every environment.
//
// In the sandbox, the operator may allow loopback and private addresses
// (DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX), so that people can try webhooks
// against a receiver on their own machine; link-local, metadata,
// multicast and reserved addresses stay refused even then.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
)

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// addressPolicy decides which addresses a webhook may connect to.
type addressPolicy struct {
	// allowPrivate admits loopback, private (RFC 1918, ULA) and shared
	// (CGNAT) addresses: the sandbox, when the operator allows it.
	allowPrivate bool
	// sandbox: a refusal of such an address names the setting that
	// admits it.
	sandbox bool
}

// allowPrivateHint is what a sandbox refusal of a loopback or private
// address adds: the operator's setting that admits it.
const allowPrivateHint = " (the sandbox admits loopback and private addresses when the operator starts denar with DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX=true)"

// addrRange is a range of addresses and why a webhook may not reach it.
type addrRange struct {
	p      netip.Prefix
	reason string
}

// Ranges no webhook may reach, whatever the policy, with the reason given.
func refusedRanges() []addrRange {
	m := netip.MustParsePrefix
	return []addrRange{
		{m("0.0.0.0/8"), "a reserved address (this network)"},
		{m("169.254.0.0/16"), "a link-local address (cloud metadata services answer there)"},
		{m("192.0.0.0/24"), "a reserved address (IETF protocol assignments)"},
		{m("192.0.2.0/24"), "a documentation address"},
		{m("198.18.0.0/15"), "a reserved address (benchmarking)"},
		{m("198.51.100.0/24"), "a documentation address"},
		{m("203.0.113.0/24"), "a documentation address"},
		{m("224.0.0.0/4"), "a multicast address"},
		{m("240.0.0.0/4"), "a reserved address"},
		// Cloud platforms' metadata and platform services outside the
		// link-local range (docs/decisions.md, "Security: reach, secrets
		// and files"), refused even where private addresses are allowed.
		{m("168.63.129.16/32"), "a cloud platform address (Azure WireServer)"},
		{m("100.100.100.200/32"), "a cloud metadata address (Alibaba Cloud)"},
		{m("fd00:ec2::/32"), "a cloud platform address (AWS: instance metadata fd00:ec2::254, DNS, time)"},
		{m("fd20:ce::254/128"), "a cloud metadata address (Google Cloud, IPv6)"},
		{m("fd00:a9fe:a9fe::/48"), "a cloud metadata address (Akamai/Linode, IPv6)"},
		{m("::/128"), "the unspecified address"},
		{m("100::/64"), "a discard-only address"},
		{m("2001::/23"), "a reserved address (IETF protocol assignments, Teredo)"},
		{m("2001:db8::/32"), "a documentation address"},
		{m("fe80::/10"), "a link-local address"},
		{m("ff00::/8"), "a multicast address"},
	}
}

// metadataNames are host names of cloud metadata services, refused
// whatever they resolve to (and their subdomains): most resolve to a
// refused address anyway, but inside the cloud only, and Equinix Metal's
// answers on public addresses, recognising the instance by its own.
var metadataNames = []string{
	"metadata.google.internal", "metadata.goog", "metadata", // Google Cloud (metadata through the search domain)
	"instance-data", "instance-data.ec2.internal", // AWS
	"metadata.tencentyun.com",                             // Tencent Cloud
	"metadata.platformequinix.com", "metadata.packet.net", // Equinix Metal
}

// metadataName reports whether host (lower case, no trailing dot) names a
// cloud metadata service.
func metadataName(host string) bool {
	for _, n := range metadataNames {
		if host == n || strings.HasSuffix(host, "."+n) {
			return true
		}
	}
	return false
}

// Ranges only the sandbox's private policy admits.
func privateRanges() []addrRange {
	m := netip.MustParsePrefix
	return []addrRange{
		{m("127.0.0.0/8"), "a loopback address"},
		{m("::1/128"), "a loopback address"},
		{m("10.0.0.0/8"), "a private address"},
		{m("172.16.0.0/12"), "a private address"},
		{m("192.168.0.0/16"), "a private address"},
		{m("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
		{m("fc00::/7"), "a private (unique local) address"},
		{m("fec0::/10"), "a site-local address"},
	}
}

// check returns why a may not be connected to, or nil.
func (p addressPolicy) check(a netip.Addr) error {
	if !a.IsValid() {
		return errors.New("not an IP address")
	}
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	// Addresses that carry an IPv4 address inside (NAT64, 6to4) are
	// judged by it.
	if a.Is6() {
		b := a.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
			return p.check(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case netip.MustParsePrefix("2002::/16").Contains(a):
			return p.check(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		case netip.MustParsePrefix("64:ff9b:1::/48").Contains(a):
			return fmt.Errorf("%s is a local-use NAT64 address", a)
		}
	}
	if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return fmt.Errorf("%s is the broadcast address", a)
	}
	for _, r := range refusedRanges() {
		if r.p.Contains(a) {
			return fmt.Errorf("%s is %s", a, r.reason)
		}
	}
	for _, r := range privateRanges() {
		if r.p.Contains(a) {
			if p.allowPrivate {
				return nil
			}
			if p.sandbox {
				return fmt.Errorf("%s is %s%s", a, r.reason, allowPrivateHint)
			}
			return fmt.Errorf("%s is %s", a, r.reason)
		}
	}
	if a.Is6() && !netip.MustParsePrefix("2000::/3").Contains(a) {
		return fmt.Errorf("%s is not a global unicast address", a)
	}
	return nil
}

// control is the net.Dialer Control function: the last check, on the
// address the socket is about to connect to.
func (p addressPolicy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: refusing to connect to %q: %w", address, err)
	}
	if err := p.check(ap.Addr()); err != nil {
		return fmt.Errorf("webhook: refusing to connect: %w", err)
	}
	return nil
}

// dialContext resolves the host with r, skips refused addresses and dials
// the others in turn with the Control check.
func (p addressPolicy) dialContext(r Resolver, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: p.control}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if metadataName(strings.TrimSuffix(strings.ToLower(host), ".")) {
			return nil, fmt.Errorf("webhook: refusing to connect to %s: a cloud metadata service", host)
		}
		addrs, err := resolve(ctx, r, host)
		if err != nil {
			return nil, err
		}
		var firstErr error
		for _, a := range addrs {
			if err := p.check(a); err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("webhook: refusing to connect to %s: %w", host, err)
				}
				continue
			}
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("webhook: %s has no address", host)
		}
		return nil, firstErr
	}
}

// resolve returns the addresses of host: itself when it is an IP literal.
func resolve(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("webhook: resolve %s: %w", host, err)
	}
	return addrs, nil
}

// newWebhookClient is the HTTP client of one policy: connections through
// the checking dialer, no proxy, no redirects, the delivery timeout.
func newWebhookClient(p addressPolicy, r Resolver, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialContext(r, timeout),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		DisableCompression:    true,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// maxWebhookURL bounds an endpoint URL.
const maxWebhookURL = 2048

// errURL is the problem of a refused endpoint URL.
func errURL(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &denar.Error{Code: "webhook_url_refused", Message: "The endpoint URL is refused: " + msg + ".",
		Fields: []denar.FieldError{{Path: "url", Message: msg}}}
}

// checkWebhookURL validates an endpoint URL for env and returns it
// normalised: production needs https, and the host must resolve to
// addresses the environment's policy admits.
func (s *Service) checkWebhookURL(ctx context.Context, env, raw string) (string, error) {
	if len(raw) > maxWebhookURL {
		return "", errURL("longer than %d characters", maxWebhookURL)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "", errURL("not an absolute http or https URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "https" && u.Scheme != "http" && env == auth.EnvProduction:
		return "", errURL("the scheme must be https")
	case u.Scheme != "https" && u.Scheme != "http":
		return "", errURL("the scheme must be https (or http, in the sandbox)")
	case u.Scheme == "http" && env == auth.EnvProduction:
		return "", errURL("production endpoints must use https")
	case u.User != nil:
		return "", errURL("credentials in the URL are not accepted; authenticate deliveries by their signature")
	case u.Fragment != "" || u.RawFragment != "":
		return "", errURL("a URL fragment is never sent; remove it")
	case u.Hostname() == "":
		return "", errURL("the URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", errURL("port %q is not a port number", p)
		}
	}
	if strings.Contains(u.Host, "%") {
		return "", errURL("an IPv6 zone or an escaped character in the host is not accepted")
	}
	if _, err := url.Parse(u.String()); err != nil {
		return "", errURL("not a valid URL once normalised")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if metadataName(host) {
		return "", errURL("%s is a cloud metadata service", host)
	}
	pol := s.policy(env)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		if err := pol.check(netip.MustParseAddr("127.0.0.1")); err != nil {
			if pol.sandbox {
				return "", errURL("%s is a loopback name%s", host, allowPrivateHint)
			}
			return "", errURL("%s is a loopback name", host)
		}
	}
	addrs, err := resolve(ctx, s.resolver, host)
	if err != nil {
		return "", errURL("the host %s does not resolve", host)
	}
	if len(addrs) == 0 {
		return "", errURL("the host %s has no address", host)
	}
	for _, a := range addrs {
		if err := pol.check(a); err != nil {
			if _, lit := netip.ParseAddr(host); lit == nil {
				return "", errURL("%v", err)
			}
			return "", errURL("%s resolves to %v", host, err)
		}
	}
	return u.String(), nil
}

// policy returns the address policy of an environment.
func (s *Service) policy(env string) addressPolicy {
	return addressPolicy{allowPrivate: env == auth.EnvSandbox && s.cfg.AllowPrivateSandbox, sandbox: env == auth.EnvSandbox}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Destinations web_fetch refuses. The model must not read a cloud
// metadata service (instance credentials, user data) or another
// host-internal endpoint through the agent, by any spelling of its
// address, through any IPv6 form embedding it, or through a proxy. Loopback
// and private networks stay reachable: a local dev server is a common
// thing to fetch. (The reference defers this protection; reel enables
// web_fetch by default, so it cannot.)
//
// The rules are applied three times, each on what is about to be used:
// to the URL's host before every request (checkDestination: an address
// literal, in any of the WHATWG spellings parseFetchURL normalizes, or a
// metadata host name), to every address the host name resolves to
// (guardedDial), and to the socket address itself just before connect
// (refuseBlockedSocket, the dialer's Control), so a DNS answer that changes
// between check and connect (rebinding) gains nothing. web_fetch never
// uses a proxy: a proxy resolves and connects on its own, out of reach of
// these checks, so HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are ignored.

// ErrBlockedAddress marks a fetch refused because its destination is, or
// resolves to, an address web_fetch does not connect to (see
// blockedAddr).
var ErrBlockedAddress = errors.New("address not fetched")

// blockedV4 are the IPv4 ranges refused, with what each is.
var blockedV4 = []struct {
	prefix netip.Prefix
	what   string
}{
	// 169.254.0.0/16 (RFC 3927) holds the metadata service of AWS, GCP,
	// Azure, Oracle, DigitalOcean, OpenStack, Hetzner and Linode at
	// 169.254.169.254, Tencent Cloud's at 169.254.0.23, Scaleway's at
	// 169.254.42.42, ECS task metadata at 169.254.170.2 and EKS Pod
	// Identity at 169.254.170.23 (sources at metadataV4).
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (169.254.0.0/16), where cloud metadata services answer"},
	// 0.0.0.0/8, "this network" (RFC 1122): 0.0.0.0 reaches the local host.
	{netip.MustParsePrefix("0.0.0.0/8"), `an unspecified ("this network") address`},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	// 240.0.0.0/4, reserved (RFC 1112), with the limited broadcast address.
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
}

// metadataV4 are cloud metadata and platform addresses outside link-local,
// with whose they are. Sources:
//   - Alibaba Cloud ECS instance metadata at 100.100.100.200:
//     https://www.alibabacloud.com/help/en/ecs/user-guide/overview-of-ecs-instance-metadata
//     (also cloud-init's AliYun datasource,
//     https://cloudinit.readthedocs.io/en/latest/reference/datasources/aliyun.html).
//   - Azure WireServer (host-node platform endpoint) at 168.63.129.16:
//     https://learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16.
//   - Oracle Cloud@Customer / Classic instance metadata at 192.0.0.192:
//     https://docs.oracle.com/en/cloud/cloud-at-customer/occ-get-started/retrieve-predefined-instance-metadata.html.
//
// The link-local ones (169.254.0.0/16 in blockedV4): AWS
// https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html,
// GCP https://cloud.google.com/compute/docs/metadata/overview, Azure IMDS
// https://learn.microsoft.com/azure/virtual-machines/instance-metadata-service,
// Oracle OCI https://docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm,
// DigitalOcean https://docs.digitalocean.com/reference/api/metadata/,
// Tencent Cloud https://www.tencentcloud.com/document/product/213/4934
// (metadata.tencentyun.com, 169.254.0.23), OpenStack
// https://specs.openstack.org/openstack/neutron-specs/specs/ussuri/metadata-add-ipv6-support.html.
var metadataV4 = map[netip.Addr]string{
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud's metadata service",
	netip.MustParseAddr("168.63.129.16"):   "Azure's WireServer platform endpoint",
	netip.MustParseAddr("192.0.0.192"):     "Oracle Cloud's (Classic, Cloud@Customer) metadata service",
}

// metadataV6 are cloud metadata services' IPv6 addresses and ranges.
// Sources:
//   - AWS IMDS fd00:ec2::254 (the AWS page above); the whole fd00:ec2::/32
//     is AWS's in-instance service block (also the Route 53 Resolver at
//     fd00:ec2::253, Time Sync at fd00:ec2::123, EKS Pod Identity at
//     fd00:ec2::23: https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html).
//   - GCP fd20:ce::254, for IPv6-only instances:
//     https://cloud.google.com/compute/docs/metadata/querying-metadata.
//   - Oracle OCI fd00:c1::a9fe:a9fe: the IMDS endpoint of the OCI SDK,
//     https://github.com/oracle/oci-python-sdk/blob/master/src/oci/auth/signers/instance_principals_security_token_signer.py.
//   - Scaleway fd00:42::42 (and 169.254.42.42):
//     https://www.scaleway.com/en/docs/instances/how-to/use-cloud-init/ and
//     cloud-init's Scaleway datasource.
//   - Akamai / Linode fd00:a9fe:a9fe::1 (and 169.254.169.254): cloud-init's
//     Akamai datasource,
//     https://cloudinit.readthedocs.io/en/latest/reference/datasources/akamai.html.
//   - OpenStack fe80::a9fe:a9fe is link-local (the OpenStack spec above).
var metadataV6 = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("fd00:ec2::/32"), "AWS's in-instance service range (its metadata service is fd00:ec2::254)"},
	{netip.MustParsePrefix("fd20:ce::254/128"), "GCP's IPv6 metadata service"},
	{netip.MustParsePrefix("fd00:c1::a9fe:a9fe/128"), "Oracle Cloud's IPv6 metadata service"},
	{netip.MustParsePrefix("fd00:42::42/128"), "Scaleway's IPv6 metadata service"},
	{netip.MustParsePrefix("fd00:a9fe:a9fe::1/128"), "Akamai (Linode)'s IPv6 metadata service"},
}

// metadataHosts are the names metadata services answer to, refused
// whatever they resolve to (compared without a trailing dot, in lower
// case). Sources: GCP metadata.google.internal and the short "metadata"
// (https://cloud.google.com/compute/docs/metadata/querying-metadata);
// AWS instance-data (the AWS page above); Tencent Cloud
// metadata.tencentyun.com (the Tencent page above); Equinix Metal
// metadata.platformequinix.com, a public name answering by source address
// (https://deploy.equinix.com/developers/docs/metal/server-metadata/metadata/),
// and its former metadata.packet.net.
var metadataHosts = map[string]string{
	"metadata.google.internal":     "GCP's metadata service",
	"metadata":                     "GCP's metadata service (short name)",
	"instance-data":                "AWS's metadata service",
	"instance-data.ec2.internal":   "AWS's metadata service",
	"metadata.tencentyun.com":      "Tencent Cloud's metadata service",
	"metadata.platformequinix.com": "Equinix Metal's metadata service",
	"metadata.packet.net":          "Equinix Metal's (Packet's) metadata service",
}

// blockedAddr says what ip is when web_fetch does not connect to it, ""
// when it may: link-local, multicast, unspecified, reserved and broadcast
// addresses, the cloud metadata addresses above, and every IPv6 address
// that embeds a refused IPv4 address (IPv4-mapped ::ffff:0:0/96,
// IPv4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96, NAT64
// 64:ff9b::/96 and 64:ff9b:1::/48 at every RFC 6052 position, 6to4
// 2002::/16, Teredo 2001::/32 server and obfuscated client, ISATAP
// interface identifiers). Loopback and private addresses are allowed.
func blockedAddr(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is4() {
		return blockedIPv4(ip)
	}
	if !ip.Is6() {
		return "not an IP address"
	}
	if ip.Is4In6() {
		if what := blockedIPv4(ip.Unmap()); what != "" {
			return fmt.Sprintf("an IPv4-mapped address embedding %s, %s", ip.Unmap(), what)
		}
		return ""
	}
	switch {
	case ip.IsLoopback():
		return ""
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (fe80::/10), where cloud metadata services answer"
	case ip.IsMulticast():
		return "a multicast address"
	}
	for _, m := range metadataV6 {
		if m.prefix.Contains(ip) {
			return m.what
		}
	}
	for _, e := range embeddedV4(ip) {
		if what := blockedIPv4(e.v4); what != "" {
			return fmt.Sprintf("%s embedding %s, %s", e.form, e.v4, what)
		}
	}
	return ""
}

// blockedIPv4 is blockedAddr for an IPv4 address.
func blockedIPv4(ip netip.Addr) string {
	if what, ok := metadataV4[ip]; ok {
		return what
	}
	for _, b := range blockedV4 {
		if b.prefix.Contains(ip) {
			return b.what
		}
	}
	return ""
}

// embedding is an IPv4 address found inside an IPv6 one, and the form.
type embedding struct {
	form string
	v4   netip.Addr
}

// Prefixes of IPv6 forms that embed an IPv4 address.
var (
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215
	sixToFour      = netip.MustParsePrefix("2002::/16")      // RFC 3056
	teredo         = netip.MustParsePrefix("2001::/32")      // RFC 4380
)

// embeddedV4 returns every IPv4 address an IPv6 address (not IPv4-mapped)
// may stand for: all candidates, so that a refused one among them refuses
// ip.
func embeddedV4(ip netip.Addr) []embedding {
	b := ip.As16()
	v4 := func(i, j, k, l int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[j], b[k], b[l]}) }
	var out []embedding
	zero := func(from, to int) bool {
		for _, c := range b[from:to] {
			if c != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case zero(0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0:
		out = append(out, embedding{"an IPv4-translated address", v4(12, 13, 14, 15)})
	case zero(0, 12):
		out = append(out, embedding{"an IPv4-compatible address", v4(12, 13, 14, 15)})
	case nat64WellKnown.Contains(ip):
		out = append(out, embedding{"a NAT64 address", v4(12, 13, 14, 15)})
	case nat64Local.Contains(ip):
		// RFC 6052 section 2.2: the IPv4 address follows the prefix,
		// skipping bits 64-71, for prefixes of 48, 56, 64 and 96 bits;
		// which one the network uses is unknown here, so every position
		// counts, but for the zero bytes a longer prefix leaves at the
		// shorter ones' positions (0.0.0.0/8).
		for _, c := range []netip.Addr{v4(6, 7, 9, 10), v4(7, 9, 10, 11), v4(9, 10, 11, 12), v4(12, 13, 14, 15)} {
			if c.As4()[0] != 0 {
				out = append(out, embedding{"a NAT64 address", c})
			}
		}
	case sixToFour.Contains(ip):
		out = append(out, embedding{"a 6to4 address", v4(2, 3, 4, 5)})
	case teredo.Contains(ip):
		client := netip.AddrFrom4([4]byte{b[12] ^ 0xff, b[13] ^ 0xff, b[14] ^ 0xff, b[15] ^ 0xff})
		out = append(out,
			embedding{"a Teredo address (client)", client},
			embedding{"a Teredo address (server)", v4(4, 5, 6, 7)})
	}
	// ISATAP (RFC 5214): an interface identifier 0000:5efe or 0200:5efe
	// (u and g bits aside) followed by the IPv4 address, under any prefix.
	if b[8]&^0x03 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		out = append(out, embedding{"an ISATAP address", v4(12, 13, 14, 15)})
	}
	return out
}

// checkDestination refuses a URL host (as parseFetchURL normalizes it)
// that is a refused address literal or a metadata host name, before
// anything is resolved or sent.
func checkDestination(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if what := blockedAddr(ip); what != "" {
			return fetchFail("%s is %s, which web_fetch does not connect to. Nothing was fetched.", h, what)
		}
		return nil
	}
	if what, ok := metadataHosts[h]; ok {
		return fetchFail("%s is %s, which web_fetch does not connect to. Nothing was fetched.", h, what)
	}
	return nil
}

// whatwgIPv4 parses a lower-case host as the WHATWG URL standard's IPv4
// parser does when the host ends in a number (its last label, after one
// trailing dot, is decimal digits or 0x hex): one to four parts, each
// decimal, 0x hex or 0-prefixed octal, as in "2852039166", "0xa9fea9fe",
// "0251.0376.0251.0376" or "169.254.43518". numeric reports that host
// ends in a number, so it is an address or invalid, never a name.
func whatwgIPv4(host string) (ip netip.Addr, numeric, ok bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last == "" || (strings.Trim(last, "0123456789") != "" && !isHexPart(last)) {
		return ip, false, false
	}
	if len(parts) > 4 {
		return ip, true, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return ip, true, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return ip, true, false
		}
	}
	v := nums[len(nums)-1]
	if v >= 1<<(8*(5-len(nums))) {
		return ip, true, false
	}
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// isHexPart reports a "0x" part with only hex digits after it.
func isHexPart(s string) bool {
	return strings.HasPrefix(s, "0x") && strings.Trim(s[2:], "0123456789abcdef") == ""
}

// parseIPv4Part parses one part of a WHATWG IPv4 address: 0x hex,
// 0-prefixed octal or decimal digits ("0x" alone is 0). A value too large
// for 64 bits is returned as 1<<40, which every range check refuses.
func parseIPv4Part(s string) (uint64, bool) {
	digits, base := "0123456789", 10
	switch {
	case s == "":
		return 0, false
	case strings.HasPrefix(s, "0x"):
		s, digits, base = s[2:], "0123456789abcdef", 16
	case len(s) > 1 && s[0] == '0':
		s, digits, base = s[1:], "01234567", 8
	}
	if s == "" {
		return 0, true
	}
	if strings.Trim(s, digits) != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 1 << 40, true
	}
	return n, true
}

// guardedTransport is http.DefaultTransport's settings with guardedDial,
// no proxy, and no kept-alive connections (each call makes its own
// transport).
func guardedTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = guardedDial(net.DefaultResolver.LookupNetIP, guardedDialer().DialContext)
	t.DisableKeepAlives = true
	return t
}

// guardedDialer is the dialer under guardedDial: its Control refuses a
// blocked socket address just before connect, whatever produced it.
func guardedDialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: refuseBlockedSocket}
}

// refuseBlockedSocket is a net.Dialer Control: it fails the connect of a
// socket whose remote address blockedAddr refuses.
func refuseBlockedSocket(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: web_fetch cannot check the address %q it was to connect to", ErrBlockedAddress, address)
	}
	if what := blockedAddr(ap.Addr()); what != "" {
		return fmt.Errorf("%w: %s is %s, which web_fetch does not connect to", ErrBlockedAddress, ap.Addr(), what)
	}
	return nil
}

// guardedDial resolves the host itself with lookup and dials only
// addresses blockedAddr allows, each by its address, so the address
// dialled is the one checked.
func guardedDial(lookup func(ctx context.Context, network, host string) ([]netip.Addr, error), dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if err := checkDestination(host); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBlockedAddress, err)
		}
		ips, err := lookup(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		var lastErr error
		for _, ip := range ips {
			ip = ip.Unmap()
			if what := blockedAddr(ip); what != "" {
				lastErr = fmt.Errorf("%w: %s resolves to %s, %s, which web_fetch does not connect to", ErrBlockedAddress, host, ip, what)
				continue
			}
			c, err := dial(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		if lastErr == nil {
			lastErr = fmt.Errorf("%s: no address", host)
		}
		return nil, lastErr
	}
}

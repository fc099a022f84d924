package tools

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBlockedAddr holds the destination classifier: cloud metadata
// addresses in and outside link-local, link-local, multicast, unspecified
// and reserved ranges, and every IPv6 form embedding one of them, are
// refused; loopback, private and public addresses, and embeddings of
// them, are not.
func TestBlockedAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // a part of the reason; "" means allowed
	}{
		{"169.254.169.254", "link-local"},
		{"169.254.0.23", "link-local"},
		{"169.254.170.2", "link-local"},
		{"100.100.100.200", "Alibaba"},
		{"168.63.129.16", "WireServer"},
		{"192.0.0.192", "Oracle"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},
		{"::", "unspecified"},
		{"fe80::1", "link-local"},
		{"fe80::a9fe:a9fe%eth0", "link-local"},
		{"ff02::1", "multicast"},
		{"fd00:ec2::254", "AWS"},
		{"fd00:ec2::23", "AWS"},
		{"fd20:ce::254", "GCP"},
		{"fd00:c1::a9fe:a9fe", "Oracle"},
		{"fd00:42::42", "Scaleway"},
		{"fd00:a9fe:a9fe::1", "Akamai"},
		{"::ffff:169.254.169.254", "IPv4-mapped address embedding 169.254.169.254"},
		{"::ffff:100.100.100.200", "IPv4-mapped address embedding 100.100.100.200, Alibaba"},
		{"::ffff:0:a9fe:a9fe", "IPv4-translated address embedding 169.254.169.254"},
		{"::169.254.169.254", "IPv4-compatible address embedding 169.254.169.254"},
		{"::a9fe:a9fe", "IPv4-compatible address embedding 169.254.169.254"},
		{"::2", "IPv4-compatible address embedding 0.0.0.2"},
		{"64:ff9b::a9fe:a9fe", "NAT64 address embedding 169.254.169.254"},
		{"64:ff9b::100.100.100.200", "NAT64 address embedding 100.100.100.200"},
		{"64:ff9b::a83f:8110", "NAT64 address embedding 168.63.129.16"},
		{"64:ff9b:1:a9fe:a9:fe00::", "NAT64 address embedding 169.254.169.254"},   // /48
		{"64:ff9b:1:0:a9:fea9:fe00:0", "NAT64 address embedding 169.254.169.254"}, // /56
		{"64:ff9b:1::a9:fea9:fe00:0", "NAT64 address embedding 169.254.169.254"},  // /64
		{"64:ff9b:1::a9fe:a9fe", "NAT64 address embedding 169.254.169.254"},       // /96
		{"2002:a9fe:a9fe::1", "6to4 address embedding 169.254.169.254"},
		{"2002:6464:64c8:1::1", "6to4 address embedding 100.100.100.200"},
		{"2001:0:4136:e378:8000:63bf:5601:5601", "Teredo address (client) embedding 169.254.169.254"},
		{"2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", "Teredo address (server) embedding 169.254.169.254"},
		{"2001:db8:1:2::5efe:a9fe:a9fe", "ISATAP address embedding 169.254.169.254"},
		{"2001:db8:1:2:200:5efe:a9fe:a9fe", "ISATAP address embedding 169.254.169.254"},

		{"127.0.0.1", ""},
		{"10.1.2.3", ""},
		{"172.16.0.1", ""},
		{"192.168.1.10", ""},
		{"100.64.0.1", ""},
		{"100.100.100.201", ""},
		{"168.63.129.17", ""},
		{"192.0.0.193", ""},
		{"8.8.8.8", ""},
		{"::1", ""},
		{"::ffff:127.0.0.1", ""},
		{"::ffff:10.0.0.1", ""},
		{"fd00::1", ""},
		{"fd00:ec3::254", ""},
		{"2001:db8::1", ""},
		{"2606:4700:4700::1111", ""},
		{"64:ff9b::808:808", ""},
		{"64:ff9b:1::808:808", ""},
		{"2002:808:808::1", ""},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", ""},
	} {
		ip, err := netip.ParseAddr(tc.addr)
		if err != nil {
			t.Fatalf("%s: %v", tc.addr, err)
		}
		got := blockedAddr(ip)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%s refused as %q, want it allowed", tc.addr, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%s: got %q, want it refused as %q", tc.addr, got, tc.want)
		}
	}
}

// TestCheckDestination holds the check of a URL host before any request:
// refused address literals (bracketed or not, with a trailing dot) and
// metadata host names in any case, with a trailing dot, are refused and
// named; other names and addresses pass to the dialer's checks.
func TestCheckDestination(t *testing.T) {
	for _, tc := range []struct {
		host, want string
	}{
		{"169.254.169.254", "Error: 169.254.169.254 is a link-local address"},
		{"[::ffff:a9fe:a9fe]", "Error: ::ffff:a9fe:a9fe is an IPv4-mapped address embedding 169.254.169.254"},
		{"metadata.google.internal", "Error: metadata.google.internal is GCP's metadata service"},
		{"Metadata.Google.Internal.", "Error: metadata.google.internal is GCP's metadata service"},
		{"metadata", "Error: metadata is GCP's metadata service"},
		{"metadata.tencentyun.com.", "Error: metadata.tencentyun.com is Tencent Cloud's metadata service"},
		{"instance-data", "Error: instance-data is AWS's metadata service"},
		{"example.com", ""},
		{"metadata.example.com", ""},
		{"127.0.0.1", ""},
		{"localhost", ""},
	} {
		err := checkDestination(tc.host)
		got := ""
		if err != nil {
			got = "Error: " + err.Error()
		}
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q…", tc.host, got, tc.want)
		}
		if got != "" && !strings.HasSuffix(got, ", which web_fetch does not connect to. Nothing was fetched.") {
			t.Errorf("%s: %q does not say nothing was fetched", tc.host, got)
		}
	}
}

// TestWhatwgIPv4 holds the IPv4 spellings of the WHATWG URL parser (what
// the reference's URL class accepts): they all become the dotted address,
// a host that ends in a number but is no address is invalid, and names
// stay names.
func TestWhatwgIPv4(t *testing.T) {
	for _, tc := range []struct {
		host, want string // want: the address, "invalid", or "name"
	}{
		{"2852039166", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"169.16689662", "169.254.169.254"},
		{"169.254.169.254.", "169.254.169.254"},
		{"0x7f.1", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4", "1.2.3.4"},
		{"4294967296", "invalid"},
		{"256.1.1.1", "invalid"},
		{"1.2.3.4.5", "invalid"},
		{"1.2.3.256", "invalid"},
		{"09.1.1.1", "invalid"},
		{"0xg.1.1.1", "invalid"},
		{"example.123", "invalid"},
		{"1..2", "invalid"},
		{"99999999999999999999999", "invalid"},
		{"example.com", "name"},
		{"1.2.3.4a", "name"},
		{"0xg", "name"},
		{"localhost", "name"},
		{"metadata.google.internal.", "name"},
	} {
		ip, numeric, ok := whatwgIPv4(tc.host)
		got := "name"
		switch {
		case ok:
			got = ip.String()
		case numeric:
			got = "invalid"
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.host, got, tc.want)
		}
	}
}

// TestGuardedDialChecksWhatItDials: the dialer checks every address a
// name resolves to, at each resolution (a rebinding answer is refused the
// time it names a blocked address, and a blocked address is never handed
// to the dial), and its Control refuses a blocked socket address that
// reaches it by any other way. The default transport uses no proxy.
func TestGuardedDialChecksWhatItDials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var lookups atomic.Int32
	rebinding := func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		if lookups.Add(1)%2 == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("::ffff:100.100.100.200"), netip.MustParseAddr("64:ff9b::a9fe:a9fe")}, nil
	}
	var dialled []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return guardedDialer().DialContext(ctx, network, addr)
	}
	d := guardedDial(rebinding, dial)
	c, err := d(context.Background(), "tcp", net.JoinHostPort("rebind.example", port))
	if err != nil {
		t.Fatalf("first resolution (loopback): %v", err)
	}
	c.Close()
	_, err = d(context.Background(), "tcp", net.JoinHostPort("rebind.example", port))
	if !errors.Is(err, ErrBlockedAddress) || !strings.Contains(err.Error(), "rebind.example resolves to") {
		t.Errorf("second resolution (metadata): %v", err)
	}
	if want := []string{"127.0.0.1:" + port}; strings.Join(dialled, " ") != strings.Join(want, " ") {
		t.Errorf("dialled %q, want only %q", dialled, want)
	}
	for _, addr := range []string{"169.254.169.254:80", "[64:ff9b::a9fe:a9fe]:80", "100.100.100.200:80", "[fd00:ec2::254]:80"} {
		_, err := guardedDialer().DialContext(context.Background(), "tcp", addr)
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("Control let %s through: %v", addr, err)
		}
	}
	if _, err := d(context.Background(), "tcp", "metadata.google.internal.:80"); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("metadata name: %v", err)
	}
	if guardedTransport().Proxy != nil {
		t.Error("the default transport uses a proxy")
	}
}

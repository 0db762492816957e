package integration

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/resilience4cata/adaptivelimit"
)

// OutgoingClass returns the priority class that a client sends for a call whose context is
// ctx: the context's class (adaptivelimit.WithClass) where it is Sendable, "" for none. A
// client replaces whatever class the call already carries with it, and removes it where
// OutgoingClass is "": the class a server reads then always comes from the context, which
// the service set or a server it trusts gave it, never from a header or metadata that an
// earlier hop copied through from its own caller.
func OutgoingClass(ctx context.Context) string {
	if class, ok := adaptivelimit.ClassFromContext(ctx); ok && Sendable(class) {
		return class
	}
	return ""
}

// InNetworks returns a function that reports whether addr, the address of a server's caller,
// is an IP address in one of networks: the check of the servers' TrustNetworks. addr is
// written as the servers see it, host:port (http.Request.RemoteAddr, connect.Peer.Addr, the
// String of a net.TCPAddr) or a bare IP. An IPv4-mapped IPv6 address is read as its IPv4
// address, and an IPv6 zone is ignored; an address that is no IP (a Unix socket's, an
// in-memory pipe's) is in none. No networks means no address. networks is copied.
//
// It returns an error if a network is not valid (the zero netip.Prefix): a check that
// matched nothing by mistake would turn every trusted caller into the lowest class, with no
// error to say so.
func InNetworks(networks []netip.Prefix) (func(addr string) bool, error) {
	for i, n := range networks {
		if !n.IsValid() {
			return nil, fmt.Errorf("network %d (%v) is not valid", i, n)
		}
	}
	networks = slices.Clone(networks)
	return func(addr string) bool {
		ip, ok := remoteIP(addr)
		if !ok {
			return false
		}
		for _, n := range networks {
			if n.Contains(ip) {
				return true
			}
		}
		return false
	}, nil
}

// remoteIP returns the IP of addr, host:port or a bare IP, unmapped and without a zone.
func remoteIP(addr string) (netip.Addr, bool) {
	var ip netip.Addr
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		ip = ap.Addr()
	} else if ip, err = netip.ParseAddr(addr); err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}

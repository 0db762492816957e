package integration_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/integration"
)

func TestOutgoingClass(t *testing.T) {
	require.Empty(t, integration.OutgoingClass(context.Background()))
	require.Equal(t, "critical", integration.OutgoingClass(adaptivelimit.WithClass(context.Background(), "critical")))
	require.Empty(t, integration.OutgoingClass(adaptivelimit.WithClass(context.Background(), "a\r\nb")), "a class no wire carries")
	require.Empty(t, integration.OutgoingClass(adaptivelimit.WithClass(context.Background(), "")))
}

func TestInNetworks(t *testing.T) {
	networks := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fe80::/10")}
	in, err := integration.InNetworks(networks)
	require.NoError(t, err)
	networks[0] = netip.MustParsePrefix("0.0.0.0/0") // copied: no change to in
	for addr, want := range map[string]bool{
		"10.1.2.3:8080":          true,
		"10.1.2.3":               true,
		"[::ffff:10.1.2.3]:8080": true, // IPv4-mapped
		"[fe80::1%eth0]:8080":    true, // the zone is ignored
		"11.1.2.3:8080":          false,
		"[2001:db8::1]:8080":     false,
		"127.0.0.1:8080":         false,
		"bufconn":                false, // an in-memory listener's
		"@":                      false, // a Unix socket's
		"":                       false,
		"10.1.2.3:http":          false, // not as a server sees its peer
	} {
		require.Equal(t, want, in(addr), addr)
	}

	none, err := integration.InNetworks(nil)
	require.NoError(t, err)
	require.False(t, none("10.1.2.3:8080"), "no networks: no address")

	_, err = integration.InNetworks([]netip.Prefix{networks[1], {}})
	require.EqualError(t, err, "network 1 (invalid Prefix) is not valid")
}

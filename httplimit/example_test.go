package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/httplimit"
)

// Shed load: a request that finds the limit full gets 503 and Retry-After at once.
func ExampleMiddleware() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "api", InitialLimit: 1, MaxLimit: 1})
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "hello\n") })
	srv := httptest.NewServer(httplimit.Middleware(limiter)(hello))
	defer srv.Close()

	permit, _ := limiter.Acquire() // another request holds the only slot
	resp, _ := http.Get(srv.URL)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, ", Retry-After: ", resp.Header.Get("Retry-After"), ", ", string(body))
	permit.Done(nil)

	resp, _ = http.Get(srv.URL)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.Status, ", ", string(body))
	// Output:
	// 503 Service Unavailable, Retry-After: 1, Service Unavailable
	// 200 OK, hello
}

// Limit the calls to a dependency: a full limit fails the call without touching the network.
func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{Name: "inventory", InitialLimit: 1, MaxLimit: 1})
	client := &http.Client{Transport: httplimit.Transport(limiter, http.DefaultTransport)}

	resp, _ := client.Get(srv.URL)
	fmt.Println(resp.Status, limiter.InFlight()) // the open body holds the slot
	_, err := client.Get(srv.URL)
	fmt.Println(errors.Is(err, adaptivelimit.ErrLimitExceeded))
	resp.Body.Close() // frees it
	fmt.Println(limiter.InFlight())
	// Output:
	// 200 OK 1
	// true
	// 0
}

// Priority classes from a request header, and a health check that bypasses the limit.
func ExampleHeaderClass() {
	limiter, _ := adaptivelimit.New(adaptivelimit.Config{
		Name: "api", InitialLimit: 2, MinLimit: 2, MaxLimit: 2,
		Classes: []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "sheddable"}},
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		class, _ := adaptivelimit.ClassFromContext(r.Context())
		fmt.Fprintln(w, "served as", class)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	srv := httptest.NewServer(httplimit.Middleware(limiter,
		httplimit.WithClassFrom(httplimit.HeaderClass("X-Priority", map[string]string{"critical": "critical"}, httplimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8")))),
		httplimit.WithBypass(func(r *http.Request) bool { return r.URL.Path == "/healthz" }),
	)(mux))
	defer srv.Close()

	batch, _ := limiter.Acquire() // a sheddable call holds the one shared slot
	defer batch.Done(nil)
	for _, path := range []string{"/", "/healthz"} {
		for _, priority := range []string{"", "critical", "9999"} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			req.Header.Set("X-Priority", priority)
			resp, err := srv.Client().Do(req)
			if err != nil {
				fmt.Println(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("%s %q: %d %s", path, priority, resp.StatusCode, body)
		}
	}
	// Output:
	// / "": 503 Service Unavailable
	// / "critical": 200 served as critical
	// / "9999": 503 Service Unavailable
	// /healthz "": 200 ok
	// /healthz "critical": 200 ok
	// /healthz "9999": 200 ok
}

// A client sends the class of each request's context in x-criticality, and takes its own
// slot for it; the server's HeaderClass reads it. The gRPC health service, which a server
// behind Middleware may serve, takes no slot on either side (DefaultBypass).
func ExampleWithClassHeader() {
	classes := []adaptivelimit.Class{{Name: "critical", Reserve: 0.5}, {Name: "sheddable"}}
	server, _ := adaptivelimit.New(adaptivelimit.Config{Name: "api", InitialLimit: 2, MinLimit: 2, MaxLimit: 2, Classes: classes})
	srv := httptest.NewServer(httplimit.Middleware(server,
		httplimit.WithClassFrom(httplimit.HeaderClass(httplimit.DefaultClassHeader, map[string]string{"critical": "critical"}, httplimit.TrustNetworks(netip.MustParsePrefix("127.0.0.0/8")))),
	)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class, _ := adaptivelimit.ClassFromContext(r.Context())
		fmt.Fprintf(w, "%s served as %q", r.URL.Path, class)
	})))
	defer srv.Close()
	client, _ := adaptivelimit.New(adaptivelimit.Config{Name: "api-client", Classes: classes})
	c := &http.Client{Transport: httplimit.Transport(client, srv.Client().Transport)}

	shared, _ := server.Acquire() // a sheddable call holds the server's shared slot
	defer shared.Done(nil)
	for _, call := range []struct{ path, class string }{
		{"/orders", "critical"}, {"/orders", "sheddable"}, {"/grpc.health.v1.Health/Check", "sheddable"},
	} {
		req, _ := http.NewRequestWithContext(adaptivelimit.WithClass(context.Background(), call.class), http.MethodGet, srv.URL+call.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %d %s\n", call.class, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	// Output:
	// critical: 200 /orders served as "critical"
	// sheddable: 503 Service Unavailable
	// sheddable: 200 /grpc.health.v1.Health/Check served as ""
}

package httplimit_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

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

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/resilience4cata/adaptivelimit"
)

// realRun is one policy's part of a real-time run: its own HTTP server with
// its own worker pool on loopback, its own clients and the same arrivals as
// every other policy's, since the sources are seeded alike.
type realRun struct {
	sc     *scenario
	pool   *workerPool
	server *http.Server
	url    string
	client *http.Client
	gates  []gate

	mu       sync.Mutex // guards rec, failures and firstErr
	rec      *recorder
	failures int   // calls that failed otherwise than by timing out
	firstErr error // the first of them

	calls sync.WaitGroup // calls and requests still running
}

// runReal runs the scenario in real time: one HTTP server per policy, whose
// workers change on the profile's schedule, with Acquire and Done around each
// request. It prints progress every second on stderr and the report on stdout.
// The policies of one client run side by side; a fleet's run one after the
// other, each for the whole duration, since 8 clients' calls for every policy
// at once would measure the machine's scheduler more than the limiters.
func runReal(ctx context.Context, opts *options, stdout, stderr io.Writer) error {
	sc := &opts.sc
	prof, err := sc.newProfile()
	if err != nil {
		return err
	}
	groups := [][]policy{sc.policies}
	if sc.clients > 1 {
		groups = groups[:0]
		for _, p := range sc.policies {
			groups = append(groups, []policy{p})
		}
	}
	var results []*result
	for _, group := range groups {
		if ctx.Err() != nil {
			break
		}
		rs, err := runTogether(ctx, sc, prof, group, stderr)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	fmt.Fprintln(stdout)
	return report(opts, prof, results, stdout)
}

// runTogether runs the policies side by side for the scenario's duration, or
// until ctx is done, and returns what each measured.
func runTogether(ctx context.Context, sc *scenario, prof profile, policies []policy, stderr io.Writer) ([]*result, error) {
	runs := make([]*realRun, 0, len(policies))
	defer func() {
		for _, r := range runs {
			r.server.Close()
			r.client.CloseIdleConnections()
		}
	}()
	for _, p := range policies {
		r, err := startRealRun(sc, p, prof.steps[0].servers)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	labels := make([]string, len(runs))
	for i, r := range runs {
		labels[i] = r.rec.res.policy.label
	}
	fmt.Fprintf(stderr, "limitsim -real: %s, each with its own HTTP server on loopback, for %s\n", strings.Join(labels, ", "), sc.duration)

	runCtx, cancel := context.WithTimeout(ctx, sc.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for _, r := range runs {
		for i := range sc.sourceCount() {
			src := newSource(sc.seed, i, int32(i%sc.clients), sc)
			wg.Go(func() { r.generate(runCtx, start, src) })
		}
	}
	wg.Go(func() { followProfile(runCtx, start, prof, runs) })
	sampleEvery(runCtx, sc, runs, stderr)
	wg.Wait()

	results := make([]*result, len(runs))
	for i, r := range runs {
		r.calls.Wait()
		for _, g := range r.gates {
			r.rec.res.leaked += g.inFlight()
		}
		if r.rec.res.leaked != 0 {
			return nil, fmt.Errorf("%s: %d slots still held after the run drained", r.rec.res.policy.label, r.rec.res.leaked)
		}
		if r.failures > 0 {
			fmt.Fprintf(stderr, "%s: %d calls failed otherwise than by a timeout, left out of the table; the first: %v\n",
				r.rec.res.policy.label, r.failures, r.firstErr)
		}
		results[i] = r.rec.res
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "interrupted after %s: the report covers that part\n", time.Since(start).Round(time.Second))
	}
	return results, nil
}

func startRealRun(sc *scenario, p policy, servers int) (*realRun, error) {
	r := &realRun{
		sc:   sc,
		pool: newWorkerPool(servers),
		rec:  newRecorder(p, sc.clients, 0),
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 4096,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		}},
	}
	for c := range sc.clients {
		g, err := p.newGate(adaptivelimit.NanotimeClock(), c, sc)
		if err != nil {
			return nil, err
		}
		r.gates = append(r.gates, g)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "http://" + ln.Addr().String() + "/"
	r.server = &http.Server{Handler: r.pool, ReadHeaderTimeout: 10 * time.Second}
	go r.server.Serve(ln)
	return r, nil
}

// generate sends src's calls at their Poisson arrival times until ctx is done.
func (r *realRun) generate(ctx context.Context, start time.Time, src *source) {
	at := time.Duration(0)
	for {
		at += time.Duration(src.gap())
		service := time.Duration(src.serviceTime())
		if wait := time.Until(start.Add(at)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if ctx.Err() != nil {
			return
		}
		r.calls.Add(1)
		go r.call(src.client, service)
	}
}

// call is one call as an application makes it: Acquire, the request with a
// timeout, then Done with the outcome. At the timeout the caller stops waiting
// and finishes its permit with context.DeadlineExceeded, a drop; the request
// itself runs on, as it would in a server that cannot be interrupted.
func (r *realRun) call(client int32, service time.Duration) {
	defer r.calls.Done()
	r.mu.Lock()
	r.rec.offer(client)
	r.rec.unloaded(int64(min(service, r.sc.timeout)))
	r.mu.Unlock()
	permit, ok := r.gates[client].acquire(0) // -real has no classes (validate)
	if !ok {
		r.mu.Lock()
		r.rec.reject(client)
		r.mu.Unlock()
		return
	}
	begin := time.Now()
	answer := make(chan error, 1)
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		answer <- r.send(service)
	}()
	timer := time.NewTimer(r.sc.timeout)
	var err error
	select {
	case err = <-answer:
	case <-timer.C:
		err = context.DeadlineExceeded
	}
	timer.Stop()
	latency := time.Since(begin)
	r.gates[client].release(&permit, err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		r.failures++
		r.firstErr = cmp.Or(r.firstErr, err)
		return
	}
	r.rec.answer(client, int64(latency), err == nil)
}

func (r *realRun) send(service time.Duration) error {
	q := url.Values{"service": {service.String()}, "budget": {r.sc.timeout.String()}}
	// The caller's own timeout is in call; this one only bounds a stuck server.
	ctx, cancel := context.WithTimeout(context.Background(), r.sc.timeout+service+10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusGatewayTimeout: // the deadline passed in the server's queue
		return context.DeadlineExceeded
	default:
		return errors.New(resp.Status)
	}
	return nil
}

// followProfile changes every server's workers at the profile's instants.
func followProfile(ctx context.Context, start time.Time, prof profile, runs []*realRun) {
	for _, step := range prof.steps[1:] {
		t := time.NewTimer(time.Until(start.Add(time.Duration(step.at))))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		for _, r := range runs {
			r.pool.setWorkers(step.servers)
		}
	}
}

// sampleEvery closes a window of every run's timeline each window until ctx
// is done, and prints a progress line about once a second.
func sampleEvery(ctx context.Context, sc *scenario, runs []*realRun, stderr io.Writer) {
	ticker := time.NewTicker(sc.window)
	defer ticker.Stop()
	perLine := max(1, int(time.Second/sc.window))
	for n := 1; ; n++ {
		last := false
		select {
		case <-ctx.Done():
			// The run's end and the last tick come together: the last window is sampled
			// once, here or at its tick.
			if time.Duration(n)*sc.window > sc.duration {
				return
			}
			last = true
		case <-ticker.C:
		}
		at := int64(n) * int64(sc.window)
		var line strings.Builder
		fmt.Fprintf(&line, "%4.0fs  servers %d", time.Duration(at).Seconds(), runs[0].pool.capacity())
		for _, r := range runs {
			r.mu.Lock()
			r.rec.sample(at, r.pool.capacity(), r.gates, sc.window.Seconds())
			s := r.rec.res.timeline[len(r.rec.res.timeline)-1]
			r.mu.Unlock()
			limit := "∞"
			if s.limit != unlimited {
				limit = strconv.FormatFloat(s.exact, 'f', -1, 64)
				if s.exact != math.Trunc(s.exact) { // paced limiters' shares
					limit = strconv.FormatFloat(s.exact, 'f', 2, 64)
				}
			}
			fmt.Fprintf(&line, " | %s: limit %s, %.0f/s, p99 %.0f ms", r.rec.res.policy.label, limit, s.goodput, float64(s.p99)/1e6)
		}
		if n%perLine == 0 {
			fmt.Fprintln(stderr, line.String())
		}
		if last {
			return
		}
	}
}

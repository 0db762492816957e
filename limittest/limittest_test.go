package limittest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resilience4cata/adaptivelimit"
	"github.com/resilience4cata/adaptivelimit/limittest"
)

// recorder is a testing.TB whose Fatalf stops the helper it is given to, and records why.
type recorder struct {
	testing.TB
	failure string
}

type fatal struct{}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	panic(fatal{})
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// failure runs f with a recorder and returns why it failed, or "".
func failure(t *testing.T, f func(tb testing.TB)) string {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil && v != (fatal{}) {
				panic(v)
			}
		}()
		f(r)
	}()
	return r.failure
}

func TestClassified(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "sample"},
		{context.DeadlineExceeded, "drop"},
		{errors.New("bad request"), "none"},
	} {
		l, clock := limittest.Fixed(t, "classified", 1)
		_, _ = adaptivelimit.Do(context.Background(), l, func(context.Context) (int, error) {
			clock.Advance(time.Second)
			return 0, tc.err
		})
		if got := limittest.Classified(t, l); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.err, got, tc.want)
		}
	}
	l, _ := limittest.Fixed(t, "held", 1)
	p, _ := l.Acquire()
	defer p.Cancel()
	if got := failure(t, func(tb testing.TB) { limittest.Classified(tb, l) }); got != "1 calls hold a slot" {
		t.Errorf("Classified with a call running: %q", got)
	}
}

func TestRequireNoSlotLost(t *testing.T) {
	l, _ := limittest.Fixed(t, "admits", 2)
	if got := failure(t, func(tb testing.TB) { limittest.RequireNoSlotLost(tb, l, 2) }); got != "" {
		t.Fatalf("a free limit of 2: %s", got)
	}
	if l.InFlight() != 0 {
		t.Fatalf("RequireNoSlotLost left %d calls in flight", l.InFlight())
	}
	lost, _ := l.Acquire()
	if got := failure(t, func(tb testing.TB) { limittest.RequireNoSlotLost(tb, l, 2) }); got != "1 calls hold a slot after the call ended" {
		t.Errorf("a lost slot: %q", got)
	}
	lost.Cancel()
	if got := failure(t, func(tb testing.TB) { limittest.RequireNoSlotLost(tb, l, 1) }); got != "call 2 of a limit of 1 admitted" {
		t.Errorf("a limit above n: %q", got)
	}
	if l.InFlight() != 0 {
		t.Fatalf("RequireNoSlotLost left %d calls in flight", l.InFlight())
	}
}

func TestWaitFree(t *testing.T) {
	l, _ := limittest.Fixed(t, "wait", 1)
	p, _ := l.Acquire()
	go func() { time.Sleep(10 * time.Millisecond); p.Done(nil) }()
	limittest.WaitFree(t, l)
	p2, _ := l.Acquire()
	defer p2.Cancel()
	if got := failure(t, func(tb testing.TB) { limittest.WaitFree(tb, l) }); got != "1 calls still hold a slot" {
		t.Errorf("WaitFree with a call that never ends: %q", got)
	}
}

func TestDeadlineContext(t *testing.T) {
	ctx := limittest.NewDeadlineContext()
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	ctx.Pass()
	ctx.Pass()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal(ctx.Err())
	}
}

func TestPanickingError(t *testing.T) {
	var err error = (*limittest.PanickingError)(nil)
	defer func() {
		if recover() == nil {
			t.Error("DefaultDropOn read a PanickingError without a panic")
		}
	}()
	adaptivelimit.DefaultDropOn(err)
}

// ClassTraffic leaves a Classed limiter with known counts, and frees its slots when the test
// ends.
func TestClassTraffic(t *testing.T) {
	l := limittest.Classed(t, "api", 10)
	t.Run("traffic", func(t *testing.T) {
		limittest.ClassTraffic(t, l)
		s := l.Snapshot()
		if got, want := s.Classes, []adaptivelimit.ClassSnapshot{
			{Name: "critical", Reserved: 5, InFlight: 1},
			{Name: "batch", Reserved: 0, InFlight: 6, Rejected: 1},
		}; !slices.Equal(got, want) {
			t.Fatalf("classes %+v, want %+v", got, want)
		}
	})
	if n := l.InFlight(); n != 0 {
		t.Fatalf("%d calls in flight after the test", n)
	}
}

// A classed limiter's slots are taken for its highest class, which may hold every one; a
// lost slot of any class is found.
func TestRequireNoSlotLostClassed(t *testing.T) {
	l := limittest.Classed(t, "classed", 2)
	if got := failure(t, func(tb testing.TB) { limittest.RequireNoSlotLost(tb, l, 2) }); got != "" {
		t.Fatalf("a free classed limit of 2: %s", got)
	}
	for _, class := range []string{"critical", "batch"} {
		lost, err := l.AcquireClass(class)
		if err != nil {
			t.Fatal(err)
		}
		if got := failure(t, func(tb testing.TB) { limittest.RequireNoSlotLost(tb, l, 2) }); got != "1 calls hold a slot after the call ended" {
			t.Errorf("a lost %s slot: %q", class, got)
		}
		lost.Cancel()
	}
	finish := limittest.HoldClassed(t, l)
	if got := l.InFlight(); got != 2 {
		t.Errorf("HoldClassed holds %d slots, want 2", got)
	}
	finish()
	if got := l.InFlight(); got != 0 {
		t.Errorf("%d slots held after HoldClassed's finish", got)
	}
}

// Queue readies a Fixed limiter so that a departure that runs past 20.1 ms is a drop where the
// dependency queued, and ignored where it did not; Departed tells which.
func TestQueueAndDeparted(t *testing.T) {
	for _, tc := range []struct {
		queued bool
		ran    time.Duration
		want   string
	}{
		{false, time.Second, "none"},
		{true, time.Second, "drop"},
		{true, 40 * time.Millisecond, "drop"},
		{true, 15 * time.Millisecond, "none"},
	} {
		l, clock := limittest.Fixed(t, "api", 1)
		limittest.Queue(t, l, clock, tc.queued, tc.ran)
		before := l.Snapshot()
		p, err := l.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(tc.ran)
		p.Finish(adaptivelimit.Departed)
		if got := limittest.Departed(t, l, before); got != tc.want {
			t.Errorf("queued %v, ran %v: %s, want %s", tc.queued, tc.ran, got, tc.want)
		}
		if tc.want == "drop" && tc.ran >= time.Second && l.Snapshot().Windows != 3 {
			t.Errorf("queued %v, ran %v: the departure closed no window", tc.queued, tc.ran)
		}
	}
}

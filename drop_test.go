package adaptivelimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

type netErr struct{ timeout bool }

func (e netErr) Error() string   { return "net" }
func (e netErr) Timeout() bool   { return e.timeout }
func (e netErr) Temporary() bool { return false }

func TestDefaultDropOn(t *testing.T) {
	inner, err := New(Config{Name: "inner"})
	require.NoError(t, err)
	cases := []struct {
		err  error
		drop bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{os.ErrDeadlineExceeded, true},
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true},
		{netErr{timeout: true}, true},
		{fmt.Errorf("dial: %w", netErr{timeout: true}), true},
		{errors.Join(io.EOF, netErr{timeout: true}), true},
		{inner.rejection, true},
		{fmt.Errorf("inner: %w", ErrLimitExceeded), true},
		{netErr{timeout: false}, false},
		{context.Canceled, false},
		{fmt.Errorf("caller left: %w", context.Canceled), false},
		{io.EOF, false},
		{errors.New("404 not found"), false},
		{errors.Join(io.EOF, errors.New("x")), false},
	}
	for _, tc := range cases {
		t.Run(tc.err.Error(), func(t *testing.T) {
			require.Equal(t, tc.drop, DefaultDropOn(tc.err))
		})
	}
}

func TestCustomDropOn(t *testing.T) {
	overloaded := errors.New("503")
	l, clock := newManual(t, Config{Algorithm: AIMD, MinWindowSamples: 1, DropOn: func(err error) bool { return errors.Is(err, overloaded) }})
	p, err := l.Acquire()
	require.NoError(t, err)
	clock.Advance(l.cfg.Window)
	p.Done(fmt.Errorf("backend: %w", overloaded))
	require.Positive(t, l.Snapshot().Last.Drops)
	require.Equal(t, 18, l.Limit())
}

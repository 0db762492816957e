package failsafelimit

import (
	"errors"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/common"
	"github.com/failsafe-go/failsafe-go/policy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/resilience4cata/adaptivelimit"
)

// New returns a policy that runs each execution inside l. It panics if l is nil.
func New[R any](l *adaptivelimit.Limiter) failsafe.Policy[R] {
	if l == nil {
		panic("failsafelimit: nil limiter")
	}
	return &limitPolicy[R]{l: l}
}

type limitPolicy[R any] struct {
	l *adaptivelimit.Limiter
}

// ResultAgnostic marks the policy as one that never changes a result, so that
// failsafe.Executor.ComposeAny takes it for any R.
func (*limitPolicy[R]) ResultAgnostic() {}

func (p *limitPolicy[R]) ToExecutor(_ R) any {
	e := &executor[R]{l: p.l}
	e.Executor = e
	return e
}

// executor is the policy.Executor of a limitPolicy.
type executor[R any] struct {
	policy.BaseExecutor[R]
	l *adaptivelimit.Limiter
}

var _ policy.Executor[any] = (*executor[any])(nil)

func (e *executor[R]) Apply(innerFn func(failsafe.Execution[R]) *common.PolicyResult[R]) func(failsafe.Execution[R]) *common.PolicyResult[R] {
	return func(exec failsafe.Execution[R]) *common.PolicyResult[R] {
		execInternal := exec.(policy.ExecutionInternal[R])
		ctx := exec.Context()
		p, err := e.l.AcquireContext(ctx)
		if err != nil {
			if canceled, result := execInternal.IsCanceledWithResult(); canceled {
				return result
			}
			return &common.PolicyResult[R]{Error: err, Done: true}
		}
		if ctx.Value(policy.CheckOnlyKey) != nil {
			p.Cancel()
			return innerFn(exec)
		}
		defer p.Cancel() // innerFn panicked: Done has not cleared p
		result := innerFn(exec)
		switch {
		case exec.IsCanceled():
			p.Cancel()
		case errors.Is(result.Error, timeout.ErrExceeded):
			p.Finish(adaptivelimit.Drop)
		default:
			p.Done(result.Error)
		}
		return result
	}
}

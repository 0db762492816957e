package adaptivelimit

import "github.com/resilience4cata/adaptivelimit/internal/hook"

func init() {
	hook.Waits = func(l any) bool { return l.(*Limiter).cfg.MaxWait > 0 }
	hook.TimeCalls = func(l any) { l.(*Limiter).timing.Store(true) }
}

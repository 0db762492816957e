package adaptivelimit

import (
	"context"
	"log/slog"
)

// LogLimitChanges returns a Config.OnLimitChange that logs each change of the limit to
// logger at Info, with the limiter's name and the decision's fields as attributes. A nil
// logger means slog.Default() at the time of each change.
func LogLimitChanges(logger *slog.Logger) func(name string, d Decision) {
	return func(name string, d Decision) {
		l := logger
		if l == nil {
			l = slog.Default()
		}
		l.LogAttrs(context.Background(), slog.LevelInfo, "adaptive limit changed",
			slog.String("name", name),
			slog.Int("limitBefore", d.LimitBefore),
			slog.Int("limitAfter", d.LimitAfter),
			slog.Int("samples", d.Samples),
			slog.Int("drops", d.Drops),
			slog.Duration("meanLatency", d.MeanLatency),
			slog.Int("maxInFlight", d.MaxInFlight),
			slog.Duration("longLatency", d.LongLatency),
			slog.Float64("gradient", d.Gradient),
			slog.String("cause", d.Cause.String()),
		)
	}
}

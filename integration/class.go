package integration

import "github.com/resilience4cata/adaptivelimit/internal/names"

// Sendable reports whether a client may send class, the priority class of a call's context,
// in a header or in gRPC metadata: whether it follows the rule of Config.Classes' names
// (printable ASCII, neither starting nor ending with a space), which every wire carries
// as it is. A class that no Config checked (adaptivelimit.WithClass takes any string) and
// that breaks the rule is not sent: a client never fails a call for its class.
func Sendable(class string) bool { return names.Class(class) }

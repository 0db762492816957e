// Package grpclimit puts an adaptive limit in front of gRPC services (server interceptors,
// for load shedding) and in front of a gRPC dependency (client interceptors).
//
// A server interceptor answers a call that finds the limit full with codes.ResourceExhausted
// (see WithRejectionCode) and the retry pushback hint grpc-retry-pushback-ms in the trailers
// (see WithPushback), without calling the handler. A client interceptor fails such a call
// with an error whose status has the same code and that matches
// adaptivelimit.ErrLimitExceeded, without sending it.
//
// Each call that is admitted ends with an [adaptivelimit.Outcome] that the classifier (DefaultClassifier,
// see WithClassifier) decides from its status. A stream holds its slot until it ends.
//
// With a limiter that has priority classes, the client interceptors send the context's class
// in the x-criticality metadata (see WithClassMetadata), and WithClassFrom with
// MetadataClass gives a server's calls their class. WithBypass keeps calls out of the limit:
// by default, those of the gRPC health service (DefaultBypass).
package grpclimit

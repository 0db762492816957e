//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// func addSample(s *stripe, latency, drop, peak uint64)
TEXT ·addSample(SB), NOSPLIT, $0-32
	MOVD s+0(FP), R0
	MOVD latency+8(FP), R1
	MOVD drop+16(FP), R2
	MOVD peak+24(FP), R3
	LDP  stripe_latency(R0), (R4, R5)
	ADD  R1, R4, R4
	ADD  $1, R5, R5
	STP  (R4, R5), stripe_latency(R0)
	LDP  stripe_drops(R0), (R6, R7)
	ADD  R2, R6, R6
	CMP  R7, R3
	CSEL HI, R3, R7, R7
	STP  (R6, R7), stripe_drops(R0)
	RET

//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// STRIPE sets s to the calling thread's stripe: base + (hash(g.m) & mask) * stripe size.
// Clobbers tmp.
#define STRIPE(base, mask, s, tmp) \
	MOVD 48(g), s                   \
	MOVD $0x9E3779B97F4A7C15, tmp   \
	MUL  tmp, s, s                  \
	LSR  $32, s, s                  \
	AND  mask, s, s                 \
	ADD  s<<const_stripeShift, base, s

// func addSample(base *stripe, mask, latency, drop, peak uint64)
TEXT ·addSample(SB), NOSPLIT, $0-40
	MOVD base+0(FP), R0
	MOVD mask+8(FP), R1
	STRIPE(R0, R1, R2, R3)
	MOVD latency+16(FP), R0
	MOVD drop+24(FP), R1
	MOVD peak+32(FP), R3
	LDP  stripe_latency(R2), (R4, R5)
	ADD  R0, R4, R4
	ADD  $1, R5, R5
	STP  (R4, R5), stripe_latency(R2)
	LDP  stripe_drops(R2), (R6, R7)
	ADD  R1, R6, R6
	CMP  R7, R3
	CSEL HI, R3, R7, R7
	STP  (R6, R7), stripe_drops(R2)
	RET

// func addRejection(base *stripe, mask uint64)
TEXT ·addRejection(SB), NOSPLIT, $0-16
	MOVD base+0(FP), R0
	MOVD mask+8(FP), R1
	STRIPE(R0, R1, R2, R3)
	MOVD stripe_rejected(R2), R0
	ADD  $1, R0, R0
	MOVD R0, stripe_rejected(R2)
	RET

//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// func addSample(s *stripe, latency, drop, peak uint64)
TEXT ·addSample(SB), NOSPLIT, $0-32
	MOVD  s+0(FP), R0
	MOVD  latency+8(FP), R1
	MOVD  drop+16(FP), R2
	MOVD  peak+24(FP), R3
	LSR   $32, R1, R8
	MOVWU R1, R1
	LDP   stripe_latencyLow(R0), (R4, R5)
	ADD   R1, R4, R4
	ADD   R8, R5, R5
	STP   (R4, R5), stripe_latencyLow(R0)
	LDP   stripe_samples(R0), (R6, R7)
	ADD   $1, R6, R6
	ADD   R2, R7, R7
	STP   (R6, R7), stripe_samples(R0)
	MOVD  stripe_peak(R0), R9
	CMP   R9, R3
	CSEL  HI, R3, R9, R9
	MOVD  R9, stripe_peak(R0)
	RET

//go:build !purego

#include "textflag.h"

// func ticks() int64
// CNTVCT_EL0 is the architected virtual counter: one counter for all processors, readable
// from user space, and what the runtime's own clock reads on arm64.
TEXT ·ticks(SB), NOSPLIT, $0-8
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func counterFrequency() int64
TEXT ·counterFrequency(SB), NOSPLIT, $0-8
	MRS  CNTFRQ_EL0, R0
	MOVD R0, ret+0(FP)
	RET

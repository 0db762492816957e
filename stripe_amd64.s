//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// func addSample(s *stripe, latency, drop, peak uint64)
TEXT ·addSample(SB), NOSPLIT, $0-32
	MOVQ s+0(FP), AX
	MOVQ latency+8(FP), BX
	MOVQ drop+16(FP), CX
	MOVQ peak+24(FP), DX
	MOVQ BX, SI
	SHRQ $32, SI
	MOVL BX, BX
	ADDQ BX, stripe_latencyLow(AX)
	ADDQ SI, stripe_latencyHigh(AX)
	INCQ stripe_samples(AX)
	ADDQ CX, stripe_drops(AX)
	CMPQ DX, stripe_peak(AX)
	JLS  done
	MOVQ DX, stripe_peak(AX)

done:
	RET

//go:build !purego

#include "textflag.h"
#include "go_asm.h"

// STRIPE sets s to the calling thread's stripe: base + (hash(g.m) & mask) * stripe size.
// Clobbers tmp.
#define STRIPE(base, mask, s, tmp) \
	MOVQ  (TLS), s                   \
	MOVQ  48(s), s                   \
	MOVQ  $0x9E3779B97F4A7C15, tmp   \
	IMULQ tmp, s                     \
	SHRQ  $32, s                     \
	ANDQ  mask, s                    \
	SHLQ  $const_stripeShift, s      \
	ADDQ  base, s

// func addSample(base *stripe, mask, latency, drop, peak uint64)
TEXT ·addSample(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), AX
	MOVQ mask+8(FP), BX
	STRIPE(AX, BX, SI, DI)
	MOVQ latency+16(FP), AX
	MOVQ drop+24(FP), BX
	MOVQ peak+32(FP), CX
	ADDQ AX, stripe_latency(SI)
	INCQ stripe_samples(SI)
	ADDQ BX, stripe_drops(SI)
	CMPQ CX, stripe_peak(SI)
	JLS  done
	MOVQ CX, stripe_peak(SI)

done:
	RET

// func addRejection(base *stripe, mask uint64)
TEXT ·addRejection(SB), NOSPLIT, $0-16
	MOVQ base+0(FP), AX
	MOVQ mask+8(FP), BX
	STRIPE(AX, BX, SI, DI)
	INCQ stripe_rejected(SI)
	RET

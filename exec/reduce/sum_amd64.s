#include "textflag.h"

// func sumFloat32(d, s []float32)
// d[i] += s[i] for i < len(d); len(s) >= len(d) (checked by the caller).
// SSE (ADDPS), part of the amd64 baseline: 16 elements per iteration in
// four independent registers, then one at a time (ADDSS). Each element is
// one IEEE single-precision addition, as in the Go loop, so results are
// bit-identical to it.
TEXT ·sumFloat32(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
f32loop:
	CMPQ CX, $16
	JLT  f32tail
	MOVUPS 0(DI), X0
	MOVUPS 16(DI), X1
	MOVUPS 32(DI), X2
	MOVUPS 48(DI), X3
	MOVUPS 0(SI), X4
	MOVUPS 16(SI), X5
	MOVUPS 32(SI), X6
	MOVUPS 48(SI), X7
	ADDPS  X4, X0
	ADDPS  X5, X1
	ADDPS  X6, X2
	ADDPS  X7, X3
	MOVUPS X0, 0(DI)
	MOVUPS X1, 16(DI)
	MOVUPS X2, 32(DI)
	MOVUPS X3, 48(DI)
	ADDQ   $64, DI
	ADDQ   $64, SI
	SUBQ   $16, CX
	JMP    f32loop
f32tail:
	TESTQ CX, CX
	JEQ   f32done
	MOVSS 0(DI), X0
	ADDSS 0(SI), X0
	MOVSS X0, 0(DI)
	ADDQ  $4, DI
	ADDQ  $4, SI
	DECQ  CX
	JMP   f32tail
f32done:
	RET

// func sumFloat64(d, s []float64)
// As sumFloat32 with ADDPD / ADDSD: 8 elements per iteration.
TEXT ·sumFloat64(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
f64loop:
	CMPQ CX, $8
	JLT  f64tail
	MOVUPD 0(DI), X0
	MOVUPD 16(DI), X1
	MOVUPD 32(DI), X2
	MOVUPD 48(DI), X3
	MOVUPD 0(SI), X4
	MOVUPD 16(SI), X5
	MOVUPD 32(SI), X6
	MOVUPD 48(SI), X7
	ADDPD  X4, X0
	ADDPD  X5, X1
	ADDPD  X6, X2
	ADDPD  X7, X3
	MOVUPD X0, 0(DI)
	MOVUPD X1, 16(DI)
	MOVUPD X2, 32(DI)
	MOVUPD X3, 48(DI)
	ADDQ   $64, DI
	ADDQ   $64, SI
	SUBQ   $8, CX
	JMP    f64loop
f64tail:
	TESTQ CX, CX
	JEQ   f64done
	MOVSD 0(DI), X0
	ADDSD 0(SI), X0
	MOVSD X0, 0(DI)
	ADDQ  $8, DI
	ADDQ  $8, SI
	DECQ  CX
	JMP   f64tail
f64done:
	RET

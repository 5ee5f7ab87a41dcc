#include "textflag.h"

// func dot4AVX(a, b *float32, n int, acc *[4]float32)
// The four partial sums of dot (vector.go) over the first n floats, n a
// multiple of 8, with the Go loop's exact operations: the products of
// eight, rounded; lane i plus lane i+4, rounded; added to accumulator i,
// rounded. IEEE addition commutes, so the result is bit for bit the Go
// loop's (which the compiler does not fuse into FMA on amd64).
TEXT ·dot4AVX(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ acc+24(FP), DX
	VXORPS X0, X0, X0

loop:
	CMPQ CX, $8
	JL   done
	VMOVUPS 0(SI), Y1
	VMULPS 0(DI), Y1, Y1
	VEXTRACTF128 $1, Y1, X2
	VADDPS X2, X1, X1
	VADDPS X1, X0, X0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop

done:
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot8AVX2(q *float32, c *int8, n int) float32
// The inner product of n floats with n int8 values, each widened to
// float32, sixteen at a time.
TEXT ·dot8AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop16:
	CMPQ CX, $16
	JL   loop8
	VPMOVSXBD 0(DI), Y4
	VPMOVSXBD 8(DI), Y5
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VFMADD231PS 0(SI), Y4, Y0
	VFMADD231PS 32(SI), Y5, Y1
	ADDQ $64, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JMP  loop16

loop8:
	CMPQ CX, $8
	JL   reduce
	VPMOVSXBD 0(DI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS 0(SI), Y4, Y0
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

tail:
	CMPQ CX, $0
	JE   done
	MOVBQSX (DI), AX
	VCVTSI2SSQ AX, X2, X2
	VFMADD231SS (SI), X2, X0
	ADDQ $4, SI
	INCQ DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func popcounts6AVX512(codes, planes *uint64, n int, out *uint32)
// For each of n codes of six words, Σ_b 2^b·popcount(code & plane_b) over
// the four query planes (planes holds 24 words: plane 0, then 1, 2, 3),
// written to out[i]. The six words of a code fill six lanes of a zmm
// register (a masked load), so a plane costs one AND and one VPOPCNTQ.
TEXT ·popcounts6AVX512(SB), NOSPLIT, $0-32
	MOVQ codes+0(FP), SI
	MOVQ planes+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ out+24(FP), DI
	MOVQ $0x3f, AX
	KMOVB AX, K1
	VMOVDQU64.Z 0(DX), K1, Z4
	VMOVDQU64.Z 48(DX), K1, Z5
	VMOVDQU64.Z 96(DX), K1, Z6
	VMOVDQU64.Z 144(DX), K1, Z7

loop:
	CMPQ CX, $0
	JE   done
	VMOVDQU64.Z 0(SI), K1, Z0
	VPANDQ Z0, Z4, Z8
	VPANDQ Z0, Z5, Z9
	VPANDQ Z0, Z6, Z10
	VPANDQ Z0, Z7, Z11
	VPOPCNTQ Z8, Z8
	VPOPCNTQ Z9, Z9
	VPOPCNTQ Z10, Z10
	VPOPCNTQ Z11, Z11
	VPSLLQ $1, Z9, Z9
	VPSLLQ $2, Z10, Z10
	VPSLLQ $3, Z11, Z11
	VPADDQ Z9, Z8, Z8
	VPADDQ Z11, Z10, Z10
	VPADDQ Z10, Z8, Z8
	VEXTRACTI64X4 $1, Z8, Y12
	VPADDQ Y12, Y8, Y8
	VEXTRACTI128 $1, Y8, X12
	VPADDQ X12, X8, X8
	VPSHUFD $0x4e, X8, X12
	VPADDQ X12, X8, X8
	VMOVQ X8, AX
	MOVL AX, (DI)
	ADDQ $48, SI
	ADDQ $4, DI
	DECQ CX
	JMP  loop

done:
	VZEROUPPER
	RET

#include "textflag.h"

// func blockMasksAVX2(src *byte, blocks int, pats uint32, dst *[4]uint64)
//
// For each 64-byte block of src, four masks (bit i: byte i of the block
// equals one of pats' bytes, lowest first) are written to dst, four
// words per block.
TEXT ·blockMasksAVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVL pats+16(FP), AX
	MOVQ dst+24(FP), DI

	VMOVD AX, X0
	VPBROADCASTB X0, Y1
	SHRL $8, AX
	VMOVD AX, X0
	VPBROADCASTB X0, Y2
	SHRL $8, AX
	VMOVD AX, X0
	VPBROADCASTB X0, Y3
	SHRL $8, AX
	VMOVD AX, X0
	VPBROADCASTB X0, Y4

loop:
	TESTQ CX, CX
	JZ    done
	VMOVDQU 0(SI), Y5
	VMOVDQU 32(SI), Y6

	VPCMPEQB  Y1, Y5, Y7
	VPCMPEQB  Y1, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 0(DI)

	VPCMPEQB  Y2, Y5, Y7
	VPCMPEQB  Y2, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 8(DI)

	VPCMPEQB  Y3, Y5, Y7
	VPCMPEQB  Y3, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 16(DI)

	VPCMPEQB  Y4, Y5, Y7
	VPCMPEQB  Y4, Y6, Y8
	VPMOVMSKB Y7, AX
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, 24(DI)

	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JMP  loop

done:
	VZEROUPPER
	RET

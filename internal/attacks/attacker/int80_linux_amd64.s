#include "textflag.h"

// func int80(nr uintptr) uintptr: a system call through the i386 table.
TEXT ·int80(SB),NOSPLIT,$0-16
	MOVQ	nr+0(FP), AX
	INT	$0x80
	MOVQ	AX, ret+8(FP)
	RET

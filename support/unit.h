/* support/unit.h - a private build of pe.h + ffn.h seen through a table of function pointers,
   for the programs that run two builds of the same code side by side in one process:
   bench/ (a plain -O2 build beside the -march=native one, and the headers of an older
   revision) and tools/fastmath_check.c (a -ffast-math build beside a strict one).
   Everything else includes the headers directly and picks paths through
   support/harness.h.

   support/unit.c, compiled with -DUNIT_GETTER=<name> and the build's flags, holds a
   private (PE_STATIC / FFN_STATIC) copy of both libraries and exports only <name>().
   The table has one member per public function (support/api.h), named as the function;
   a function the build's headers predate is NULL. */
#ifndef SUPPORT_UNIT_H
#define SUPPORT_UNIT_H

#include "../pe.h"    /* the declarations (types) only */
#include "../ffn.h"
#include "api.h"

#define UNIT_MEMBER(name, ret, params) ret (*name) params;
#define UNIT_V(h) (h##_VERSION_MAJOR * 100 + h##_VERSION_MINOR)   /* 2.0: 200 */
#if UNIT_V(FFN) < 200  /* (the bench's PREV= build) 1.x lacks 2.0's types: untyped members */
#define UNIT_MEMBER_200(name, ret, params) void (*name)(void);
#else
#define UNIT_MEMBER_200 UNIT_MEMBER
#endif
typedef struct unit {
    const char *flags;      /* UNIT_FLAGS, as the build was compiled */
    int openmp;             /* compiled with OpenMP */
    PE_API(UNIT_MEMBER)
    FFN_API_102(UNIT_MEMBER) FFN_API_105(UNIT_MEMBER) FFN_API_106(UNIT_MEMBER)
    FFN_API_107(UNIT_MEMBER) FFN_API_200(UNIT_MEMBER_200)
} unit;
#undef UNIT_MEMBER
#undef UNIT_MEMBER_200

#endif /* SUPPORT_UNIT_H */

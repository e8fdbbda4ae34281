/* fuzz target: pe_embed (int32 ids) */
#define FZ_I64 0
#include "pe_embed.inc"

/* fuzz target: pe_embed_i64 */
#define FZ_I64 1
#include "pe_embed.inc"

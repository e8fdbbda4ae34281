/* fuzz target: ffn_block */
#define FZ_PACKED 0
#include "block.inc"

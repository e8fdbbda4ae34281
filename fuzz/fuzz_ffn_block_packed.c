/* fuzz target: ffn_block_packed */
#define FZ_PACKED 1
#include "block.inc"

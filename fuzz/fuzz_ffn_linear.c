/* fuzz target: ffn_linear */
#define FZ_PACKED 0
#include "linear.inc"

/* fuzz target: ffn_linear_packed */
#define FZ_PACKED 1
#include "linear.inc"

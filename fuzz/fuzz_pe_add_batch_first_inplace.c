/* fuzz target: pe_add_batch_first_inplace */
#define FZ_SEQ_FIRST 0
#define FZ_INPLACE 1
#include "pe_add.inc"

/* fuzz target: pe_add_batch_first */
#define FZ_SEQ_FIRST 0
#define FZ_INPLACE 0
#include "pe_add.inc"

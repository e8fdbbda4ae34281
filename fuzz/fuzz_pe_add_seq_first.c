/* fuzz target: pe_add_seq_first */
#define FZ_SEQ_FIRST 1
#define FZ_INPLACE 0
#include "pe_add.inc"

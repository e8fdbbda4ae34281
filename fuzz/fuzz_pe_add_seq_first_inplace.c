/* fuzz target: pe_add_seq_first_inplace */
#define FZ_SEQ_FIRST 1
#define FZ_INPLACE 1
#include "pe_add.inc"

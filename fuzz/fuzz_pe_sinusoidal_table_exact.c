/* fuzz target: pe_sinusoidal_table_exact */
#define FZ_EXACT 1
#include "pe_table.inc"

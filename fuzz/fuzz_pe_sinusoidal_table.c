/* fuzz target: pe_sinusoidal_table */
#define FZ_EXACT 0
#include "pe_table.inc"

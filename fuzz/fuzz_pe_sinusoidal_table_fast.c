/* fuzz target: pe_sinusoidal_table_fast */
#define FZ_EXACT 2
#include "pe_table.inc"

/* fuzz target: pe_status_string */
#define FZ_LIB "pe"
#define FZ_STATUS_STRING pe_status_string
#define FZ_LAST (-7) /* PE_ERR_ID_RANGE (fz.h sees only impl.h, not pe.h) */
#include "status_string.inc"

/* fuzz target: ffn_status_string */
#define FZ_LIB "ffn"
#define FZ_STATUS_STRING ffn_status_string
#define FZ_LAST (-5) /* FFN_ERR_ALIAS (fz.h sees only impl.h, not ffn.h) */
#include "status_string.inc"

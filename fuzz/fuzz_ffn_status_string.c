/* fuzz target: ffn_status_string. Any int gives a non-NULL, NUL-terminated message; the
   documented statuses give distinct messages ("ok" for FFN_OK, "ffn: ..." otherwise), any
   other value "ffn: unknown status"; fast and scalar builds agree. */
#include "fz.h"

static void check(const fz_impl *I, int st)
{
    const char *s = I->ffn_status_string(st);
    FZ_CHECK(s != NULL, "%s ffn_status_string(%d) is NULL", I->name, st);
    FZ_CHECK(strlen(s) < 200, "ffn_status_string(%d) too long", st);
    if (st == 0) {
        FZ_CHECK(strcmp(s, "ok") == 0, "ffn_status_string(0) = '%s'", s);
        return;
    }
    FZ_CHECK(strncmp(s, "ffn: ", 5) == 0, "ffn_status_string(%d) = '%s'", st, s);
    if (st >= -5 && st <= -1) {
        FZ_CHECK(strstr(s, "unknown") == NULL, "ffn_status_string(%d) = '%s'", st, s);
        int j;
        for (j = -5; j <= 0; j++) {
            const char *k = I->ffn_status_string(j);
            FZ_CHECK(j == st || strcmp(k, s) != 0, "ffn statuses %d and %d share '%s'", st,
                     j, s);
        }
    } else {
        FZ_CHECK(strcmp(s, "ffn: unknown status") == 0, "ffn_status_string(%d) = '%s'", st, s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_t f;
    int st;
    fz_init(&f, data, size);
    st = fz_byte(&f) < 128 ? (int)(signed char)fz_byte(&f) : (int)fz_u32(&f);
    check(fz_impl_fast(), st);
    check(fz_impl_scalar(), st);
    FZ_CHECK(strcmp(fz_impl_fast()->ffn_status_string(st),
                    fz_impl_scalar()->ffn_status_string(st)) == 0, "fast != scalar");
    return 0;
}

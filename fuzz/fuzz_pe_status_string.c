/* fuzz target: pe_status_string. Any int gives a non-NULL, NUL-terminated message; the
   documented statuses give distinct messages ("ok" for PE_OK, "pe: ..." otherwise), any
   other value "pe: unknown status"; fast and scalar builds agree. */
#include "fz.h"

static void check(const fz_impl *I, int st)
{
    const char *s = I->pe_status_string(st);
    FZ_CHECK(s != NULL, "%s pe_status_string(%d) is NULL", I->name, st);
    FZ_CHECK(strlen(s) < 200, "pe_status_string(%d) too long", st);
    if (st == 0) {
        FZ_CHECK(strcmp(s, "ok") == 0, "pe_status_string(0) = '%s'", s);
        return;
    }
    FZ_CHECK(strncmp(s, "pe: ", 4) == 0, "pe_status_string(%d) = '%s'", st, s);
    if (st >= -7 && st <= -1) {
        FZ_CHECK(strstr(s, "unknown") == NULL, "pe_status_string(%d) = '%s'", st, s);
        int j;
        for (j = -7; j <= 0; j++) {
            const char *k = I->pe_status_string(j);
            FZ_CHECK(j == st || strcmp(k, s) != 0, "pe statuses %d and %d share '%s'", st,
                     j, s);
        }
    } else {
        FZ_CHECK(strcmp(s, "pe: unknown status") == 0, "pe_status_string(%d) = '%s'", st, s);
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
    FZ_CHECK(strcmp(fz_impl_fast()->pe_status_string(st),
                    fz_impl_scalar()->pe_status_string(st)) == 0, "fast != scalar");
    return 0;
}

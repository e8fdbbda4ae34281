/* test_static.c - PE_STATIC / FFN_STATIC: every function private to its file.
   This file is compiled TWICE into one program (see tests.mk): once with
   -DTEST_STATIC_MAIN (the TU with main) and once without. Each TU has its own static
   implementation of both headers; the link must succeed without duplicate symbols, and
   both private copies must compute the same bits.
   Each TU calls every public function: with PE_STATIC an uncalled function is an unused
   static function, which -Wall reports (-Wunused-function). */
#define PE_STATIC
#define PE_IMPLEMENTATION
#include "../pe.h"
#define FFN_STATIC
#define FFN_IMPLEMENTATION
#include "../ffn.h"
#include "../support/harness.h"

enum { ML = 6, D = 4, B = 2, S = 3, V = 5, H = 6 };

typedef struct {
    float table[ML * D], exact[ML * D], add[4][B * S * D], emb[2][B * S * D];
    float lin[B * S * H], relu[B * S * H], block[B * S * D];
    float lin_packed[B * S * H], block_packed[B * S * D];
    int status;                       /* OR of every status: 0 when all calls succeed */
    const char *(*status_string)(int);
} static_result;

/* Every public function of both headers, with small exact inputs. */
static void exercise(static_result *r)
{
    float x[B * S * D], w1[H * D], b1[H], w2[D * H], b2[D], scratch[B * S * H];
    float w1p[16 * D], w2p[16 * H];     /* packed: H and D are <= 16, one panel each */
    int32_t ids32[B * S];
    int64_t ids64[B * S];
    size_t i, n = ffn_block_scratch_floats(B * S, D, H);
    memset(r, 0, sizeof *r);
    for (i = 0; i < B * S * D; i++) x[i] = (float)((int)(i % 9) - 4) / 8.0f;
    for (i = 0; i < H * D; i++) { w1[i] = (float)((int)(i % 5) - 2) / 8.0f; w2[i] = -w1[i]; }
    for (i = 0; i < H; i++) b1[i] = (float)i / 8.0f;
    for (i = 0; i < D; i++) b2[i] = -(float)i / 8.0f;
    for (i = 0; i < B * S; i++) { ids32[i] = (int32_t)(i % V); ids64[i] = (int64_t)(V - 1 - i % V); }

    r->status |= pe_sinusoidal_table(r->table, ML, D);
    r->status |= pe_sinusoidal_table_exact(r->exact, ML, D);
    r->status |= pe_add_batch_first(r->add[0], x, r->table, B, S, D, ML);
    memcpy(r->add[1], x, sizeof x);
    r->status |= pe_add_batch_first_inplace(r->add[1], r->table, B, S, D, ML);
    r->status |= pe_add_seq_first(r->add[2], x, r->table, S, B, D, ML);
    memcpy(r->add[3], x, sizeof x);
    r->status |= pe_add_seq_first_inplace(r->add[3], r->table, S, B, D, ML);
    /* wte: the exact table's first V rows; wpe: the torch table */
    r->status |= pe_embed(r->emb[0], ids32, r->exact, r->table, B, S, D, V, ML);
    r->status |= pe_embed_i64(r->emb[1], ids64, r->exact, r->table, B, S, D, V, ML);
    r->status |= ffn_linear(r->lin, x, w1, b1, B * S, D, H);
    r->status |= ffn_relu(r->relu, r->lin, B * S * H);
    r->status |= n == B * S * H ? 0 : -100;
    r->status |= ffn_block(r->block, x, w1, b1, w2, b2, B * S, D, H, scratch, n);
    r->status |= ffn_pack_floats(D, H) == 16 * D && ffn_pack_floats(H, D) == 16 * H ? 0 : -300;
    r->status |= ffn_pack_weight(w1p, 16 * D, w1, D, H);
    r->status |= ffn_pack_weight(w2p, 16 * H, w2, H, D);
    r->status |= ffn_linear_packed(r->lin_packed, x, w1p, b1, B * S, D, H);
    r->status |= ffn_block_packed(r->block_packed, x, w1p, b1, w2p, b2, B * S, D, H, scratch, n);
    if (!pe_status_string(PE_OK)[0] || !ffn_status_string(FFN_OK)[0]) r->status |= -200;
    r->status_string = pe_status_string;
}

#ifdef TEST_STATIC_MAIN
void test_static_other(static_result *r);   /* the other TU */

int main(void)
{
    static static_result mine, other;
    exercise(&mine);
    test_static_other(&other);
    th_check(mine.status == 0, "PE_STATIC/FFN_STATIC: every function of this TU's copy -> OK");
    th_check(other.status == 0,
             "PE_STATIC/FFN_STATIC: every function of the other TU's copy -> OK");
    th_check(memcmp(mine.table, other.table, sizeof mine.table) == 0 &&
             memcmp(mine.exact, other.exact, sizeof mine.exact) == 0,
             "both copies give bit-identical tables");
    th_check(memcmp(mine.add, other.add, sizeof mine.add) == 0 &&
             memcmp(mine.emb, other.emb, sizeof mine.emb) == 0,
             "both copies give bit-identical adds and embeddings");
    th_check(memcmp(mine.add[0], mine.add[1], sizeof mine.add[0]) == 0 &&
             memcmp(mine.add[2], mine.add[3], sizeof mine.add[2]) == 0,
             "out-of-place and _inplace adds agree");
    th_check(memcmp(mine.lin, other.lin, sizeof mine.lin) == 0 &&
             memcmp(mine.relu, other.relu, sizeof mine.relu) == 0 &&
             memcmp(mine.block, other.block, sizeof mine.block) == 0,
             "both copies give bit-identical linear, relu and block");
    th_check(memcmp(mine.lin, mine.lin_packed, sizeof mine.lin) == 0 &&
             memcmp(mine.block, mine.block_packed, sizeof mine.block) == 0 &&
             memcmp(other.block_packed, mine.block_packed, sizeof mine.block) == 0,
             "packed linear and block give the unpacked bits");
    th_check(mine.status_string != other.status_string,
             "each TU has its own private pe_status_string");
    return th_summary();
}
#else
void test_static_other(static_result *r);
void test_static_other(static_result *r) { exercise(r); }
#endif

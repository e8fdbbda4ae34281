/* test_two_tu.h - what the two translation units of the two-TU test share: shapes,
   small exact weights, and the result the second TU hands back. C and C++. */
#ifndef TEST_TWO_TU_H
#define TEST_TWO_TU_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { TWO_TU_MAX_LEN = 16, TWO_TU_D = 8, TWO_TU_H = 12, TWO_TU_ROWS = 5 };

typedef struct {
    float table[TWO_TU_MAX_LEN * TWO_TU_D];
    float y[TWO_TU_ROWS * TWO_TU_D];
    const char *(*status_string)(int);
    int (*block)(float *, const float *, const float *, const float *, const float *,
                 const float *, size_t, size_t, size_t, float *, size_t);
    const char *version;
} two_tu_result;

typedef struct {
    float w1[TWO_TU_H * TWO_TU_D], b1[TWO_TU_H], w2[TWO_TU_D * TWO_TU_H], b2[TWO_TU_D];
} two_tu_weights_t;

/* Defined in test_two_tu_b.c (which has no implementation of its own). */
void two_tu_weights(two_tu_weights_t *w);
int two_tu_b_run(two_tu_result *r);

#ifdef __cplusplus
}
#endif
#endif

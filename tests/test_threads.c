/* tests/test_threads.c - many threads make their first call to pe.h and ffn.h at the
   same moment: the path each header picks on first use must come out the same for all,
   and (built with -fsanitize=thread) without a data race.

     cc -std=c99 -O1 -g -fsanitize=thread tests/test_threads.c tests/unit.c -lm -lpthread

   Each thread waits at a barrier, then calls pe_path(), ffn_path(), an add and a small
   Linear, and records the names and the results' bits; every thread must agree with
   the others, and with a call made after they have all finished. */
#if !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t under -std=c99 */
#endif
#include <pthread.h>

#include "../pe.h"
#include "../ffn.h"
#include "harness.h"

enum { THREADS = 8, D = 40, ROWS = 3, OUT = 20 };

typedef struct {
    const char *pe, *ffn;
    float add[D], y[ROWS * OUT];
    int status;
} seen;

static pthread_barrier_t start;
static float x[ROWS * D], table[D], w[OUT * D], b[OUT];

static void calls(seen *s)
{
    s->pe = pe_path();
    s->ffn = ffn_path();
    s->status = pe_add_batch_first(s->add, x, table, 1, 1, D, 1) |
                ffn_linear(s->y, x, w, b, ROWS, D, OUT);
}

static void *worker(void *arg)
{
    pthread_barrier_wait(&start);
    calls((seen *)arg);
    return NULL;
}

int main(void)
{
    static seen s[THREADS + 1];
    pthread_t t[THREADS];
    int i, started = 1;
    for (i = 0; i < ROWS * D; i++) x[i] = (float)(i % 13) / 8.0f - 0.75f;
    for (i = 0; i < D; i++) table[i] = (float)(i % 5) / 4.0f;
    for (i = 0; i < OUT * D; i++) w[i] = (float)(i % 7) / 16.0f - 0.1875f;
    for (i = 0; i < OUT; i++) b[i] = (float)i / 32.0f;
    pthread_barrier_init(&start, NULL, THREADS);
    for (i = 0; i < THREADS; i++)
        started = started && pthread_create(&t[i], NULL, worker, &s[i]) == 0;
    th_check(started, "%d threads started", THREADS);
    if (!started) return th_summary();
    for (i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    calls(&s[THREADS]);
    printf("# first calls chose: pe %s, ffn %s\n", s[THREADS].pe, s[THREADS].ffn);
    for (i = 0; i < THREADS; i++)
        th_check(s[i].status == 0 && strcmp(s[i].pe, s[THREADS].pe) == 0 &&
                     strcmp(s[i].ffn, s[THREADS].ffn) == 0 &&
                     memcmp(s[i].add, s[THREADS].add, sizeof s[i].add) == 0 &&
                     memcmp(s[i].y, s[THREADS].y, sizeof s[i].y) == 0,
                 "thread %d: the same paths (pe %s, ffn %s) and the same bits", i, s[i].pe,
                 s[i].ffn);
    return th_summary();
}

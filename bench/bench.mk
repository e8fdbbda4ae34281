# bench/bench.mk - microbenchmark targets; the top-level Makefile does `include bench/bench.mk`.
#
#   make bench              table: ffn, pe adds, embedding, table vs FMA peak / STREAM
#   make bench BLAS=1       + cblas_sgemm (libopenblas-dev): default core and forced best core
#   make bench JSON=1       JSON Lines on stdout (always also saved to build/bench.jsonl)
#   make bench-smoke        --quick run (< 30 s), for CI
#   make bench-torch        PyTorch on the same shapes, same format (build/bench_torch.jsonl)
#   make bench-plot         build/bench.png from the JSON Lines (python3-matplotlib)
#   BENCH_ARGS="--threads 1 --filter ffn_block"  extra arguments for the bench program
#   BENCH_TORCH_ARGS="--quick"                    extra arguments for bench_torch.py
#
# Needs only cc and make; -march=native and -fopenmp are used when the compiler takes them.
# Probes run lazily (only when a bench target is built) and at most once per make run.

CC ?= cc
# Including this file must not change the including Makefile's default goal.
BENCH_SAVED_GOAL := $(.DEFAULT_GOAL)
BENCH_BUILD ?= build
BENCH_ARGS ?=
BENCH_TORCH_ARGS ?=

# $(call bench_lazy,VAR): VAR := $(shell $(VAR_CMD)), evaluated on first use only.
bench_lazy = $(eval $(1) := $$(shell $$($(1)_CMD)))$($(1))

BENCH_ARCH_CMD = $(CC) -march=native -x c -c /dev/null -o /dev/null 2>/dev/null && echo -march=native \
  || { $(CC) -mcpu=native -x c -c /dev/null -o /dev/null 2>/dev/null && echo -mcpu=native; }
BENCH_OPENMP_CMD = printf '\043include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n' \
  | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp
BENCH_CONTRACT_CMD = $(CC) -ffp-contract=fast -x c -c /dev/null -o /dev/null 2>/dev/null && echo -ffp-contract=fast
# First of /usr/bin/python3, python3 that can import torch (matplotlib for the plot).
BENCH_PY_TORCH_CMD = for p in /usr/bin/python3 python3; do $$p -c 'import torch' >/dev/null 2>&1 && { echo $$p; break; }; done
BENCH_PY_PLOT_CMD = for p in /usr/bin/python3 python3; do $$p -c 'import matplotlib' >/dev/null 2>&1 && { echo $$p; break; }; done
BENCH_ARCH = $(call bench_lazy,BENCH_ARCH)
BENCH_OPENMP = $(call bench_lazy,BENCH_OPENMP)
BENCH_CONTRACT = $(call bench_lazy,BENCH_CONTRACT)
BENCH_PY_TORCH = $(call bench_lazy,BENCH_PY_TORCH)
BENCH_PY_PLOT = $(call bench_lazy,BENCH_PY_PLOT)

BENCH_OPT ?= -O3
BENCH_WARN ?= -std=c99 -Wall -Wextra -Wpedantic
BENCH_CFLAGS = $(BENCH_OPT) $(BENCH_ARCH) $(BENCH_OPENMP) $(BENCH_WARN)
BENCH_PLAIN_CFLAGS = $(BENCH_CFLAGS) $(BENCH_CONTRACT)
BENCH_DEFS = -DBENCH_FLAGS='"$(CC) $(BENCH_CFLAGS)"' -DBENCH_PLAIN_FLAGS='"$(CC) $(BENCH_PLAIN_CFLAGS)"'
BENCH_LIBS = $(BENCH_OPENMP) -lm

BENCH_OBJ := $(BENCH_BUILD)/bench-obj
BENCH_HDRS := pe.h ffn.h bench/impl.h bench/limits.h bench/plain.h bench/timer.h bench/blas.h
BENCH_COMMON := $(BENCH_OBJ)/impl_fast.o $(BENCH_OBJ)/impl_scalar.o $(BENCH_OBJ)/limits.o $(BENCH_OBJ)/plain.o
BENCH_BIN := $(BENCH_BUILD)/bench
BENCH_BLAS_BIN := $(BENCH_BUILD)/bench-blas
BENCH_SO := $(BENCH_BUILD)/libpeffn.so

ifeq ($(BLAS),1)
BENCH_RUN_BIN := $(BENCH_BLAS_BIN)
else
BENCH_RUN_BIN := $(BENCH_BIN)
endif
ifeq ($(JSON),1)
BENCH_OUT_ARGS := --json
BENCH_Q := @
endif

.PHONY: bench bench-smoke bench-torch bench-plot bench-build bench-clean

bench-build: $(BENCH_RUN_BIN)

bench: $(BENCH_RUN_BIN)
	$(BENCH_Q)$(BENCH_RUN_BIN) $(BENCH_OUT_ARGS) --jsonl $(BENCH_BUILD)/bench.jsonl $(BENCH_ARGS)

bench-smoke: $(BENCH_RUN_BIN)
	$(BENCH_Q)$(BENCH_RUN_BIN) --quick $(BENCH_OUT_ARGS) --jsonl $(BENCH_BUILD)/bench-smoke.jsonl $(BENCH_ARGS)

# Limits for the torch rows come from the C bench (same FMA kernels, same STREAM loops).
# The libraries as a shared object too: bench_torch.py interleaves them with torch.
bench-torch: $(BENCH_BIN) $(BENCH_SO)
	@test -n "$(BENCH_PY_TORCH)" || { echo "bench-torch: no python3 with torch found" >&2; exit 1; }
	$(BENCH_Q)$(BENCH_PY_TORCH) bench/bench_torch.py --bench $(BENCH_BIN) --lib $(BENCH_SO) \
	  $(BENCH_OUT_ARGS) --jsonl $(BENCH_BUILD)/bench_torch.jsonl --compare $(BENCH_BUILD)/bench.jsonl \
	  $(BENCH_TORCH_ARGS)

# Only when missing: a run with BLAS=1 or BENCH_ARGS is not overwritten by the plot.
$(BENCH_BUILD)/bench.jsonl:
	$(MAKE) -f $(firstword $(MAKEFILE_LIST)) --no-print-directory bench

bench-plot: $(BENCH_BUILD)/bench.jsonl
	@test -n "$(BENCH_PY_PLOT)" || { echo "bench-plot: no python3 with matplotlib found" >&2; exit 1; }
	$(BENCH_PY_PLOT) bench/plot.py --out $(BENCH_BUILD)/bench.png $(BENCH_BUILD)/bench.jsonl $(wildcard $(BENCH_BUILD)/bench_torch.jsonl)

$(BENCH_SO): bench/shared.c pe.h ffn.h
	@mkdir -p $(BENCH_BUILD)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -o $@ bench/shared.c $(BENCH_LIBS)

$(BENCH_BIN): $(BENCH_OBJ)/bench.o $(BENCH_COMMON)
	$(CC) $(BENCH_CFLAGS) -o $@ $^ $(BENCH_LIBS)

$(BENCH_BLAS_BIN): $(BENCH_OBJ)/bench_blas.o $(BENCH_OBJ)/blas.o $(BENCH_COMMON)
	$(CC) $(BENCH_CFLAGS) -o $@ $^ -lopenblas $(BENCH_LIBS)

$(BENCH_OBJ)/bench.o: bench/bench.c $(BENCH_HDRS) | $(BENCH_OBJ)
	$(CC) $(BENCH_CFLAGS) $(BENCH_DEFS) -c -o $@ bench/bench.c

$(BENCH_OBJ)/bench_blas.o: bench/bench.c $(BENCH_HDRS) | $(BENCH_OBJ)
	$(CC) $(BENCH_CFLAGS) $(BENCH_DEFS) -DBENCH_BLAS -c -o $@ bench/bench.c

$(BENCH_OBJ)/plain.o: bench/plain.c bench/plain.h | $(BENCH_OBJ)
	$(CC) $(BENCH_PLAIN_CFLAGS) -c -o $@ bench/plain.c

$(BENCH_OBJ)/impl_fast.o $(BENCH_OBJ)/impl_scalar.o: $(BENCH_OBJ)/%.o: bench/%.c bench/impl_paths.inc $(BENCH_HDRS) | $(BENCH_OBJ)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_OBJ)/limits.o $(BENCH_OBJ)/blas.o: $(BENCH_OBJ)/%.o: bench/%.c $(BENCH_HDRS) | $(BENCH_OBJ)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_OBJ):
	mkdir -p $@

bench-clean:
	rm -rf $(BENCH_OBJ) $(BENCH_BIN) $(BENCH_BLAS_BIN) $(BENCH_SO) $(BENCH_BUILD)/bench*.jsonl $(BENCH_BUILD)/bench.png

.DEFAULT_GOAL := $(BENCH_SAVED_GOAL)

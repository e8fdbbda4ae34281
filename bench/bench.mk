# bench/bench.mk - microbenchmark targets; the top-level Makefile does `include bench/bench.mk`.
#
#   make bench              every op's rows vs the FMA peak / STREAM at each thread count
#                           (README.md, Performance, says what is measured)
#   make bench THREADS="1 2 4 8 16"   those thread counts (default: 1 and all CPUs)
#   make bench LARGE=1      + rows 4096 and Llama 7B's gated block (minutes on 2 cores)
#   make bench BLAS=1       + cblas_sgemm (libopenblas-dev): default core and forced best core
#   make bench JSON=1       JSON Lines on stdout (always also saved to build/bench.jsonl)
#   make bench-smoke        --quick run (< 30 s), for CI
#   make bench-torch        PyTorch on the same shapes, same format (build/bench_torch.jsonl),
#                           THREADS and LARGE as for make bench: ffn.h beside torch at each count
#   make bench-plot         build/bench.png from the JSON Lines (python3-matplotlib)
#   make bench PREV=<rev>   + pe.h and ffn.h as they were at git revision <rev> (1.2.0 or
#                           later): rows prev* beside the working tree's, and a summary
#   BENCH_ARGS="--threads 1 --filter _act_"      extra arguments for the bench program
#   BENCH_TORCH_ARGS="--quick"                    extra arguments for bench_torch.py
#
# Needs only cc and make; -march=native and -fopenmp are used when the compiler takes them
# (probed lazily, at most once per make run). support/unit.c is linked twice: the native
# build (BENCH_CFLAGS) and a user's plain `cc -O2` (BENCH_O2_CFLAGS), to measure one beside
# the other; with PREV a third time (native flags) against the old headers (build/prev/), so
# that a change to the kernels is measured against its predecessor in the same moments.

CC ?= cc
# Including this file must not change the including Makefile's default goal.
BENCH_SAVED_GOAL := $(.DEFAULT_GOAL)
BENCH_BUILD ?= build
BENCH_ARGS ?=
BENCH_TORCH_ARGS ?=
PREV ?=

# $(call bench_lazy,VAR): VAR := $(shell $(VAR_CMD)), evaluated on first use only.
bench_lazy = $(eval $(1) := $$(shell $$($(1)_CMD)))$($(1))

# The probes compile a line from a pipe, not /dev/null: where /dev/null is a regular file
# (some containers) it holds whatever was last written to it. -Werror: x86 gcc takes
# -mcpu=native as a deprecated -mtune (a warning): no AVX.
BENCH_PROBE_SRC = echo 'int bench_probe;' |
BENCH_ARCH_CMD = $(BENCH_PROBE_SRC) $(CC) -march=native -x c -c - -o /dev/null 2>/dev/null && echo -march=native \
  || { $(BENCH_PROBE_SRC) $(CC) -Werror -mcpu=native -x c -c - -o /dev/null 2>/dev/null && echo -mcpu=native; }
BENCH_OPENMP_CMD = printf '\043include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n' \
  | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp
BENCH_CONTRACT_CMD = $(BENCH_PROBE_SRC) $(CC) -ffp-contract=fast -x c -c - -o /dev/null 2>/dev/null && echo -ffp-contract=fast
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
# No -march, no -fopenmp; only BENCH_OPT's sanitizer flags, so that a sanitized bench
# checks this build too.
BENCH_O2_CFLAGS = -O2 -std=c99 $(filter -g -fsanitize=% -fno-sanitize% -fno-omit-frame-pointer,$(BENCH_OPT))
# Flags as the bench prints them: what shapes the code, not the warnings.
bench_shown = "$(CC) $(filter-out -W%,$(1))"
BENCH_LIBS = $(BENCH_OPENMP) -lm

BENCH_OBJ := $(BENCH_BUILD)/bench-obj
BENCH_STAMP := $(BENCH_OBJ)/flags
BENCH_HDRS := pe.h ffn.h support/unit.h support/api.h bench/limits.h bench/plain.h bench/timer.h bench/blas.h \
  support/shapes.h $(wildcard features/*.inc)
BENCH_COMMON := $(BENCH_OBJ)/unit_native.o $(BENCH_OBJ)/unit_o2.o $(BENCH_OBJ)/limits.o $(BENCH_OBJ)/plain.o
BENCH_BIN := $(BENCH_BUILD)/bench
BENCH_BLAS_BIN := $(BENCH_BUILD)/bench-blas
BENCH_SO := $(BENCH_BUILD)/libpeffn.so
BENCH_PREV_DIR := $(BENCH_BUILD)/prev
BENCH_PREV_STAMP := $(BENCH_OBJ)/prev-rev
ifneq ($(PREV),)
BENCH_COMMON += $(BENCH_OBJ)/unit_prev.o
endif
# $(call bench_prev_version,FFN,ffn.h): that header's version string at PREV.
bench_prev_version = $(shell sed -n 's/.*define $(1)_VERSION_STRING "\(.*\)".*/\1/p' $(BENCH_PREV_DIR)/$(2))
# What bench.c prints about PREV; the stamp holds "<rev> <commit>".
BENCH_PREV_DEFS = $(if $(PREV), -DBENCH_PREV='"$(PREV)"' \
  -DBENCH_PREV_COMMIT='"$(word 2,$(shell cat $(BENCH_PREV_STAMP)))"' \
  -DBENCH_PREV_PE_VERSION='"$(call bench_prev_version,PE,pe.h)"' \
  -DBENCH_PREV_FFN_VERSION='"$(call bench_prev_version,FFN,ffn.h)"')

ifeq ($(BLAS),1)
BENCH_RUN_BIN := $(BENCH_BLAS_BIN)
else
BENCH_RUN_BIN := $(BENCH_BIN)
endif
ifeq ($(JSON),1)
BENCH_OUT_ARGS := --json
BENCH_Q := @
endif
# THREADS="1 2" -> --threads 1,2 for both benches; LARGE=1 -> --large
THREADS ?=
LARGE ?=
bench_comma := ,
bench_space := $(subst ,, )
BENCH_SCALE_ARGS := $(if $(strip $(THREADS)),--threads $(subst $(bench_space),$(bench_comma),$(strip $(THREADS)))) \
  $(if $(filter 1,$(LARGE)),--large)

.PHONY: bench bench-smoke bench-torch bench-plot bench-build bench-clean bench-force

bench-build: $(BENCH_RUN_BIN)

bench: $(BENCH_RUN_BIN)
	$(BENCH_Q)$(BENCH_RUN_BIN) $(BENCH_OUT_ARGS) --jsonl $(BENCH_BUILD)/bench.jsonl $(BENCH_SCALE_ARGS) $(BENCH_ARGS)

bench-smoke: $(BENCH_RUN_BIN)
	$(BENCH_Q)$(BENCH_RUN_BIN) --quick $(BENCH_OUT_ARGS) --jsonl $(BENCH_BUILD)/bench-smoke.jsonl $(BENCH_SCALE_ARGS) $(BENCH_ARGS)

# Limits for the torch rows come from the C bench (same FMA kernels, same STREAM loops).
# The libraries as a shared object too: bench_torch.py interleaves them with torch.
bench-torch: $(BENCH_BIN) $(BENCH_SO)
	@test -n "$(BENCH_PY_TORCH)" || { echo "bench-torch: no python3 with torch found" >&2; exit 1; }
	$(BENCH_Q)$(BENCH_PY_TORCH) bench/bench_torch.py --bench $(BENCH_BIN) --lib $(BENCH_SO) \
	  $(BENCH_OUT_ARGS) --jsonl $(BENCH_BUILD)/bench_torch.jsonl --compare $(BENCH_BUILD)/bench.jsonl \
	  $(BENCH_SCALE_ARGS) $(BENCH_TORCH_ARGS)

# Only when missing: a run with BLAS=1 or BENCH_ARGS is not overwritten by the plot.
$(BENCH_BUILD)/bench.jsonl:
	$(MAKE) -f $(firstword $(MAKEFILE_LIST)) --no-print-directory bench

bench-plot: $(BENCH_BUILD)/bench.jsonl
	@test -n "$(BENCH_PY_PLOT)" || { echo "bench-plot: no python3 with matplotlib found" >&2; exit 1; }
	$(BENCH_PY_PLOT) bench/plot.py --out $(BENCH_BUILD)/bench.png $(BENCH_BUILD)/bench.jsonl $(wildcard $(BENCH_BUILD)/bench_torch.jsonl)

# Both libraries as a shared object: bench_torch.py loads it with ctypes to run them in
# torch's process, their repeats interleaved with torch's.
$(BENCH_SO): support/unit.c pe.h ffn.h $(BENCH_STAMP)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -o $@ support/unit.c $(BENCH_LIBS)

$(BENCH_BIN): $(BENCH_OBJ)/bench.o $(BENCH_COMMON)
	$(CC) $(BENCH_CFLAGS) -o $@ $^ $(BENCH_LIBS)

$(BENCH_BLAS_BIN): $(BENCH_OBJ)/bench_blas.o $(BENCH_OBJ)/blas.o $(BENCH_COMMON)
	$(CC) $(BENCH_CFLAGS) -o $@ $^ -lopenblas $(BENCH_LIBS)

$(BENCH_OBJ)/bench.o $(BENCH_OBJ)/bench_blas.o: bench/bench.c $(BENCH_HDRS) $(BENCH_STAMP) \
  $(BENCH_PREV_STAMP) $(if $(PREV),$(BENCH_PREV_DIR)/support/unit.c)
	$(CC) $(BENCH_CFLAGS) -DBENCH_PLAIN_FLAGS='$(call bench_shown,$(BENCH_PLAIN_CFLAGS))' \
	  $(if $(filter %_blas.o,$@),-DBENCH_BLAS)$(BENCH_PREV_DEFS) -c -o $@ bench/bench.c

$(BENCH_OBJ)/plain.o: bench/plain.c bench/plain.h $(BENCH_STAMP)
	$(CC) $(BENCH_PLAIN_CFLAGS) -c -o $@ bench/plain.c

$(BENCH_OBJ)/unit_native.o: support/unit.c $(BENCH_HDRS) $(BENCH_STAMP)
	$(CC) $(BENCH_CFLAGS) -DUNIT_GETTER=bench_unit_native \
	  -DUNIT_FLAGS='$(call bench_shown,$(BENCH_CFLAGS))' -c -o $@ support/unit.c

$(BENCH_OBJ)/unit_o2.o: support/unit.c $(BENCH_HDRS) $(BENCH_STAMP)
	$(CC) $(BENCH_O2_CFLAGS) $(filter-out -std=%,$(BENCH_WARN)) -DUNIT_GETTER=bench_unit_o2 \
	  -DUNIT_FLAGS='$(call bench_shown,$(BENCH_O2_CFLAGS))' -c -o $@ support/unit.c

# The old headers beside a copy of support/unit.c and unit.h, whose #include "../pe.h"
# then finds them; the table and the getter are today's, so the old headers must
# declare everything the table holds.
$(BENCH_PREV_DIR)/support/unit.c: $(BENCH_PREV_STAMP) support/unit.c support/unit.h support/api.h
	@mkdir -p $(@D)
	@rm -f $@
	@git show '$(PREV):pe.h' > $(BENCH_PREV_DIR)/pe.h && git show '$(PREV):ffn.h' > $(BENCH_PREV_DIR)/ffn.h \
	  || { echo "bench: PREV=$(PREV) has no pe.h and ffn.h" >&2; exit 1; }
	cp support/unit.h support/api.h $(@D)/
	cp support/unit.c $@

$(BENCH_OBJ)/unit_prev.o: $(BENCH_PREV_DIR)/support/unit.c $(BENCH_STAMP)
	@rm -f $@
	@$(CC) $(BENCH_CFLAGS) -DUNIT_GETTER=bench_unit_prev \
	  -DUNIT_FLAGS='"$(CC) $(filter-out -W%,$(BENCH_CFLAGS)) (PREV=$(PREV))"' -c -o $@ $< \
	  || { echo "bench: pe.h/ffn.h of PREV=$(PREV) (ffn.h $(call bench_prev_version,FFN,ffn.h))" \
	       "do not compile with support/unit.c: the bench needs the same unit table (the path" \
	       "functions, the RoPE scaling type, ...), which pe.h 1.3.0 and ffn.h 1.2.0 on have" >&2; exit 1; }
	@echo "bench: PREV=$(PREV): $< built against its pe.h $(call bench_prev_version,PE,pe.h)," \
	  "ffn.h $(call bench_prev_version,FFN,ffn.h)"

$(BENCH_OBJ)/limits.o $(BENCH_OBJ)/blas.o: $(BENCH_OBJ)/%.o: bench/%.c $(BENCH_HDRS) $(BENCH_STAMP)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

# Rewritten only when CC or the flags differ from the last build's, so that objects
# follow them (`make bench-smoke CC=clang` after a gcc build rebuilds everything).
$(BENCH_STAMP): bench-force
	@mkdir -p $(@D)
	@f='$(CC) $(BENCH_CFLAGS) $(BENCH_CONTRACT) / $(BENCH_O2_CFLAGS)'; \
	  [ "$$f" = "$$(cat $@ 2>/dev/null)" ] || echo "$$f" > $@

# "<rev> <commit>" of PREV (empty without PREV), rewritten only when it changes: a new
# PREV, or a PREV such as HEAD that now names another commit, extracts the headers again.
$(BENCH_PREV_STAMP): bench-force
	@mkdir -p $(@D)
	@s=; if [ -n '$(PREV)' ]; then \
	  c=$$(git rev-parse --verify --quiet '$(PREV)^{commit}') \
	    || { echo "bench: PREV=$(PREV) is not a git revision" >&2; exit 1; }; \
	  s='$(PREV)'" $$c"; fi; \
	  [ -f $@ ] && [ "$$s" = "$$(cat $@)" ] || echo "$$s" > $@

bench-clean:
	rm -rf $(BENCH_OBJ) $(BENCH_PREV_DIR) $(BENCH_BIN) $(BENCH_BLAS_BIN) $(BENCH_SO) $(BENCH_BUILD)/bench*.jsonl $(BENCH_BUILD)/bench.png

.DEFAULT_GOAL := $(BENCH_SAVED_GOAL)

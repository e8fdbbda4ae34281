# tests/tests.mk - the C test suite; included by the top-level Makefile (run from the repo root).
#
#   make test-c                         every run below, then one summary line per run
#   make test-c TC_MANIFEST=path        another golden manifest
#   make test-c CC=clang                the same with another compiler (own build directory)
#   make build/tests/cc/scalar/test_golden     a single binary (build/tests/<CC>/<variant>/)
#
# The runs:
#   golden-V, errors-V  test_golden (reference/goldens/MANIFEST.txt) and test_errors, for
#                       every code path this machine can execute (variant V):
#                         scalar    -O2 -DPE_NO_SIMD -DFFN_NO_SIMD  (the readable C paths)
#                         default   -O2                (the baseline ISA: SSE2 on x86-64)
#                         native    -O3 -march=native  (AVX2 + FMA here), if CC accepts it
#                         nontemp   -O2 -march=native -DPE_NONTEMPORAL_BYTES=0: every add
#                                   and embedding writes with non-temporal stores (x86);
#                                   with -fopenmp (if CC links it), as openmp below
#                         openmp    -O3 -march=native -fopenmp, run with OMP_NUM_THREADS=3;
#                                   -DPE__PARALLEL_FLOATS=0: pe.h's ops split even the
#                                   smallest shapes among the threads (some get nothing),
#                                   if CC links it
#                         sanitize  -O1 -g -march=native -fsanitize=address,undefined, if CC
#                                   links it (catches reads/writes past a buffer's end)
#   paths-V             test_ffn_paths for the native, openmp and sanitize variants: ffn.h's
#                       fast path against its scalar path (bit-identical packed/unpacked and
#                       across thread counts, as accurate against float64, guard floats)
#   npy                 test_npy: the .npy reader the golden runner relies on
#   two-tu              the headers in two translation units, the implementation in one
#   two-tu-cxx          the same with the second TU compiled as C++ (skipped without CXX)
#   static              PE_STATIC + FFN_STATIC: two TUs each with a private implementation
#   hdr-COMPILER        each header (and tests/npy.h) alone, declarations only and with its
#                       implementation, -Wall -Wextra -Wpedantic -Werror, for each code
#                       path: C99 with gcc and clang, C++11 with g++ and clang++
#                       (tests/check_headers.sh; a missing compiler is a SKIP, not a failure)
# A failing run does not stop the others; test-c fails at the end if any run failed.
# Needs a C compiler and make, no Python. A missing golden manifest is a failure.

CC  ?= cc
CXX ?= c++

TC_MANIFEST ?= reference/goldens/MANIFEST.txt
TC_HDR_CCS  ?= gcc clang
TC_HDR_CXXS ?= g++ clang++
TC_CFLAGS   ?=
TC_WARN     := -Wall -Wextra -Wpedantic -Werror
TC_STD      := -std=c99

# One build directory per compiler, so that `make test-c CC=clang` does not reuse gcc's
# binaries.
tc_empty :=
tc_space := $(tc_empty) $(tc_empty)
TC_OUT   := build/tests/$(subst $(tc_space),_,$(subst /,_,$(strip $(CC))))
TC_LOGS  := build/tests/logs

# What CC can do here (probed once per make invocation, a few ms each).
TC_HAVE_NATIVE := $(shell $(CC) -march=native -E -x c /dev/null >/dev/null 2>&1 && echo y)
TC_HAVE_OPENMP := $(shell echo 'int main(void){return 0;}' | \
                    $(CC) -fopenmp -x c - -o /dev/null >/dev/null 2>&1 && echo y)
TC_HAVE_SAN    := $(shell echo 'int main(void){return 0;}' | \
                    $(CC) -fsanitize=address,undefined -x c - -o /dev/null >/dev/null 2>&1 && echo y)
TC_HAVE_CXX    := $(shell command -v $(CXX) >/dev/null 2>&1 && echo y)
TC_NATIVE      := $(if $(TC_HAVE_NATIVE),-march=native)

TC_FLAGS_scalar   := -O2 -DPE_NO_SIMD -DFFN_NO_SIMD
TC_FLAGS_default  := -O2
TC_FLAGS_native   := -O3 -march=native
TC_FLAGS_nontemp  := -O2 $(TC_NATIVE) -DPE_NONTEMPORAL_BYTES=0 \
                     $(if $(TC_HAVE_OPENMP),-fopenmp -DPE__PARALLEL_FLOATS=0)
TC_FLAGS_openmp   := -O3 $(TC_NATIVE) -fopenmp -DPE__PARALLEL_FLOATS=0
TC_FLAGS_sanitize := -O1 -g $(TC_NATIVE) -fsanitize=address,undefined \
                     -fno-sanitize-recover=all -fno-omit-frame-pointer

# Environment of each variant's runs. openmp: 3 threads, more than this machine's 2 cores
# and an uneven split of the work.
TC_ENV_openmp   := OMP_NUM_THREADS=3
TC_ENV_nontemp  := OMP_NUM_THREADS=3
TC_ENV_sanitize := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0

TC_VARIANTS := scalar default $(if $(TC_HAVE_NATIVE),native) nontemp \
               $(if $(TC_HAVE_OPENMP),openmp) \
               $(if $(TC_HAVE_SAN),sanitize)
TC_SKIPPED  := $(if $(TC_HAVE_NATIVE),,native:$(CC)_rejects_-march=native) \
               $(if $(TC_HAVE_OPENMP),,openmp:$(CC)_cannot_link_-fopenmp) \
               $(if $(TC_HAVE_SAN),,sanitize:$(CC)_cannot_link_-fsanitize=address+undefined)
# paths-V: ffn.h's fast path of variant V against its scalar path and float64
# (tests/test_ffn_paths.c); the scalar and default variants have no fast GEMM to compare.
TC_PATH_VARIANTS := $(filter native openmp sanitize,$(TC_VARIANTS))
TC_RUNS     := $(foreach v,$(TC_VARIANTS),golden-$(v) errors-$(v)) \
               $(foreach v,$(TC_PATH_VARIANTS),paths-$(v)) npy two-tu two-tu-cxx \
               static $(addprefix hdr-,$(TC_HDR_CCS) $(TC_HDR_CXXS))

.PHONY: test-c tc-force

# The test binaries are reached through the run targets' pattern rules; without this make
# would treat them as intermediate files and delete them after each run.
.SECONDARY: $(foreach v,$(TC_VARIANTS),$(TC_OUT)/$(v)/test_golden $(TC_OUT)/$(v)/test_errors \
              $(TC_OUT)/$(v)/test_ffn_paths)

# ---- binaries -------------------------------------------------------------------------

TC_DEPS := pe.h ffn.h tests/tests.mk

$(TC_OUT)/%/test_golden: tests/test_golden.c tests/npy.h $(TC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) $(TC_FLAGS_$*) $(TC_CFLAGS) $< -o $@ -lm

$(TC_OUT)/%/test_errors: tests/test_errors.c $(TC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) $(TC_FLAGS_$*) $(TC_CFLAGS) $< -o $@ -lm

# One source, three objects: the scalar unit (FFN_NO_SIMD), the fast unit (variant flags)
# and the test itself (see the top of tests/test_ffn_paths.c).
$(TC_OUT)/%/test_ffn_paths: tests/test_ffn_paths.c $(TC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(filter -fsanitize% -fno-%,$(TC_FLAGS_$*)) $(TC_CFLAGS) -DTEST_FFN_UNIT=1 -c $< -o $@_scalar.o
	$(CC) $(TC_STD) $(TC_WARN) $(TC_FLAGS_$*) $(TC_CFLAGS) -DTEST_FFN_UNIT=2 -c $< -o $@_fast.o
	$(CC) $(TC_STD) $(TC_WARN) $(TC_FLAGS_$*) $(TC_CFLAGS) $< $@_scalar.o $@_fast.o -o $@ -lm

$(TC_OUT)/test_npy: tests/test_npy.c tests/npy.h tests/tests.mk
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(TC_CFLAGS) $< -o $@ -lm

$(TC_OUT)/two_tu: tests/test_two_tu_a.c tests/test_two_tu_b.c tests/test_two_tu.h $(TC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(TC_CFLAGS) -c tests/test_two_tu_a.c -o $@_a.o
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(TC_CFLAGS) -c tests/test_two_tu_b.c -o $@_b.o
	$(CC) $@_a.o $@_b.o -o $@ -lm

# The implementation TU in C, the calling TU compiled as C++: extern "C" must line up.
$(TC_OUT)/two_tu_cxx: tests/test_two_tu_a.c tests/test_two_tu_b.c tests/test_two_tu.h $(TC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(TC_CFLAGS) -c tests/test_two_tu_a.c -o $@_a.o
	$(CXX) -x c++ -std=c++11 $(TC_WARN) -O2 -c tests/test_two_tu_b.c -o $@_b.o
	$(CXX) $@_a.o $@_b.o -o $@ -lm

# test_static.c twice, with and without main: each object has its own static copy.
$(TC_OUT)/static: tests/test_static.c $(TC_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(TC_CFLAGS) -DTEST_STATIC_MAIN -c $< -o $@_main.o
	$(CC) $(TC_STD) $(TC_WARN) -O2 $(TC_CFLAGS) -c $< -o $@_other.o
	$(CC) $@_main.o $@_other.o -o $@ -lm

# ---- runs -------------------------------------------------------------------------------

# $(call tc_run,NAME,COMMAND): show COMMAND's output, keep it in the log, record its exit
# status. The recipe itself succeeds, so that every run happens; test-c judges at the end.
define tc_run
	@mkdir -p $(TC_LOGS); rm -f $(TC_LOGS)/$(1).rc
	@echo "== $(1): $(2)"
	@{ $(2); echo $$? > $(TC_LOGS)/$(1).rc; } 2>&1 | tee $(TC_LOGS)/$(1).log
endef

# Run targets are pattern rules (phony targets would skip the implicit rule search), made
# to run every time by tc-force.
tc-run-golden-%: $(TC_OUT)/%/test_golden tc-force
	$(call tc_run,golden-$*,$(TC_ENV_$*) ./$< $(TC_MANIFEST))

tc-run-errors-%: $(TC_OUT)/%/test_errors tc-force
	$(call tc_run,errors-$*,$(TC_ENV_$*) ./$<)

tc-run-paths-%: $(TC_OUT)/%/test_ffn_paths tc-force
	$(call tc_run,paths-$*,$(TC_ENV_$*) ./$<)

tc-run-npy: $(TC_OUT)/test_npy tc-force
	$(call tc_run,npy,./$< tests/fixtures)

tc-run-two-tu: $(TC_OUT)/two_tu tc-force
	$(call tc_run,two-tu,./$<)

ifeq ($(TC_HAVE_CXX),y)
tc-run-two-tu-cxx: $(TC_OUT)/two_tu_cxx tc-force
	$(call tc_run,two-tu-cxx,./$<)
else
tc-run-two-tu-cxx: tc-force
	$(call tc_run,two-tu-cxx,echo "SKIP $(CXX) not found")
endif

tc-run-static: $(TC_OUT)/static tc-force
	$(call tc_run,static,./$<)

$(addprefix tc-run-hdr-,$(TC_HDR_CCS)): tc-run-hdr-%: tc-force
	$(call tc_run,hdr-$*,sh tests/check_headers.sh $* c)

$(addprefix tc-run-hdr-,$(TC_HDR_CXXS)): tc-run-hdr-%: tc-force
	$(call tc_run,hdr-$*,sh tests/check_headers.sh $* c++)

tc-force:

# ---- the summary ---------------------------------------------------------------------------

test-c: $(addprefix tc-run-,$(TC_RUNS))
	@echo "== test-c summary (CC=$(CC), manifest $(TC_MANIFEST))"; \
	fail=0; \
	for r in $(TC_RUNS); do \
	  rc=$$(cat $(TC_LOGS)/$$r.rc 2>/dev/null || echo none); \
	  last=$$(tail -n 1 $(TC_LOGS)/$$r.log 2>/dev/null); \
	  case "$$rc:$$last" in \
	    0:SKIP*) st=SKIP ;; \
	    0:*)     st=PASS ;; \
	    *)       st=FAIL; fail=1; last="exit status $$rc; $$last" ;; \
	  esac; \
	  printf '%-4s %-16s %s\n' "$$st" "$$r" "$$last"; \
	done; \
	for s in $(TC_SKIPPED); do \
	  printf 'SKIP %-16s %s\n' "$${s%%:*}" "$$(echo "$${s#*:}" | tr _ ' ')"; \
	done; \
	np=0; nf=0; \
	for r in $(TC_RUNS); do \
	  last=$$(tail -n 1 $(TC_LOGS)/$$r.log 2>/dev/null); rc=$$(cat $(TC_LOGS)/$$r.rc 2>/dev/null || echo 1); \
	  case "$$last" in \
	    *" passed, "*" failed") p=$${last%% passed*}; f=$${last#*passed, }; f=$${f%% failed*}; \
	      np=$$((np + p)); nf=$$((nf + f)); [ "$$rc" = 0 ] || [ "$$f" != 0 ] || nf=$$((nf + 1)) ;; \
	    SKIP*) ;; \
	    *) nf=$$((nf + 1)) ;; \
	  esac; \
	done; \
	if [ $$fail = 0 ]; then echo "test-c: all runs passed (logs in $(TC_LOGS)/)"; \
	else echo "test-c: FAILED (logs in $(TC_LOGS)/)"; fi; \
	echo "$$np passed, $$nf failed"; \
	[ $$fail = 0 ] && [ $$nf = 0 ]

# mk/portability.mk - portability, robustness and analysis targets for pe.h and ffn.h.
# Included by the top-level Makefile (run from the repository root); each target is a
# script in tools/ that prints one line per run, a summary, and exits non-zero on any
# failure. Missing tools are installed with apt-get when run as root (tools/need.sh),
# otherwise the target says which Debian packages are missing and fails.
#
#   make cross-test      the suite built with Debian's cross compilers, run under
#                        qemu-user: aarch64 (NEON and scalar), armhf, riscv64, s390x
#                        (big-endian), big-endian goldens on x86-64      (~3 min)
#   make compilers-test  gcc/clang -std=c99/c11, g++/clang++ -std=c++11/c++17, each at
#                        -O0/-O2/-O3 -march=native with -Wall -Wextra -Wpedantic -Werror;
#                        tcc; the -ffast-math legs                        (~5 min)
#   make sanitize        the suite under ASan + UBSan (clang, gcc+OpenMP)  (~1 min)
#   make valgrind        the suite under memcheck: no error, no leak       (~3 min)
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (default 60),
#                        FUZZ_JOBS at a time (default: the number of CPUs) (~10 min)
#   make coverage        line/branch coverage of pe.h and ffn.h, >= 95% / 90% (~1 min)
#   make lint            cppcheck + clang-tidy (checks in .clang-tidy and tools/lint.sh)
#   make check-all       `make test`, all of the above, and what is too slow for CI: the extra
#                        cross configurations (aarch64+OpenMP, armhf+NEON, big-endian
#                        goldens on s390x) and CHECK_ALL_FUZZ_SECONDS (120) per target
#   make fuzz-seeds      regenerate the committed seed corpus fuzz/corpus/
#
# Build outputs go to build/{cross,compilers,sanitize,valgrind,fuzz,coverage,lint}/.

FUZZ_SECONDS ?= 60
FUZZ_JOBS ?=
CHECK_ALL_FUZZ_SECONDS ?= 120

.PHONY: cross-test compilers-test sanitize valgrind fuzz coverage lint check-all fuzz-seeds

cross-test:
	@sh tools/cross_test.sh

compilers-test:
	@sh tools/compilers_test.sh

sanitize:
	@sh tools/sanitize.sh

valgrind:
	@sh tools/valgrind.sh

fuzz:
	@FUZZ_SECONDS=$(FUZZ_SECONDS) $(if $(FUZZ_JOBS),FUZZ_JOBS=$(FUZZ_JOBS)) sh tools/fuzz.sh

coverage:
	@sh tools/coverage.sh

lint:
	@sh tools/lint.sh

fuzz-seeds:
	@sh tools/make_seeds.sh

# Every check, continuing after a failure; one line per check at the end.
CHECK_ALL_STEPS := test lint sanitize coverage valgrind compilers-test cross-test fuzz
check-all:
	@mkdir -p build/check-all; rm -f build/check-all/summary.new; fail=0; \
	for s in $(CHECK_ALL_STEPS); do \
	  echo "=================== $$s"; t0=$$(date +%s); \
	  case $$s in \
	    cross-test) CROSS_ALL=1 sh tools/cross_test.sh ;; \
	    fuzz) FUZZ_SECONDS=$(CHECK_ALL_FUZZ_SECONDS) $(if $(FUZZ_JOBS),FUZZ_JOBS=$(FUZZ_JOBS)) sh tools/fuzz.sh ;; \
	    compilers-test) sh tools/compilers_test.sh ;; \
	    test) $(MAKE) --no-print-directory test ;; \
	    *) sh tools/$$s.sh ;; \
	  esac > build/check-all/$$s.log 2>&1; rc=$$?; \
	  tail -n 25 build/check-all/$$s.log; \
	  if [ $$rc = 0 ]; then r=PASS; else r=FAIL; fail=1; fi; \
	  echo "$$r $$s ($$(( $$(date +%s) - t0 )) s)" >> build/check-all/summary.new; \
	done; \
	echo "=================== check-all summary (logs in build/check-all/)"; \
	cat build/check-all/summary.new; rm -f build/check-all/summary.new; \
	if [ $$fail = 0 ]; then echo "check-all: everything passed"; \
	else echo "check-all: FAILED"; exit 1; fi

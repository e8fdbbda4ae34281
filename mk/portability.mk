# mk/portability.mk - portability, robustness and analysis targets for pe.h and ffn.h.
# Included by the top-level Makefile (run from the repository root); each target is a
# script in tools/ that prints one line per run, a summary, and exits non-zero on any
# failure; its last line is the wall time it took here (no estimates are kept: the time
# depends on the machine and what else runs on it). Missing tools are installed with
# apt-get, without asking, when run as root (tools/need.sh; NEED_NO_INSTALL=1 turns that
# off), otherwise the target says which Debian packages are missing and fails.
#
#   make cross-test      the suite built with Debian's cross compilers, run under
#                        qemu-user: aarch64 (NEON and scalar), armhf, riscv64, s390x
#                        (big-endian), big-endian goldens on x86-64; with musl; for
#                        Windows under wine; every build's golden digests equal to
#                        this host's
#   make compilers-test  gcc/clang -std=c99/c11, g++/clang++ -std=c++11/c++17, each at
#                        -O0/-O2/-O3 -march=native with -Wall -Wextra -Wpedantic -Werror;
#                        tcc; the -ffast-math legs
#   make sanitize        the suite under ASan + UBSan (clang, gcc+OpenMP)
#   make valgrind        the suite under memcheck: no error, no leak
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (default 60),
#                        FUZZ_JOBS at a time (default: the number of CPUs)
#   make coverage        line/branch coverage of pe.h and ffn.h, >= 99% / 90%
#   make lint            cppcheck + clang-tidy (checks in .clang-tidy and tools/lint.sh)
#   make check-all       `make test`, all of the above, and what is too slow for CI: the extra
#                        cross configurations (aarch64+OpenMP, armhf+NEON, big-endian
#                        goldens on s390x) and CHECK_ALL_FUZZ_SECONDS (120) per target
#   make fuzz-seeds      regenerate the committed seed corpus fuzz/corpus/
#
# Build outputs go to build/{cross,compilers,sanitize,valgrind,fuzz,coverage,lint}/.

CHECK_ALL_FUZZ_SECONDS ?= 120

.PHONY: cross-test compilers-test sanitize valgrind fuzz coverage lint check-all fuzz-seeds

# (the scripts read their variables, FUZZ_SECONDS=5 among them, from the environment)
# ($(call timed,...): the Makefile's)
cross-test compilers-test sanitize valgrind fuzz coverage lint:
	@$(call timed,sh tools/$(subst -,_,$@).sh)

fuzz-seeds:
	@$(call timed,sh tools/make_seeds.sh)

# Every check, continuing after a failure; one line per check at the end. Through
# $(MAKE), so that make -n check-all shows the commands instead of running them.
CHECK_ALL := test lint sanitize coverage valgrind compilers-test cmake-test cross-test,CROSS_ALL=1 \
             fuzz,FUZZ_SECONDS=$(CHECK_ALL_FUZZ_SECONDS)
check-all:
	@mkdir -p build/check-all; : > build/check-all/summary; t00=$$(date +%s); \
	for s in $(CHECK_ALL); do n=$${s%%,*}; log=build/check-all/$$n.log; t0=$$(date +%s); \
	  echo "=================== $$n"; \
	  if $(MAKE) --no-print-directory $$(echo $$s | tr , ' ') > $$log 2>&1; then r=PASS; else r=FAIL; fi; \
	  tail -n 25 $$log; echo "$$r $$n ($$(( $$(date +%s) - t0 )) s)" >> build/check-all/summary; \
	done; \
	echo "=================== check-all summary (logs in build/check-all/)"; \
	cat build/check-all/summary; echo "check-all: $$(( $$(date +%s) - t00 )) s (wall time here)"; \
	! grep -q ^FAIL build/check-all/summary || { echo "check-all: FAILED"; exit 1; }; \
	echo "check-all: everything passed"

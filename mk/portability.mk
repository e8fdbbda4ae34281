# mk/portability.mk - the portability, robustness and analysis targets, each a script
# tools/<target>.sh (its top comment says what it runs; README.md, "How it is checked",
# lists them and the Debian packages each needs, installed by tools/need.sh when run as
# root). Each prints one line per run, a summary, and its wall time here (the time
# depends on the machine: no estimates are kept); non-zero exit on any failure.
# make fuzz-seeds regenerates the committed seed corpus fuzz/corpus/. Build outputs
# go to build/{cross,compilers,sanitize,valgrind,fuzz,coverage,lint}/.

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

# pe.h and ffn.h -- build, test, benchmark. README.md ("How it is checked") lists the
# targets; each rule here, in bench/bench.mk and in mk/portability.mk says what it does.
#   make test        golden-value and bad-input tests (needs only a C compiler)
#   make example     build and run examples/gpt_input.c
#   make example-llama  build and run examples/llama_mlp.c (a Llama MLP from a .safetensors file)
#   make reference   regenerate reference/goldens with PyTorch
# Everything is built into build/.

CC      ?= cc
CFLAGS  ?= -O2
WARN    := -Wall -Wextra -Wpedantic
BUILD   := build

# A Python that can import torch: Debian's python3-torch installs for /usr/bin/python3,
# which need not be the python3 first on PATH.
PYTHON ?= $(shell for p in /usr/bin/python3 python3 python; do \
            $$p -c 'import torch, numpy, mpmath' >/dev/null 2>&1 && { command -v $$p; break; }; done)

.PHONY: all test example example-llama example-train example-force reference reference-check need-python \
        clean cmake-test snippets-test exhaustive exhaustive-sample
all: test

$(BUILD):
	@mkdir -p $(BUILD)

# $(call timed,COMMAND): runs it, then prints "TARGET: N s (wall time here)" and keeps its
# exit status: the long targets say what they took on this machine (README keeps no
# estimates).
timed = t0=$$(date +%s); $(1); rc=$$?; echo "$@: $$(( $$(date +%s) - t0 )) s (wall time here)"; exit $$rc

include bench/bench.mk
-include mk/portability.mk

# The suite in every build configuration (tests/run.sh says which).
test:
	@CC="$(CC)" $(if $(MANIFEST),MANIFEST="$(MANIFEST)") sh tests/run.sh

# The example's compiler and flags, rewritten only when they change, so that
# `make example CFLAGS="-O2 -march=native"` after a plain build rebuilds it.
EXAMPLE_STAMP := $(BUILD)/example-flags
$(EXAMPLE_STAMP): example-force | $(BUILD)
	@f='$(CC) $(CFLAGS)'; [ "$$f" = "$$(cat $@ 2>/dev/null)" ] || echo "$$f" > $@

# The examples' programs, build/NAME from examples/NAME.c (and what it includes); they
# show 2.0's calls, so a deprecated 1.x call in them warns (FFN_WARN_DEPRECATED).
EXAMPLES := $(addprefix $(BUILD)/,gpt_input llama_mlp train)
$(EXAMPLES): $(BUILD)/%: examples/%.c pe.h ffn.h $(EXAMPLE_STAMP) | $(BUILD)
	$(CC) -std=c99 $(WARN) -DFFN_WARN_DEPRECATED $(CFLAGS) -I. $< -o $@ -lm
$(BUILD)/llama_mlp: examples/safetensors.h
$(BUILD)/train: examples/train.h support/npy.h

example: $(BUILD)/gpt_input
	./$(BUILD)/gpt_input

# One Llama MLP layer in bfloat16 from reference/goldens/llama_mlp.safetensors (read by
# examples/safetensors.h), checked against torch's output stored in the same file.
example-llama: $(BUILD)/llama_mlp
	./$(BUILD)/llama_mlp reference/goldens/llama_mlp.safetensors

# The training example, with the learned and with the sinusoidal position table: each run's
# loss beside torch's (reference/goldens/train_*), every 20th step (and the last) on stdout
# and every step in build/train_*.tsv, then both curves in
# build/train.png if a Python with matplotlib is there (otherwise it says so; not an error).
TRAIN_PY_PLOT = $(shell for p in /usr/bin/python3 python3 python; do \
                  $$p -c 'import matplotlib' >/dev/null 2>&1 && { command -v $$p; break; }; done)

example-train: $(BUILD)/train
	./$(BUILD)/train --tsv $(BUILD)/train_learned.tsv
	@echo
	./$(BUILD)/train --sinusoidal --tsv $(BUILD)/train_sinusoidal.tsv
	@py='$(TRAIN_PY_PLOT)'; if [ -n "$$py" ]; then \
	  $$py examples/train_plot.py --out $(BUILD)/train.png $(BUILD)/train_learned.tsv \
	    $(BUILD)/train_sinusoidal.tsv; \
	else echo "example-train: no Python with matplotlib found, so no build/train.png" \
	  "(Debian: apt-get install python3-matplotlib)"; fi

# The quick-start code of README.md, pe.h and ffn.h, extracted from the files as they
# are now, built as C99 and as C++ and run (also one of `make test`'s jobs).
snippets-test:
	@$(call timed,CC="$(CC)" sh tests/snippets.sh)

# CMakeLists.txt's targets and package: examples/cmake-consumer built through
# add_subdirectory, FetchContent, find_package after `cmake --install`, and pkg-config.
cmake-test:
	@$(call timed,CC="$(CC)" sh tools/cmake_test.sh)

# The headers' own float functions against the correctly rounded value (tools/exhaustive.c):
# every float input (minutes, every core), or every 257th (exhaustive-sample, CI). The tool,
# not the headers, needs MPFR (Debian: apt-get install libmpfr-dev).
$(BUILD)/exhaustive: tools/exhaustive.c pe.h ffn.h | $(BUILD)
	$(CC) -std=gnu99 -O2 -I. $< -o $@ -pthread -lmpfr -lgmp -lm

exhaustive: $(BUILD)/exhaustive
	./$(BUILD)/exhaustive

exhaustive-sample: $(BUILD)/exhaustive
	./$(BUILD)/exhaustive --step 257

need-python:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "no Python that imports torch, numpy and mpmath; on Debian: apt-get install python3-torch python3-numpy python3-mpmath"; \
	  exit 1; fi

reference: need-python
	$(PYTHON) reference/make_goldens.py --out reference/goldens
	$(PYTHON) reference/make_safetensors.py --out reference/goldens

# Regenerates every golden and compares it bit for bit with the committed ones.
reference-check: need-python
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) reference/make_goldens.py --out "$$tmp" >/dev/null && \
	$(PYTHON) reference/make_safetensors.py --out "$$tmp" >/dev/null && \
	if diff -r -q reference/goldens "$$tmp"; then \
	  echo "reference-check: $$(ls "$$tmp" | wc -l) files identical to the committed goldens"; \
	else echo "reference-check: FAILED (regenerated goldens differ from the committed ones)"; exit 1; fi

clean:
	rm -rf $(BUILD)

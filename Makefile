# AgentXDP top-level Makefile.
# lib/build.mk declares the library every tool links; each tool keeps its own rules in
# <dir>/build.mk; this file holds what they share.
# Targets: all (default), test, demo, bench, eval, fuzz, samples, install, deps, clean.

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
PREFIX  ?= /usr/local

BUILD := build
BIN   := bin

WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2
CFLAGS  ?= -O2 -g
# The version, set here only: a release tag where the checkout has one (vX.Y.Z), else this.
VERSION := $(or $(patsubst v%,%,$(shell git describe --tags --match 'v[0-9]*' 2>/dev/null)),0.1.0)
# One include root: the top of the tree ("lib/track/qp_track.h"); $(BUILD) holds generated
# BPF skeletons and vmlinux.h.
CFLAGS  += $(WARN) -std=gnu11 -D_GNU_SOURCE -DAGENTXDP_VERSION='"$(VERSION)"' -I. -I$(BUILD)
LDFLAGS ?=
LDLIBS  := -lm

# Sanitized build of the core and the unit tests (make test runs them under ASan+UBSan).
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# lib/build.mk fills the first three; tools append to the rest.
CORE_SRCS :=   # analysis core: pure functions, no I/O (decoder, per-QP state, localization)
IO_SRCS   :=   # shared I/O code the tools link: trace reader, pcapng writer, SQLite store, exporters
MODEL_SRCS :=  # the RC model and frame builder (synthesizer, emulator, tests)
TOOLS     :=   # binaries in bin/
UNIT_LIBS :=   # extra libraries the unit tests need
MAN_PAGES :=

.PHONY: all tools test demo bench eval fuzz samples install deps clean unit-tests
# A recipe that fails leaves no half-written target behind for the next make to trust.
.DELETE_ON_ERROR:
all:

CORE_LIB      := $(BUILD)/libagentxdp.a
CORE_SAN_LIB  := $(BUILD)/libagentxdp-san.a
IO_LIB        := $(BUILD)/libagentxdp-io.a
IO_SAN_LIB    := $(BUILD)/libagentxdp-io-san.a
MODEL_LIB     := $(BUILD)/libagentxdp-model.a
MODEL_SAN_LIB := $(BUILD)/libagentxdp-model-san.a
# What a tool links: $(AGENTXDP_LIBS) (I/O first: it calls into the core).
AGENTXDP_LIBS     := $(IO_LIB) $(CORE_LIB)
AGENTXDP_SAN_LIBS := $(IO_SAN_LIB) $(CORE_SAN_LIB)

include lib/build.mk
include $(filter-out lib/build.mk,$(sort $(wildcard */build.mk)))

CORE_OBJS     := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRCS))
CORE_SAN_OBJS := $(patsubst %.c,$(BUILD)/san/%.o,$(CORE_SRCS))
IO_OBJS       := $(patsubst %.c,$(BUILD)/obj/%.o,$(IO_SRCS))
IO_SAN_OBJS   := $(patsubst %.c,$(BUILD)/san/%.o,$(IO_SRCS))
MODEL_OBJS    := $(patsubst %.c,$(BUILD)/obj/%.o,$(MODEL_SRCS))
MODEL_SAN_OBJS := $(patsubst %.c,$(BUILD)/san/%.o,$(MODEL_SRCS))

all: $(TOOLS) unit-tests
tools: $(TOOLS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(SANFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(CORE_SAN_LIB): $(CORE_SAN_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(IO_LIB): $(IO_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(IO_SAN_LIB): $(IO_SAN_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(MODEL_LIB): $(MODEL_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(MODEL_SAN_LIB): $(MODEL_SAN_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Unit tests: every tests/unit/test_*.c is one cmocka binary, built with sanitizers
# against the sanitized core plus whatever UNIT_LIBS the components declare.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
unit-tests: $(UNIT_BINS)
$(BUILD)/tests/test_%: tests/unit/test_%.c $(MODEL_SAN_LIB) $(AGENTXDP_SAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(SANFLAGS) $< $(MODEL_SAN_LIB) $(AGENTXDP_SAN_LIBS) -lcmocka $(UNIT_LIBS) $(LDLIBS) -o $@

# Fuzz harnesses: tests/fuzz/fuzz_*.c. `make fuzz` builds libFuzzer binaries with clang;
# the replay drivers (gcc, sanitized) replay each corpus in make test.
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAYS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz-replay/%,$(FUZZ_SRCS))
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
unit-tests: $(FUZZ_REPLAYS)
$(BUILD)/fuzz-replay/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c $(AGENTXDP_SAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2,$(CFLAGS)) $(SANFLAGS) $< tests/fuzz/replay_main.c $(AGENTXDP_SAN_LIBS) $(UNIT_LIBS) $(LDLIBS) -o $@
# The core and I/O code is instrumented once into one static library; each harness links it.
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -DAGENTXDP_VERSION='"$(VERSION)"' -I. -I$(BUILD) -fsanitize=address,undefined
FUZZ_LIB    := $(BUILD)/libagentxdp-fuzz.a
FUZZ_OBJS   := $(patsubst %.c,$(BUILD)/fuzz-obj/%.o,$(CORE_SRCS) $(IO_SRCS) $(MODEL_SRCS))
$(FUZZ_OBJS): | $(AGENTXDP_LIBS)  # generated headers exist once the normal libs are built
$(BUILD)/fuzz-obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) $(UNIT_LIBS) $(LDLIBS) -o $@
fuzz: $(FUZZ_BINS)
	@echo "fuzzers built in $(BUILD)/fuzz; run e.g. $(BUILD)/fuzz/fuzz_decode tests/fuzz/corpus/decode -max_total_time=600"

deps:
	@bash scripts/deps.sh

# Every benchmark, one table (docs/benchmarks.md). Components add tests/bench/bench_*.sh.
bench: deps
	@$(MAKE) --no-print-directory -j$(shell nproc) all
	@bash scripts/bench.sh

# The README's first command: analyze a bundled sample and show the result.
demo: deps
	@$(MAKE) --no-print-directory -j$(shell nproc) all
	@bash scripts/demo.sh

# The README's test command. Installs what is missing, builds, runs every test.
test: deps
	@$(MAKE) --no-print-directory -j$(shell nproc) all
	@bash tests/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	$(if $(MAN_PAGES),install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/)

clean:
	rm -rf $(BUILD) $(BIN)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

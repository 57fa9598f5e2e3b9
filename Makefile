# microscope — build, test, install.  Out-of-tree into $(OUTPUT); quiet unless V=1.
OUTPUT ?= build
PREFIX ?= /usr/local
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PYTHON ?= /usr/bin/python3

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

ARCH := x86
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
override CFLAGS += -std=gnu11 $(WARN) -I. -I$(OUTPUT) -D_GNU_SOURCE -MMD -MP
LDLIBS := -lbpf -ldw -lelf -ldebuginfod -llzma -lzstd -lz -lm -lpthread

DEPS_PKGS := build-essential clang llvm libbpf-dev bpftool libelf-dev libdw-dev libzstd-dev \
	zlib1g-dev libcmocka-dev pkg-config linux-perf elfutils libc6-dbg python3 python3.11 zstd \
	qemu-system-x86 cpio kmod busybox-static xz-utils bpftrace \
	liblzma-dev libdebuginfod-dev debuginfod lld-14

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/skel/%.skel.h,$(BPF_SRCS))
VMLINUX := $(OUTPUT)/vmlinux.h

LIB_SRCS := $(sort $(wildcard capture/*.c capture/formats/*.c analysis/*.c userspace/*.c \
	userspace/*/*.c))
LIB_SRCS := $(filter-out userspace/cli/main.c,$(LIB_SRCS))
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS))
LIB := $(OUTPUT)/libmicroscope.a
BIN := $(OUTPUT)/microscope

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,$(UNIT_SRCS))

FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURES := $(patsubst tests/fixtures/%.c,$(OUTPUT)/fixtures/%,$(FIXTURE_SRCS))

-include tests/fixtures/flags.mk

.PHONY: all deps demo test unit e2e check install clean bench vmtest
all: $(BIN) $(FIXTURES) $(FIXTURE_EXTRA)

# Installs every Debian package the project needs; idempotent.
deps:
	$(Q)if ! dpkg -s $(DEPS_PKGS) >/dev/null 2>&1; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(DEPS_PKGS); \
	fi

$(VMLINUX):
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I. -I$(OUTPUT) -MMD -MP \
		-Wall -Werror -c $< -o $@

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)/obj/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(OUTPUT)/obj/userspace/cli/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/tests/unit/%: tests/unit/%.c $(LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)mkdir -p $(OUTPUT)/obj/tests/unit
	$(Q)$(CC) $(CFLAGS) -MF $(OUTPUT)/obj/tests/unit/$*.d $< $(LIB) $(LDLIBS) -lcmocka -o $@

# Fixtures: programs with known profiles.  Per-fixture flags live in
# tests/fixtures/flags.mk (FIXTURE_CFLAGS_<name>, FIXTURE_LDLIBS_<name>), included above.
$(OUTPUT)/fixtures/%: tests/fixtures/%.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g $(or $(FIXTURE_CFLAGS_$*),-O2 -fno-omit-frame-pointer) $< \
		$(FIXTURE_LDLIBS_$*) -o $@

unit: $(UNIT_BINS)
	$(Q)$(PYTHON) tests/run.py --unit $(OUTPUT)

e2e: all
	$(Q)$(PYTHON) tests/run.py --e2e $(OUTPUT)

# All tests: installs deps, builds, runs unit (cmocka) then end-to-end
# recordings (need root and BPF).
test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS)
	$(Q)$(PYTHON) tests/run.py --unit --e2e $(OUTPUT)

# Unit tests and the damaged-capture corpus under ASan/UBSan.
check:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/san CFLAGS="-O1 -g $(SAN_FLAGS)" \
		LDLIBS="$(LDLIBS) $(SAN_FLAGS)" unit

# Installs deps, builds, records the bundled demo and prints its report.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./$(BIN) record -o $(OUTPUT)/demo.msc -- ./$(OUTPUT)/fixtures/demo
	$(Q)./$(BIN) report $(OUTPUT)/demo.msc --limit 25

KERNELS ?= 6.1 6.12
VMTEST_TIMEOUT ?= 900
# Boots each Debian kernel of KERNELS under qemu (TCG) with this tree shared
# read-only and runs the structural BPF checks inside (docs/vmtest.md). Root.
vmtest: all
	$(Q)vmtest/matrix.sh --kernels "$(KERNELS)" --timeout $(VMTEST_TIMEOUT) $(OUTPUT)

install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/microscope

clean:
	rm -rf $(OUTPUT)

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)

# ---- Benchmarks (bench/README.md): printed and written to $(OUTPUT)/bench/results.json,
# never asserted.  bench-smoke is the CI subset (about 2 minutes).  Root; needs perf and,
# for the BPF peer, bpftrace.  BENCH_ARGS passes options to bench/run.py (e.g. --runs 7).
BENCH_BINS := $(OUTPUT)/bench/work $(OUTPUT)/bench/gen_capture $(OUTPUT)/bench/sym_bench
.PHONY: bench bench-smoke

$(OUTPUT)/bench/work: bench/work.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -fno-omit-frame-pointer $(WARN) $< -o $@

$(OUTPUT)/bench/gen_capture: bench/gen_capture.c $(LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) $(OUTPUT)/obj/bench
	$(Q)$(CC) $(CFLAGS) -MF $(OUTPUT)/obj/bench/gen_capture.d $< $(LIB) $(LDLIBS) -o $@

bench: all $(BENCH_BINS) $(OUTPUT)/tests/unit/test_unwind
	$(Q)$(PYTHON) bench/run.py --full $(BENCH_ARGS) $(OUTPUT)

$(OUTPUT)/bench/sym_bench: bench/sym_bench.c $(LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) $(OUTPUT)/obj/bench
	$(Q)$(CC) $(CFLAGS) -MF $(OUTPUT)/obj/bench/sym_bench.d $< $(LIB) $(LDLIBS) -o $@

# Symbolization throughput beside eu-addr2line and addr2line (bench/symbols.py).
.PHONY: bench-symbols
bench-symbols: all $(OUTPUT)/bench/sym_bench
	$(Q)$(PYTHON) bench/symbols.py $(OUTPUT)

bench-smoke: all $(BENCH_BINS)
	$(Q)$(PYTHON) bench/run.py --smoke $(BENCH_ARGS) $(OUTPUT)

# dynolite build.  `make check` and `make run` are the two commands a user
# needs (see README); everything else is for developers.
#
#   make            build dynolog, dyno and the test binary into $(O)/
#   make check      install missing build deps, build, run every test
#   make run        install missing build deps, build, run the daemon
#   make install    programs, systemd unit, config and data files (PREFIX=/usr/local)
#   make check SAN=1          the same under ASan + UBSan (into build/san)
#   make fuzz / fuzz-smoke    libFuzzer targets (clang)
#   make bench                benchmarks (print figures, never fail on speed)
#   make python               install the Python package (python/, docs/python.md)
#   make demo                 on-demand tracing end to end, no GPU needed
#   make format / lint
#
# Sources are found by directory, so a new collector, analysis or
# subcommand is one new file and no Makefile change.

CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
VERSION := $(shell cat VERSION)
O ?= build
SAN ?=
ifeq ($(SAN),1)
O := build/san
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT ?= -O1 -g
else
OPT ?= -O2 -g
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CFLAGS_ALL := -std=gnu11 $(OPT) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -DDYNO_VERSION='"$(VERSION)"' \
	-Isrc -MMD -MP $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) -Wl,--as-needed $(LDFLAGS)
# libbpf: the daemon's IPC socket filter (src/daemon/ipc/ipc_filter.c); with
# --as-needed only programs that reach it depend on it
BPF_LIBS := -lbpf -lelf -lz
# libisal: ISA-L's igzip inflates the .json.gz traces (src/trace/source.c);
# zlib writes gzip (trace copies, trace-gen)
LIBS := -lisal -lz -lm -lpthread -ldl $(BPF_LIBS)
# dynolog runs forever on every host: libm is linked statically (it needs
# one function) so its pages are not part of the daemon's resident set.
DAEMON_LIBS := -lpthread -ldl -Wl,-Bstatic -lm -Wl,-Bdynamic $(BPF_LIBS)

CORE_SRC    := $(wildcard src/core/*.c)
TRACE_SRC   := $(wildcard src/trace/*.c src/analyze/*.c)
DAEMON_SRC  := $(filter-out src/daemon/main.c %.bpf.c,$(wildcard src/daemon/*.c src/daemon/*/*.c))
# dyno: the command files (src/cli) and the libraries they call, in one
# archive: the daemon's client side (src/client), the HTML page
# (src/report), the trace warehouse and stitching (src/fleet)
CLI_SRC     := $(wildcard src/cli/*.c src/client/*.c src/report/*.c src/fleet/*.c)
CLI_LIB_SRC := $(filter-out src/cli/dyno.c,$(CLI_SRC))
# tests/lib: harnesses shared by the unit tests and the benches
TESTLIB_SRC := $(wildcard tests/lib/*.c)
TEST_SRC    := $(wildcard tests/unit/*.c) $(TESTLIB_SRC)
# test code the fuzzers share with the unit tests (model comparison)
FUZZ_LIB_SRC := $(wildcard tests/lib/trace_*.c)
BENCH_SRC   := $(wildcard bench/*.c)
# libdynolite.so (src/lib/dynolite.h): the trace engine for Python; its
# own position-independent objects of core, trace and analyze
LIB_SRC     := $(wildcard src/lib/*.c)
FUZZ_SRC    := $(wildcard fuzz/*.c)
TOOLS_SRC   := $(wildcard src/tools/*.c)
# gpusnoop (docs/gpusnoop.md): a BPF object (-mcpu=v3: atomic fetch-add and compare-and-swap on its maps), its libbpf skeleton and a
# loader; the parts without BPF (ELF symbols, bookkeeping) also go into the
# unit tests and fuzzers
GPUSNOOP_LIB_SRC := src/gpusnoop/elfsym.c src/gpusnoop/ledger.c src/gpusnoop/probes.c src/gpusnoop/calls.c src/gpusnoop/sampler.c \
	src/gpusnoop/demangle.c
GPUSNOOP_SRC := src/gpusnoop/main.c src/gpusnoop/report.c src/gpusnoop/symbolize.c src/gpusnoop/live.c \
	src/gpusnoop/timeline.c
BPF_CC ?= clang
BPF_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
# the multiarch headers (asm/types.h) of Debian: /usr/include/x86_64-linux-gnu
BPF_INC := /usr/include/$(shell uname -m)-linux-gnu

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
picobj = $(patsubst %.c,$(O)/pic/%.o,$(1))

LIBCORE   := $(O)/libdyno_core.a
LIBTRACE  := $(O)/libdyno_trace.a
LIBDAEMON := $(O)/libdyno_daemon.a
LIBCLI    := $(O)/libdyno_cli.a
LIBTEST   := $(O)/libdyno_testlib.a
DYNOLOG   := $(O)/dynolog
DYNO      := $(O)/dyno
UNIT      := $(O)/unit-tests
BENCHES   := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))
# small helper programs (fake Kineto client, RPC client): src/tools/<name>.c -> $(O)/<name>
TOOLS     := $(patsubst src/tools/%.c,$(O)/%,$(TOOLS_SRC))
GPUSNOOP  := $(O)/gpusnoop
SHLIB     := $(O)/libdynolite.so
# the stand-in CUDA libraries and the leaking program of the gpusnoop tests
SNOOP_TEST := $(O)/libcuda-fake.so $(O)/libcudart-fake.so $(O)/gpusnoop-leaky $(O)/libtorch_cuda-fake.so \
	$(O)/libtorch_cuda-fake-stripped.so $(O)/libc10_cuda-fake.so $(O)/libc10_cuda-fake-static.so \
	$(O)/libc10_cuda-fake-static-stripped.so $(O)/gpusnoop-torchy $(O)/gpusnoop-devices $(O)/gpusnoop-churn
# the same runtime and driver built with -fcf-protection (each function
# starts with endbr64, which the kernel cannot emulate in a uprobe's trap):
# where gpusnoop's probes go then (gpusnoop_cet.sh, bench/gpusnoop.sh)
ifeq ($(shell uname -m),x86_64)
SNOOP_TEST += $(O)/cet/libcuda-fake.so $(O)/cet/libcudart-fake.so
endif
# the integration tests' programs: tests/tools/<name>.c -> $(O)/<name with dashes>
TEST_TOOLS := $(O)/trace-check

.PHONY: all check run deps test fuzz fuzz-smoke bench format lint clean demo python install

# fake vendor libraries the daemon dlopen()s in tests (tests/fake/<name>.c):
# the NVML one twice, the second like an old driver (entry points missing);
# the DCGM one
FAKE_LIBS := $(O)/libfake-nvml.so $(O)/libfake-nvml-old.so $(O)/libfake-dcgm.so

all: $(DYNOLOG) $(DYNO) $(UNIT) $(BENCHES) $(TOOLS) $(FAKE_LIBS) $(GPUSNOOP) $(SNOOP_TEST) $(SHLIB) $(TEST_TOOLS)

$(O)/libfake-nvml.so: tests/fake/nvml.c src/daemon/collect/nvml_api.h
	$(CC) $(CFLAGS_ALL) -fPIC -shared -MF $@.d -o $@ $<
$(O)/libfake-nvml-old.so: tests/fake/nvml.c src/daemon/collect/nvml_api.h
	$(CC) $(CFLAGS_ALL) -DFAKE_OLD_DRIVER -fPIC -shared -MF $@.d -o $@ $<
$(O)/libfake-dcgm.so: tests/fake/dcgm.c src/daemon/collect/dcgm_api.h
	$(CC) $(CFLAGS_ALL) -fPIC -shared -MF $@.d -o $@ $<

$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(O)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -c $< -o $@
# only the dynolite_* entry points are exported (src/lib/dynolite.map): the
# engine's own symbols cannot clash with anything else in the process
$(SHLIB): $(call picobj,$(LIB_SRC) $(CORE_SRC) $(TRACE_SRC)) src/lib/dynolite.map
	$(CC) $(LDFLAGS_ALL) -shared -Wl,--version-script=src/lib/dynolite.map -Wl,-soname,libdynolite.so \
		-o $@ $(call picobj,$(LIB_SRC) $(CORE_SRC) $(TRACE_SRC)) -lisal -lz -lm -lpthread -ldl

$(LIBCORE): $(call obj,$(CORE_SRC))
	@rm -f $@; ar rcs $@ $^
$(LIBTRACE): $(call obj,$(TRACE_SRC)) | $(LIBCORE)
	@rm -f $@; ar rcs $@ $(call obj,$(TRACE_SRC))
$(LIBDAEMON): $(call obj,$(DAEMON_SRC))
	@rm -f $@; ar rcs $@ $^
# the subcommands as a library, so unit tests, benches and fuzzers reach them
$(LIBCLI): $(call obj,$(CLI_LIB_SRC))
	@rm -f $@; ar rcs $@ $^
# the benches take only the harnesses they use from it
$(LIBTEST): $(call obj,$(TESTLIB_SRC))
	@rm -f $@; ar rcs $@ $^

$(DYNOLOG): $(call obj,src/daemon/main.c) $(LIBDAEMON) $(LIBCORE)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DAEMON_LIBS)
$(DYNO): $(call obj,src/cli/dyno.c) $(LIBCLI) $(LIBTRACE) $(LIBCORE)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)
$(UNIT): $(call obj,$(TEST_SRC) $(GPUSNOOP_LIB_SRC) src/gpusnoop/symbolize.c) $(LIBCLI) $(LIBTRACE) $(LIBDAEMON) $(LIBCORE)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS) -ldw
$(O)/trace-check: $(O)/obj/tests/tools/trace_check.o $(LIBTEST) $(LIBTRACE) $(LIBCORE)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)
$(TOOLS): $(O)/%: $(O)/obj/src/tools/%.o $(LIBDAEMON) $(LIBCORE)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)
$(O)/bench/%: $(O)/obj/bench/%.o $(LIBTEST) $(LIBCLI) $(LIBTRACE) $(LIBDAEMON) $(LIBCORE)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(O)/gpusnoop.d/gpusnoop.bpf.o: src/gpusnoop/gpusnoop.bpf.c src/gpusnoop/event.h
	@mkdir -p $(dir $@)
	$(BPF_CC) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -I$(BPF_INC) -Isrc -c $< -o $@
$(O)/gpusnoop.d/gpusnoop.skel.h: $(O)/gpusnoop.d/gpusnoop.bpf.o
	bpftool gen skeleton $< name gpusnoop_bpf > $@.tmp && mv $@.tmp $@
$(O)/obj/src/gpusnoop/main.o: src/gpusnoop/main.c $(O)/gpusnoop.d/gpusnoop.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(O)/gpusnoop.d -c $< -o $@
$(GPUSNOOP): $(call obj,$(GPUSNOOP_SRC) $(GPUSNOOP_LIB_SRC)) $(LIBCORE)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lbpf -lelf -ldw -lz -ldl
# frame pointers: gpusnoop's stacks are walked through them.  No sanitizers:
# these are what gpusnoop watches, not code under test (leaky leaks on purpose)
SNOOP_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -fPIC -fno-omit-frame-pointer -O1 -g $(CFLAGS)
$(O)/libcuda-fake.so: tests/gpusnoop/fake_cuda.c
	$(CC) $(SNOOP_CFLAGS) -shared -o $@ $<
$(O)/libcudart-fake.so: tests/gpusnoop/fake_cudart.c $(O)/libcuda-fake.so
	$(CC) $(SNOOP_CFLAGS) -shared -o $@ $< -L$(O) -lcuda-fake -Wl,-rpath,'$$ORIGIN'
$(O)/cet/libcuda-fake.so: tests/gpusnoop/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(SNOOP_CFLAGS) -fcf-protection=full -shared -o $@ $<
$(O)/cet/libcudart-fake.so: tests/gpusnoop/fake_cudart.c $(O)/cet/libcuda-fake.so
	$(CC) $(SNOOP_CFLAGS) -fcf-protection=full -shared -o $@ $< -L$(O)/cet -lcuda-fake -Wl,-rpath,'$$ORIGIN'
$(O)/gpusnoop-leaky: tests/gpusnoop/leaky.c tests/gpusnoop/watched.h $(O)/libcudart-fake.so
	$(CC) $(SNOOP_CFLAGS) -o $@ $< -L$(O) -lcudart-fake -lcuda-fake -lpthread -Wl,-rpath,'$$ORIGIN'
# a CUDA runtime linked statically into another library (hidden: .symtab only), and that file stripped
SNOOP_STATIC := tests/gpusnoop/torch_cuda_fake.c tests/gpusnoop/fake_cudart.c tests/gpusnoop/fake_cuda.c
$(O)/libtorch_cuda-fake.so: $(SNOOP_STATIC)
	$(CC) $(SNOOP_CFLAGS) -fvisibility=hidden -shared -o $@ $(SNOOP_STATIC)
$(O)/libtorch_cuda-fake-stripped.so: $(O)/libtorch_cuda-fake.so
	strip --strip-all -o $@ $<
# PyTorch's caching allocator by its C++ symbols, over the stand-in runtime
$(O)/libc10_cuda-fake.so: tests/gpusnoop/c10_cuda_fake.c $(O)/libcudart-fake.so
	$(CC) $(SNOOP_CFLAGS) -shared -o $@ $< -L$(O) -lcudart-fake -lcuda-fake -Wl,-rpath,'$$ORIGIN'
# ... with the tensor deleter static (PyTorch 2.11's wheel), and that stripped
$(O)/libc10_cuda-fake-static.so: tests/gpusnoop/c10_cuda_fake.c $(O)/libcudart-fake.so
	$(CC) $(SNOOP_CFLAGS) -DFAKE_STATIC_DELETER -shared -o $@ $< -L$(O) -lcudart-fake -lcuda-fake -Wl,-rpath,'$$ORIGIN'
$(O)/libc10_cuda-fake-static-stripped.so: $(O)/libc10_cuda-fake-static.so
	strip --strip-all -o $@ $<
$(O)/gpusnoop-devices: tests/gpusnoop/devices.c tests/gpusnoop/watched.h $(O)/libcudart-fake.so
	$(CC) $(SNOOP_CFLAGS) -o $@ $< -L$(O) -lcudart-fake -lcuda-fake -lpthread -Wl,-rpath,'$$ORIGIN'
$(O)/gpusnoop-churn: tests/gpusnoop/churn.c tests/gpusnoop/watched.h $(O)/libcudart-fake.so
	$(CC) $(SNOOP_CFLAGS) -o $@ $< -L$(O) -lcudart-fake -lcuda-fake -lpthread -Wl,-rpath,'$$ORIGIN'
$(O)/gpusnoop-torchy: tests/gpusnoop/torchy.c
	$(CC) $(SNOOP_CFLAGS) -o $@ $< -ldl

# The IPC socket filter (src/daemon/ipc/ipc_filter.bpf.c): a BPF object and
# its skeleton, like gpusnoop's, into <out>/bpf/ for the build that compiles
# ipc_filter.c (the normal one, or the fuzzers' build/fuzz).  -mcpu=v3: the
# filter's atomic fetch-and-add.
IPCF_DEPS := src/daemon/ipc/ipc_filter.bpf.c src/daemon/ipc/ipc_filter_abi.h
%/bpf/ipc_filter.bpf.o: $(IPCF_DEPS)
	@mkdir -p $(dir $@)
	$(BPF_CC) -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -I$(BPF_INC) -Isrc -c $< -o $@
%/bpf/ipc_filter.skel.h: %/bpf/ipc_filter.bpf.o
	bpftool gen skeleton $< name ipc_filter_bpf > $@.tmp && mv $@.tmp $@
$(O)/obj/src/daemon/ipc/ipc_filter.o: $(O)/bpf/ipc_filter.skel.h
$(O)/obj/src/daemon/ipc/ipc_filter.o: CFLAGS_ALL += -I$(O)/bpf
build/fuzz/obj/src/daemon/ipc/ipc_filter.o: build/fuzz/bpf/ipc_filter.skel.h
build/fuzz/obj/src/daemon/ipc/ipc_filter.o: FUZZ_OBJ_FLAGS += -Ibuild/fuzz/bpf

deps:
	@scripts/install-deps.sh

check: deps
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(O)

# run one test: make test T=json_  (substring of unit test or integration script names)
test: all
	@tests/run.sh $(O) $(T)

# loopback only: RPC refuses every client outside 127.0.0.0/8 and ::1.
# RUN_ARGS adds to these (a flag given twice: the last one counts), so
# `make run RUN_ARGS=--kernel_monitor_reporting_interval_s=1` keeps the
# allow-list and the IPC monitor.  dyno is built too: the README's next
# command is `build/dyno status`.
RUN_DEFAULTS := --kernel_monitor_reporting_interval_s=5 --enable_ipc_monitor --rpc_allow=127.0.0.0/8,::1/128
RUN_ARGS ?=
run: deps
	@$(MAKE) --no-print-directory $(DYNOLOG) $(DYNO)
	exec $(DYNOLOG) $(RUN_DEFAULTS) $(RUN_ARGS)

# make install [PREFIX=/usr/local] [DESTDIR=...]: the programs, the systemd
# unit (its paths made PREFIX's), the flag and config files (kept when
# there: an administrator's edits win), the GPU peak table and the docs.
# Paths the daemon looks up at run time are found beside the program
# (PREFIX/bin/../share/dynolite), so any PREFIX works without a rebuild.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/dynolite
DOCDIR ?= $(PREFIX)/share/doc/dynolite
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(if $(filter /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc))
UNITDIR ?= $(PREFIX)/lib/systemd/system
install: $(DYNOLOG) $(DYNO) $(GPUSNOOP)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR) $(DESTDIR)$(UNITDIR)
	install -m 755 $(DYNOLOG) $(DYNO) $(GPUSNOOP) $(DESTDIR)$(BINDIR)/
	install -m 644 data/gpu-peaks.tsv $(DESTDIR)$(DATADIR)/
	install -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	sed -e 's|/usr/local/bin/dynolog|$(BINDIR)/dynolog|' -e 's|/etc/dynolog\.|$(SYSCONFDIR)/dynolog.|g' \
		-e 's|/usr/share/doc/dynolite|$(DOCDIR)|' packaging/dynolog.service >$(DESTDIR)$(UNITDIR)/dynolog.service
	chmod 644 $(DESTDIR)$(UNITDIR)/dynolog.service
	for f in dynolog.gflags dynolog.json; do \
		[ -e $(DESTDIR)$(SYSCONFDIR)/$$f ] || install -m 644 packaging/$$f $(DESTDIR)$(SYSCONFDIR)/$$f; done

# ---- fuzzing (clang + libFuzzer) ----
FUZZ_CC ?= clang
FUZZ_BASE := -std=gnu11 -g -O1 -fno-sanitize-recover=all -D_GNU_SOURCE -DDYNO_VERSION='"$(VERSION)"' -Isrc
FUZZ_FLAGS := $(FUZZ_BASE) -fsanitize=fuzzer,address,undefined
FUZZERS := $(patsubst fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 20

# Every source is compiled once with the fuzzers' instrumentation
# (-fsanitize=fuzzer-no-link: coverage without libFuzzer's main) into one
# archive; each fuzzer is its own object linked against it.  Compiling all
# sources into every fuzzer took ~10 min of CI's 2 cores for 11 fuzzers.
FUZZ_OBJ_FLAGS := $(FUZZ_BASE) -fsanitize=fuzzer-no-link,address,undefined -MMD -MP
FUZZ_DEP_OBJS := $(patsubst %.c,build/fuzz/obj/%.o,$(CORE_SRC) $(TRACE_SRC) $(DAEMON_SRC) $(CLI_LIB_SRC) \
	$(FUZZ_LIB_SRC) $(GPUSNOOP_LIB_SRC) $(LIB_SRC))
FUZZ_DEP_LIB := build/fuzz/libfuzzdeps.a

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_OBJ_FLAGS) -c $< -o $@
$(FUZZ_DEP_LIB): $(FUZZ_DEP_OBJS)
	@rm -f $@; ar rcs $@ $^
$(FUZZERS): build/fuzz/%: build/fuzz/obj/fuzz/%.o $(FUZZ_DEP_LIB)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(LIBS)
-include $(shell find build/fuzz/obj -name '*.d' 2>/dev/null)

fuzz: deps $(FUZZERS)

fuzz-smoke: fuzz
	@scripts/fuzz-smoke.sh $(FUZZ_SECONDS) $(FUZZERS)

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(O)

# the Python package (python/dynolite) with the library it was built with
# copied in, into Debian's python3 (docs/python.md)
python: deps
	@$(MAKE) --no-print-directory $(SHLIB)
	cp $(SHLIB) python/dynolite/libdynolite.so
	/usr/bin/python3 -m pip install --no-build-isolation --break-system-packages --no-deps ./python

# on-demand tracing end to end: daemon, two fake Kineto ranks, dyno
# gputrace --wait, dyno analyze, dyno metrics (no GPU needed)
demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(O)

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem -D_GNU_SOURCE -Isrc \
		--suppress=unknownMacro:src/gpusnoop/gpusnoop.bpf.c --suppress=unknownMacro:src/daemon/ipc/ipc_filter.bpf.c src

clean:
	rm -rf build

.SECONDARY:

-include $(shell find $(O)/obj $(O)/pic -name '*.d' 2>/dev/null)

# Ember's build. `make` builds the library and tests; `make test` and
# `make demo` (the README's two commands) first install what is missing.
CC      ?= cc
PYTHON  := /usr/bin/python3
BLASDIR := /usr/lib/x86_64-linux-gnu/openblas-openmp
CFLAGS_BASE := -std=gnu11 -g -fPIC -fopenmp -Iinclude -Wall -Wextra -Wno-unused-parameter \
               -Wno-missing-field-initializers -Wno-type-limits -fno-math-errno -MMD -MP
CFLAGS  := $(CFLAGS_BASE) -O2
# Kernels get -O3: full auto-vectorization of the inner loops; and
# -fno-trapping-math (kernels never read floating-point exception flags), so
# that GCC may compute both arms of a select in float code (softplus, floor).
KFLAGS  := -O3 -fno-trapping-math
LDLIBS  := -L$(BLASDIR) -Wl,-rpath,$(BLASDIR) -llapacke -lopenblas -lkissfft-float -lstdc++ -lz -ljansson -lm -fopenmp
B       := build
# The library's version (as setup.py's): libember.so.$(VERSION), soname
# libember.so.$(SOVERSION).
VERSION   := 0.1.0
SOVERSION := 0

SRC  := $(wildcard src/core/*.c src/ops/*.c src/cpu/*.c src/meta/*.c src/autograd/*.c src/nn/*.c src/optim/*.c src/io/*.c)
TSRC := $(wildcard tests/c/*.c)
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))

# C++ only where a library is a C++ template: kissfft<double> (src/cpu/fft_kiss64.cc).
CXXSRC := $(wildcard src/cpu/*.cc)
CXXFLAGS := -std=c++17 -g -fPIC -Iinclude -Wall -Wextra -MMD -MP
OBJ  := $(SRC:%.c=$(B)/%.o) $(CXXSRC:%.cc=$(B)/%.o)

# The CUDA backend (src/cuda/, same file names as src/cpu/) is optional: it is
# built when nvcc exists and there is CUDA code, and registers em_cuda_device.
NVCC     ?= $(shell command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_SRC := $(wildcard src/cuda/*.cu)
ifneq ($(and $(NVCC),$(CUDA_SRC)),)
CFLAGS_BASE += -DEM_WITH_CUDA
OBJ    += $(CUDA_SRC:%.cu=$(B)/%.o)
LDLIBS += -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -lcublas
$(B)/src/cuda/%.o: src/cuda/%.cu
	@mkdir -p $(@D)
	$(NVCC) -O3 -Xcompiler -fPIC -Iinclude -c $< -o $@
endif
# oneDNN (Debian's libdnnl-dev) is optional too: with its header, float32
# convolutions run through it (src/cpu/conv_dnnl.c), else im2col + GEMM.
ifneq ($(wildcard /usr/include/oneapi/dnnl/dnnl.h),)
CFLAGS_BASE += -DEM_WITH_DNNL
CFLAGS += -DEM_WITH_DNNL
LDLIBS += -ldnnl
endif
TOBJ := $(TSRC:%.c=$(B)/%.o)

# Sanitizer build of the same sources (tests only).
AB     := $(B)/asan
ASAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
AOBJ   := $(SRC:%.c=$(AB)/%.o) $(CXXSRC:%.cc=$(AB)/%.o)
ATOBJ  := $(TSRC:%.c=$(AB)/%.o)

# The NULL-argument test's cases (tests/c/test_null_args.c), generated from
# the public headers as the compiler sees them: a build output, never stale.
NULLGEN := $(B)/tests/null_args.c
TOBJ    += $(B)/tests/null_args.o
ATOBJ   += $(AB)/tests/null_args.o

# The Python extension ember._C (python/csrc/), built in place next to the
# package so that `PYTHONPATH=python python3 -c 'import ember'` works in a
# checkout. It links libember.a in: one self-contained module.
PYINC   := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null)
PYEXT   := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))" 2>/dev/null)
PYMOD   := python/ember/_C$(PYEXT)
PYOBJ   := $(patsubst %.c,$(B)/%.o,$(wildcard python/csrc/*.c))

.PHONY: all deps test test-c test-asan test-fuzz test-hostile demo bench docs clean install uninstall
all: $(B)/libember.so $(B)/libember.a $(B)/test_ember $(EXAMPLES) $(B)/opdoc $(PYMOD)

$(B)/python/csrc/%.o: python/csrc/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(PYINC) -fvisibility=hidden -c $< -o $@
$(PYMOD): $(PYOBJ) $(B)/libember.a
	$(CC) -shared -o $@ $(PYOBJ) $(B)/libember.a $(LDLIBS)

# ember._mpi, the MPI backend of ember.distributed (src/dist/ and its
# binding python/csrc/dist/): its own extension module, built when Open MPI's
# development files are there, so that libember and `import ember` never
# load libmpi (only init_process_group(backend='mpi') does).
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS   := $(shell pkg-config --libs ompi-c 2>/dev/null)
MPIMOD     := $(if $(MPI_LIBS),python/ember/_mpi$(PYEXT))
MPIOBJ     := $(patsubst %.c,$(B)/%.o,$(wildcard src/dist/*.c python/csrc/dist/*.c))
all: $(MPIMOD)
$(MPIOBJ): CFLAGS += $(MPI_CFLAGS) -I$(PYINC) -fvisibility=hidden
$(MPIMOD): $(MPIOBJ)
	$(CC) -shared -o $@ $^ $(MPI_LIBS) -lpthread -lm

# docs/ops.md is generated from the op table, docs/api_coverage.md by comparing
# the Python package's names with torch's; `make test` checks both are current.
$(B)/opdoc: tools/opdoc.c $(B)/libember.a
	$(CC) $(CFLAGS) -o $@ $< $(B)/libember.a $(LDLIBS)
docs: $(B)/opdoc
	$(B)/opdoc > docs/ops.md
	PYTHONPATH=python $(PYTHON) tools/api_coverage.py

$(B)/src/cpu/%.o: src/cpu/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KFLAGS) -c $< -o $@
$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@
$(AB)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN) -DEM_NO_CLONES -c $< -o $@
$(B)/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(KFLAGS) -c $< -o $@
$(AB)/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -O1 $(ASAN) -c $< -o $@

$(NULLGEN): tools/gen_null_test.py $(wildcard include/ember/*.h include/ember/*.def include/ember/ops/*.def)
	@mkdir -p $(@D)
	$(PYTHON) tools/gen_null_test.py $(CC) -Iinclude > $@.tmp && mv $@.tmp $@
$(B)/tests/null_args.o: $(NULLGEN)
	$(CC) $(CFLAGS) -Itests/c -c $< -o $@
$(AB)/tests/null_args.o: $(NULLGEN)
	$(CC) $(CFLAGS_BASE) -O1 $(ASAN) -Itests/c -c $< -o $@

$(B)/libember.so: $(OBJ)
	$(CC) -shared -Wl,-soname,libember.so.$(SOVERSION) -o $@ $^ $(LDLIBS)
$(B)/libember.a: $(OBJ)
	ar rcs $@ $^
$(B)/test_ember: $(TOBJ) $(B)/libember.a
	$(CC) -o $@ $(TOBJ) $(B)/libember.a $(LDLIBS)
$(AB)/test_ember: $(ATOBJ) $(AOBJ)
	$(CC) $(ASAN) -o $@ $^ $(LDLIBS)
$(B)/examples/%: examples/%.c $(B)/libember.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libember.a $(LDLIBS)

deps:
	@sh tools/deps.sh

test: deps
	@$(MAKE) --no-print-directory -j$$(nproc) all $(AB)/test_ember $(FUZZ)
	@sh tools/run_tests.sh

test-c: all
	$(B)/test_ember

test-asan: $(AB)/test_ember
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 $(AB)/test_ember

# libFuzzer targets (clang): each tests/fuzz/fuzz_<name>.c with the file
# readers (src/io) built with fuzzer + ASan + UBSan instrumentation, linked
# with the rest of libember.a. `make test` replays their committed corpora
# (tests/fuzz/corpus/<name>/) and fuzzes each for FUZZ_SECONDS.
# Fuzz for longer with: build/fuzz_zip -max_total_time=600 tests/fuzz/corpus/zip
FUZZ_CC := clang
FUZZ    := $(patsubst tests/fuzz/fuzz_%.c,$(B)/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 20
$(B)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard src/io/*.c src/io/*.h) $(B)/libember.a
	$(FUZZ_CC) -std=gnu11 -g -O1 -Iinclude -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o $@ $< $(wildcard src/io/*.c) $(B)/libember.a $(subst -fopenmp,-lgomp,$(LDLIBS))

test-fuzz: $(FUZZ)
	@sh tools/replay_fuzz_corpus.sh
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh tools/run_fuzz.sh

# The full hostile-argument sweep against PyTorch 1.13 (tests/hostile/sweep.py;
# pytest runs a fixed sample of it): prints calls, crashes, hangs, silent
# acceptances and the same-exception-type rate; fails on any of the first three.
test-hostile: all
	PYTHONPATH=python $(PYTHON) tests/hostile/sweep.py --show 40

demo:
	@sh tools/deps.sh demo
	@$(MAKE) --no-print-directory -j$$(nproc) all
	@sh tools/run_demo.sh

# `make bench [BENCH_ARGS='--only conv norm' | '--quick']`: every bench/
# script beside PyTorch; writes bench/RESULTS.md and README.md's table.
BENCH := $(patsubst bench/%.c,$(B)/%,$(wildcard bench/*.c))
bench: deps
	@$(MAKE) --no-print-directory all $(BENCH)
	@BENCH_COMMAND="make bench$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" $(PYTHON) bench/run.py $(BENCH_ARGS)

$(B)/bench_%: bench/bench_%.c $(B)/libember.a
	$(CC) $(CFLAGS) -o $@ $< $(B)/libember.a $(LDLIBS)

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the C library for other
# programs: headers (with the .def tables they include), libember.a,
# libember.so with its soname links, ember.pc for pkg-config and a CMake
# package (find_package(Ember) -> target Ember::ember). Libs.private is
# this Makefile's LDLIBS, so `pkg-config --static` links what we link.
PREFIX     ?= /usr/local
LIBDIR     := $(PREFIX)/lib
INCLUDEDIR := $(PREFIX)/include
CMAKEDIR   := $(LIBDIR)/cmake/Ember
SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
            -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOVERSION@|$(SOVERSION)|g' -e 's|@LIBS_PRIVATE@|$(LDLIBS)|g'
install: $(B)/libember.so $(B)/libember.a
	install -d $(DESTDIR)$(INCLUDEDIR)/ember/ops $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(CMAKEDIR) \
	    $(DESTDIR)$(PREFIX)/share/licenses/ember
	install -m 644 LICENSE $(DESTDIR)$(PREFIX)/share/licenses/ember/LICENSE
	install -m 644 include/ember/*.h include/ember/*.def $(DESTDIR)$(INCLUDEDIR)/ember/
	install -m 644 include/ember/ops/*.def $(DESTDIR)$(INCLUDEDIR)/ember/ops/
	install -m 644 $(B)/libember.a $(DESTDIR)$(LIBDIR)/libember.a
	install -m 755 $(B)/libember.so $(DESTDIR)$(LIBDIR)/libember.so.$(VERSION)
	ln -sf libember.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libember.so.$(SOVERSION)
	ln -sf libember.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libember.so
	$(SUBST) tools/ember.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ember.pc
	$(SUBST) tools/EmberConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/EmberConfig.cmake
	$(SUBST) tools/EmberConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/EmberConfigVersion.cmake
	@echo "installed Ember $(VERSION) under $(DESTDIR)$(PREFIX)"

uninstall:
	rm -rf $(DESTDIR)$(INCLUDEDIR)/ember $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(PREFIX)/share/licenses/ember
	rm -f $(DESTDIR)$(LIBDIR)/libember.a $(DESTDIR)$(LIBDIR)/libember.so \
	      $(DESTDIR)$(LIBDIR)/libember.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libember.so.$(VERSION) \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/ember.pc
	rmdir $(DESTDIR)$(LIBDIR)/cmake 2>/dev/null || true

clean:
	rm -rf $(B) $(PYMOD) $(MPIMOD)

-include $(OBJ:.o=.d) $(PYOBJ:.o=.d) $(MPIOBJ:.o=.d) $(TOBJ:.o=.d) $(AOBJ:.o=.d) $(ATOBJ:.o=.d)

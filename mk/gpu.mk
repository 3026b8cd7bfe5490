# make test-gpu   the GPU layer's tests, on a machine with an NVIDIA GPU (issue 12). Needs the CUDA
#                 toolkit, CMake, a C++ compiler and GoogleTest, and no network: no MPI, no Python
#                 packages. A machine without a usable GPU fails it, with the reason.
# make bench-gpu  the GPU benchmarks alone (bench/gpu_bench.cpp), same needs.
# make test runs the CPU half of the GPU tests on every machine (gpu_units: the kernels' logic
# on the CPU) and the GPU half where a device is usable (gpu: skipped, with the reason, elsewhere).
# make yaksa      Yaksa's CUDA backend (MPICH's datatype engine), gpu_bench's peer, into build-yaksa/
#                 (tools/build-yaksa.sh, about 10 minutes on 2 cores). YAKSA_SRC names a git checkout of
#                 pmodels/yaksa; without one it is cloned from GitHub at YAKSA_TAG. gpu_bench uses it
#                 where build-yaksa/lib/libyaksa.so (or $$DDTKIT_YAKSA) exists, and says so where not.
.PHONY: test-gpu build-gpu bench-gpu yaksa

YAKSA_TAG ?= v0.4
YAKSA_SRC ?= build-yaksa/src
yaksa: build-yaksa/lib/libyaksa.so
build-yaksa/lib/libyaksa.so:
	./tools/setup-deps.sh --yaksa
	@[ -e $(YAKSA_SRC) ] || git clone -q --depth 1 --branch $(YAKSA_TAG) https://github.com/pmodels/yaksa $(YAKSA_SRC)
	JOBS=$(JOBS) sh tools/build-yaksa.sh $(YAKSA_SRC) build-yaksa

build-gpu:
	cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build-gpu -j $(JOBS) --target gpu_units_test gpu_test gpu_nodevice_test gpu_ipc_test gpu_comm_test ddtkit_cli ddt_gpu_bench

test-gpu: build-gpu
	build-gpu/tests/cuda/gpu_units_test --types 5000 --seed 1
	build-gpu/tests/cuda/gpu_test --types 5000 --seed 1
	build-gpu/tests/cuda/gpu_ipc_test
	build-gpu/tools/ddtkit run -n 2 build-gpu/tests/cuda/gpu_comm_test
	@echo "make test-gpu: the GPU tests passed"

bench-gpu: build-gpu
	@mkdir -p bench/results
	build-gpu/bench/ddt_gpu_bench --out bench/results
	python3 -c "import sys; sys.path.insert(0, 'bench'); import report_gpu; md = []; report_gpu.section(md, [], 'bench/results'); print(chr(10).join(md))" > bench/results/gpu.md
	@cat bench/results/gpu.md

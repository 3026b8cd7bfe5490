# make test-python: the Python package ddtkit (pyproject.toml, python/) installed by pip into the
# project-local environment .venv-python, with numpy, pytest and the same MPICH and mpi4py as the
# Makefile's oracles, then its pytest suite (tests/python, docs/python.md's examples included).
VENV_PY := $(ROOT)/.venv-python
PIP_PY  := $(VENV_PY)/bin/pip install -q --disable-pip-version-check
# pyproject.toml's build requirements, installed once into the environment: a build without
# pip's isolation keeps the same paths from run to run, so build-py/'s cache stays valid and an
# unchanged tree rebuilds nothing (an isolated build reconfigures and recompiles everything).
PY_BUILD_REQS := scikit-build-core==1.1.2 nanobind==3.1.0 ninja==1.13.0

.PHONY: test-python
MK_TESTS += test-python

# The environment once (a stamp, like the MPI environments); MPI versions are the Makefile's.
$(VENV_PY)/.ok:
	python3 -m venv $(VENV_PY)
	$(PIP_PY) numpy pytest mpich==$(MPICH_VERSION) mpi4py==$(MPI4PY_VERSION) $(PY_BUILD_REQS)
	touch $@

# The package is reinstalled on every run: its sources may have changed since the last. Then the
# same tests again with the extension and library built with ASan and UBSan (build-py-asan/, as
# make test-asan does for the C tests), the package run from there with the sanitizer runtimes
# preloaded into the uninstrumented interpreter; leak detection is off, as CPython keeps memory
# until exit by design.
test-python: .stamp-deps $(VENV_PY)/.ok
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(PIP_PY) --no-build-isolation $(ROOT)
	cd $(ROOT) && $(VENV_PY)/bin/python -m pytest -q -p no:cacheprovider tests/python
	cmake -S $(ROOT) -B $(ROOT)/build-py-asan -G Ninja -DCMAKE_MAKE_PROGRAM=$(VENV_PY)/bin/ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDT_LIBRARY_ONLY=ON -DDDT_PYTHON=ON -DDDT_SANITIZE=ON \
	  -DPython_EXECUTABLE=$(VENV_PY)/bin/python >/dev/null
	cmake --build $(ROOT)/build-py-asan -j $(JOBS) --target _core
	rm -rf $(ROOT)/build-py-asan/pkg && mkdir -p $(ROOT)/build-py-asan/pkg
	cp -r $(ROOT)/python/ddtkit $(ROOT)/build-py-asan/python/_core.*.so $(ROOT)/build-py-asan/pkg/
	mv $(ROOT)/build-py-asan/pkg/_core.*.so $(ROOT)/build-py-asan/pkg/ddtkit/
	cd $(ROOT) && PYTHONPATH=$(ROOT)/build-py-asan/pkg ASAN_OPTIONS=detect_leaks=0 \
	  LD_PRELOAD="$$(g++ -print-file-name=libasan.so) $$(g++ -print-file-name=libubsan.so)" \
	  $(VENV_PY)/bin/python -m pytest -q -p no:cacheprovider tests/python

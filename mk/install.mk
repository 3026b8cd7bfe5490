# Installing ddtkit (cmake/install.cmake says what goes where):
#   make install PREFIX=/opt/ddtkit   builds the release build/ folder, then installs it
#   make test-install                 installs into a temporary prefix and builds README's
#                                     example against it (CMake, pkg-config, cc); removes it all
PREFIX ?= /usr/local

.PHONY: install test-install

install: build
	cmake --install build --prefix $(PREFIX)

test-install: build
	tests/install/run.sh --make build

MK_TESTS += test-install

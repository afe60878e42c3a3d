# goring: `make demo` and `make test` do all set-up on a fresh Debian machine.
SHELL := /bin/bash
GO ?= go
BIN := bin/goring
DEB_PACKAGES := libucx-dev ucx-utils openmpi-bin libopenmpi-dev pkg-config
# Tests that start real processes can take a while on 2 cores.
TEST_TIMEOUT ?= 30m
# cgo packages include headers from other folders, which Go's build cache
# does not see: their hash goes into CGO_CFLAGS (scripts/cgo_flags.sh).
export CGO_CFLAGS := $(shell scripts/cgo_flags.sh)

.PHONY: all deps build test test-short demo lint fmt bench clean capi capi-test tl tl-install kernels stack stack-test

all: build

# Install the Debian packages the build and the tests need, skipping what is
# already there (apt-get only runs when something is missing).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi
	@scripts/ucx_wheel.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/goring

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags ucc ./ucc_tl_goring

# make test collects every skipped test (go test -json through
# scripts/skips, and the stack scripts' "skipped:" lines) into SKIP_LIST
# and prints the list last, whether the tests passed or failed; its exit
# status is the tests'. COLLECT_SKIPS, set by make test, turns that on in
# capi-test and stack-test.
SKIPS := build/skips
SKIP_LIST := build/test-skips.tsv
gotest = $(if $(COLLECT_SKIPS),set -o pipefail; $(GO) test -json $(1) | $(SKIPS) -o $(COLLECT_SKIPS),$(GO) test $(1))

test: COLLECT_SKIPS = $(SKIP_LIST)
test: build lint
	@mkdir -p build && rm -f $(SKIP_LIST) && $(GO) build -o $(SKIPS) ./scripts/skips
	@status=0; \
	echo '$(call gotest,-timeout $(TEST_TIMEOUT) ./...)'; \
	( $(call gotest,-timeout $(TEST_TIMEOUT) ./...) ) || status=$$?; \
	[ $$status != 0 ] || $(MAKE) capi-test COLLECT_SKIPS=$(SKIP_LIST) || status=$$?; \
	[ $$status != 0 ] || $(MAKE) stack-test COLLECT_SKIPS=$(SKIP_LIST) || status=$$?; \
	$(SKIPS) -print $(SKIP_LIST); \
	exit $$status

# The Go side of the UCC team layer as a shared library (ucc_tl_goring/goring.h's C
# API) and the C programs that test that API under mpirun (the collectives,
# and the MoE entry); no UCC needed.
capi: deps
	$(GO) build -tags ucc -buildmode=c-shared -o build/libgoring.so ./ucc_tl_goring
	mpicc -O2 -Wall -Iucc_tl_goring tests/capi/capi_test.c -Lbuild -lgoring -Wl,-rpath,'$$ORIGIN' -o build/capi_test
	mpicc -O2 -Wall -Iucc_tl_goring tests/capi/moe_test.c -Lbuild -lgoring -Wl,-rpath,'$$ORIGIN' -o build/moe_capi_test
	mpicc -O2 -Wall -Iucc_tl_goring tests/capi/ctxpath_test.c -Lbuild -lgoring -Wl,-rpath,'$$ORIGIN' -o build/ctxpath_test

# The UCC team layer itself: cshim/ compiled against a configured and built
# UCC source tree (UCC_SRC, for its internal component headers), that
# UCC's installation (UCC_PREFIX) and the UCX it was built with
# (UCX_PREFIX); never needed by anything else. `make tl-install` puts it
# (and libgoring.so, which it loads from its own folder) into UCC's
# component folder, where UCC looks for libucc_tl_*.so.
TL_CFLAGS = -shared -fPIC -O2 -Wall -Wno-unused-parameter -I$(UCC_SRC) -I$(UCC_SRC)/src \
	-I$(UCC_PREFIX)/include -I$(UCX_PREFIX)/include -Icshim -Iucc_tl_goring
tl: capi
	@if [ -z "$(UCC_SRC)" ] || [ -z "$(UCC_PREFIX)" ] || [ -z "$(UCX_PREFIX)" ]; then \
	  echo "make tl needs UCC_SRC=<configured ucc source> UCC_PREFIX=<ucc install> UCX_PREFIX=<ucx install>"; exit 2; fi
	$(CC) $(TL_CFLAGS) cshim/tl_goring*.c -Lbuild -lgoring -L$(UCC_PREFIX)/lib -lucc \
	  -Wl,-rpath,'$$ORIGIN' -o build/libucc_tl_goring.so

tl-install: tl
	cp build/libucc_tl_goring.so build/libgoring.so $(UCC_PREFIX)/lib/ucc/

# The real stack goring plugs into (UCX wheel, UCC, Open MPI with coll/ucc,
# OMB), built from the pinned sources in ../shared/vendor (or GORING_VENDOR)
# into a cache outside the repository; seconds once built. Without the
# sources it says "skipped" and succeeds. Prints the path of its stack.env.
stack:
	@scripts/stack.sh

# tl/goring under UCC's tests and OMB through Open MPI's coll/ucc, on that
# stack (building it first if needed); skips without the sources.
stack-test:
	$(if $(COLLECT_SKIPS),set -o pipefail; tests/stack/run.sh 2>&1 | $(SKIPS) -text -o $(COLLECT_SKIPS),tests/stack/run.sh)

capi-test: capi
	$(call gotest,-tags ucc -timeout $(TEST_TIMEOUT) ./ucc_tl_goring)
	mpirun -np 4 --allow-run-as-root --oversubscribe build/capi_test 2000
	mpirun -np 4 --allow-run-as-root --oversubscribe build/moe_capi_test
	mpirun -np 4 --allow-run-as-root --oversubscribe build/ctxpath_test
	mpirun -np 4 --allow-run-as-root --oversubscribe build/ctxpath_test 6 full

# The GPU reduction kernels: cuda/kernels/reduce.cu compiled by the
# registry's nvcc 13.0 (installed into a cache outside the repository)
# into the gzipped cubins and PTX that package cuda embeds, with the
# MANIFEST that `go test ./cuda` checks against the source.
kernels:
	scripts/build_kernels.sh

# Quick loop for development: no real-process tests.
test-short: deps
	$(GO) test -short ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

demo: build
	@bash scripts/demo.sh $(BIN)

clean:
	rm -rf bin out build

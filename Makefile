# gpufabric — the whole set-up on a fresh Debian 12 machine (as root):
#   make run    install packages, build, run the main job on the default example
#   make test   install packages, build, run every test (unit, CLI, fuzz)
#   make bench  performance benchmarks
#   make install PREFIX=/usr/local   install the binary, manual pages, bash completion and
#                                    examples under PREFIX (DESTDIR=... stages them)
#   make deb    the Debian package, build/gpufabric_VERSION_ARCH.deb
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
EXAMPLE ?= examples/seed-70b-1024.yaml
FUZZ_SECONDS ?= 20
PREFIX ?= /usr/local

# Every Debian package the build, the tests and the benchmarks need.
DEB_PACKAGES := build-essential cmake ninja-build ccache pkg-config \
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev \
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-dev time \
  libcpp-httplib-dev prometheus curl chromium libopenmpi-dev openmpi-bin \
  frr iproute2 iputils-ping iperf3 procps help2man \
  dpkg-dev bash-completion

.PHONY: deps build run test bench fuzz install deb format clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "run as root to install:$$missing" >&2; exit 1; fi; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@command -v npm >/dev/null || { echo "installing: nodejs npm"; apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm; }
	@[ -f web/node_modules/vega-embed/build/vega-embed.min.js ] || npm ci --prefix web --no-audit --no-fund

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/gpufabric report $(EXAMPLE) -o out/

$(FUZZ_BUILD)/build.ninja:
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DGPUFABRIC_FUZZ=ON -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

fuzz: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory fuzz

bench: build
	./$(BUILD)/gpufabric_bench --benchmark_counters_tabular=true
	bench/peak_memory.sh ./$(BUILD)/gpufabric

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

deb: build
	cd $(BUILD) && cpack -G DEB

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) out

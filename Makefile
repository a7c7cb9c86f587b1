# Two commands set everything up on a fresh machine: `make run` and `make test`.
NPM_STAMP := node_modules/.installed

# The Node.js every step runs on: the machine's own when it is 22.12 or later (package.json
# "engines"), otherwise the official Node 24 LTS binary, fetched from the npm registry into
# .runtime/ (scripts/node-runtime.sh). NODE_RUNTIME=22.23.3 picks a fetched version explicitly
# (CI runs the suite on Node 22 and 24 that way).
NODE_LTS := 24.21.0
SYSTEM_NODE_OK := $(shell node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a >= 24 || (a === 22 && b >= 12) ? 0 : 1)' 2>/dev/null && echo yes)
ifneq ($(NODE_RUNTIME),)
  RUNTIME_VERSION := $(NODE_RUNTIME)
else ifneq ($(SYSTEM_NODE_OK),yes)
  RUNTIME_VERSION := $(NODE_LTS)
endif
ifdef RUNTIME_VERSION
  RUNTIME_NODE := $(CURDIR)/.runtime/node-$(RUNTIME_VERSION)/bin/node
  export PATH := $(CURDIR)/.runtime/node-$(RUNTIME_VERSION)/bin:$(PATH)
endif

.PHONY: run test coverage build typecheck format format-check clean bench capacity openapi dist

$(CURDIR)/.runtime/node-%/bin/node:
	scripts/node-runtime.sh $* > /dev/null

$(NPM_STAMP): package.json package-lock.json $(RUNTIME_NODE)
	npm ci --no-audit --no-fund
	touch $@

build: $(NPM_STAMP)
	@echo "node $$(node --version) at $$(command -v node)"
	npx tsc -p tsconfig.json
	node scripts/build-static.mjs

# The server, the tests and the scripts; then the browser code (static/js, JavaScript with JSDoc
# types, never compiled) against types made from docs/openapi.json and docs/asyncapi.json, and
# the service worker (static/sw.js) in a worker's scope.
typecheck: $(NPM_STAMP)
	npx tsc -p tsconfig.test.json
	node scripts/client-types.mjs
	npx tsc -p tsconfig.client.json
	npx tsc -p tsconfig.sw.json

# MALLOC_MMAP_THRESHOLD_: glibc hands each password hash's 19 MiB back to the system at once
# instead of keeping it in a per-thread arena (up to 4 x 19 MiB held for good otherwise).
run: build
	MALLOC_MMAP_THRESHOLD_=131072 node dist/server.js

test: build typecheck format-check dist
	bash scripts/test.sh --disable-coverage

# One layout for the code (Prettier, .prettierrc.json; .prettierignore says what it leaves alone):
# `make format` applies it, `make test` checks it.
format: $(NPM_STAMP)
	npx prettier --write --log-level warn .

format-check: $(NPM_STAMP)
	npx prettier --check --log-level warn . || (echo "the code is not in the project's layout: run make format" >&2; exit 1)

# The same suite, measuring coverage against the thresholds of .taprc (README "Tests").
coverage: build typecheck format-check dist
	bash scripts/test.sh

# The release: chat-<version>-linux-x64.tar.gz with its own Node runtime (scripts/dist.sh).
dist: build $(CURDIR)/.runtime/node-$(NODE_LTS)/bin/node
	bash scripts/dist.sh $(NODE_LTS)

# Benchmarks are not part of `make test` or CI: they take minutes and want a quiet machine.
bench: build
	npx tsc -p bench/tsconfig.json
	node dist-bench/bench/run.js

# The capacity benchmark (issue 32, docs/performance.md "Capacity"): signed-in users in steps
# until a target breaks, about ten minutes; not part of `make test` or `make bench`. Every user
# holds a socket in the server and in a load client: the open-files limit goes up to the hard one.
# CAPACITY_GATEWAYS=2 measures a core, two gateways and Redis instead of one process.
capacity: build
	npx tsc -p bench/tsconfig.json
	ulimit -n $$(ulimit -Hn) 2>/dev/null; node dist-bench/bench/capacity.js

clean:
	rm -rf dist dist-bench dist-scripts dist-release .tap coverage

# docs/openapi.json, docs/asyncapi.json and the generated tables of docs/api.md, from scripts/.
openapi: $(NPM_STAMP)
	npx tsc -p scripts/tsconfig.json
	node dist-scripts/scripts/openapi/index.js
	node dist-scripts/scripts/asyncapi/index.js

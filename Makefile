# Two commands set everything up on a fresh machine: `make run` and `make test`.
NPM_STAMP := node_modules/.installed

.PHONY: run test build typecheck clean bench openapi

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

build: $(NPM_STAMP)
	npx tsc -p tsconfig.json

typecheck: $(NPM_STAMP)
	npx tsc -p tsconfig.test.json

# MALLOC_MMAP_THRESHOLD_: glibc hands each password hash's 19 MiB back to the system at once
# instead of keeping it in a per-thread arena (up to 4 x 19 MiB held for good otherwise).
run: build
	MALLOC_MMAP_THRESHOLD_=131072 node dist/server.js

test: build typecheck
	bash scripts/test.sh

# Benchmarks are not part of `make test` or CI: they take minutes and want a quiet machine.
bench: build
	npx tsc -p bench/tsconfig.json
	node dist-bench/bench/run.js

clean:
	rm -rf dist dist-bench dist-scripts .tap coverage

# docs/openapi.json, docs/asyncapi.json and the generated tables of docs/api.md, from scripts/.
openapi: $(NPM_STAMP)
	npx tsc -p scripts/tsconfig.json
	node dist-scripts/scripts/openapi/index.js
	node dist-scripts/scripts/asyncapi/index.js

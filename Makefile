# claw: two commands do everything. `make demo` builds claw and shows it
# deciding actions on the embedded defaults; `make test` runs the full suite.
GO      ?= go
BIN     := bin/claw
GOFLAGS ?=
export CGO_ENABLED := 1

.PHONY: all build deps demo test test-short vet fuzz bench clean mcp-client claude-code

all: build

deps:
	@scripts/deps.sh

# claw and its small sandbox helper (found next to claw; cgo-free so it starts fast).
# scripts/build.sh says what it compiles: a first build takes minutes.
build: deps
	@GO=$(GO) scripts/build.sh $(BIN) ./cmd/claw -trimpath
	@CGO_ENABLED=0 GO=$(GO) scripts/build.sh bin/claw-sandbox ./executor/cmd/claw-sandbox -trimpath

# The demo's agent session is typed by ttydrive, which waits for each prompt.
demo: build
	$(GO) build -trimpath -o bin/ttydrive ./scripts/ttydrive
	@scripts/demo.sh $(BIN)

vet: deps
	$(GO) vet ./...

# The full suite (./... skips testdata, so its test packages are named).
# Sandbox tests must run (not skip) when CLAW_REQUIRE_SANDBOX is set.
test: deps vet mcp-client claude-code
	$(GO) test -count=1 -timeout 9m ./... ./testdata/everyday
	@scripts/unprivileged.sh

# The foreign MCP client the mcp tests drive (the official TypeScript SDK),
# installed from its lock file when node is there; the tests skip without
# it unless CLAW_REQUIRE_NODE is set.
MCP_CLIENT := testdata/mcp/client
mcp-client: $(MCP_CLIENT)/node_modules/.package-lock.json
$(MCP_CLIENT)/node_modules/.package-lock.json: $(MCP_CLIENT)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd $(MCP_CLIENT) && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "claw: npm not found; the MCP foreign-client tests will skip" >&2; fi

# Claude Code, the external coding agent the delegate tests run in claw's
# sandbox against a fake Messages API on 127.0.0.1 (pinned by its lock
# file); the test skips without it unless CLAW_REQUIRE_NODE is set.
CLAUDE_CODE := testdata/claudecode
claude-code: $(CLAUDE_CODE)/node_modules/.package-lock.json
$(CLAUDE_CODE)/node_modules/.package-lock.json: $(CLAUDE_CODE)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd $(CLAUDE_CODE) && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "claw: npm not found; the Claude Code delegation test will skip" >&2; fi

# Long fuzzing runs; not part of CI.
FUZZTIME ?= 30s
fuzz: deps
	@scripts/fuzz.sh $(FUZZTIME)

# Benchmarks against their anchors (opa eval, bwrap); numbers go in bench/README.md.
bench: build
	@bench/run.sh

clean:
	rm -rf bin

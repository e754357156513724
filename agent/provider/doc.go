// Package provider talks to models. A [Provider] takes a [ChatRequest]
// (system prompt, history, tool schemas) and returns a [ChatResponse]
// (final text, tool calls, usage). The agent loop calls Chat, sends each
// tool call through the broker, appends the results as [RoleTool]
// messages and calls Chat again, until the model answers in text.
//
// There are five kinds:
//
//   - [Mock] answers from a script, offline and the same way every time.
//     It is the default provider, so the demo and the tests need no
//     network and no key.
//   - [OpenAI] speaks Chat Completions, for OpenAI and the servers that
//     copy it (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, LiteLLM).
//   - [Anthropic] speaks the Messages API.
//   - [Reliable] tries several providers in order.
//   - [Router] picks one by a hint in the request's metadata.
//
// The HTTP clients are thin: net/http, encoding/json and a small
// server-sent-events reader, no vendor SDK. They never read the
// environment themselves; the key is given to the constructor.
//
// # Configuration
//
// Each provider is one section of the config; [Spec] is its shape.
// [Build] turns the specs into the provider a name refers to, building a
// reliable's or a router's members on the way; [New] builds one leaf
// provider:
//
//	default_provider = "main"
//
//	[providers.local]
//	kind = "mock"                 # script = "demo.yaml" to use your own
//
//	[providers.openai]
//	kind = "openai-compatible"
//	base_url = "https://api.openai.com/v1"   # the client appends /chat/completions
//	api_key_env = "OPENAI_API_KEY"
//	model = "gpt-4.1"
//	timeout = "60s"
//
//	[providers.claude]
//	kind = "anthropic"
//	base_url = "https://api.anthropic.com"   # the client appends /v1/messages
//	api_key_env = "ANTHROPIC_API_KEY"
//	model = "claude-sonnet-4-5"
//
//	[providers.main]
//	kind = "reliable"
//	fallbacks = ["claude", "openai", "local"]
//
//	[providers.auto]
//	kind = "router"
//	default = "main"
//	routes = { summary = "local", serve = "openai" }
//
// A router looks up the request's route hint, then its purpose ("chat",
// "summary" when older messages are compacted, "probe" for `claw provider
// test`), then its channel ("cli", "serve", "mcp") among its route names;
// the first that is one picks the member, and the rest go to default. Above,
// compaction runs on the local model and the daemon's turns on openai.
//
// api_key_env names an environment variable; the key is read from there
// and from nowhere else, and [New] refuses a value that is not a variable
// name (a pasted key rarely is one). A provider without api_key_env sends no
// credentials (a local server). A local OpenAI-compatible server is
// base_url = "http://127.0.0.1:11434/v1" (Ollama) or similar.
//
// # Mock scripts
//
// A script is a YAML file (or JSON, when it starts with '{'): a list of
// turns and a default. For each request the mock takes the first turn
// whose matchers all hold and replies with it; when none matches, the
// default replies.
//
//	turns:
//	  - name: list files           # shown in errors only
//	    match: '(?i)\bfiles\b'     # RE2 regexp on the last user message
//	    step: 1                    # first model call for that message
//	    reply: "Let me look."
//	    tool_calls:
//	      - name: file_list
//	        arguments: {path: "."}
//	  - step: 2                    # after the tool result came back
//	    reply: "Found: {{tool_result}}"
//	  - contains: flaky            # case-insensitive substring
//	    error: rate_limit
//	default:
//	  reply: "You said: {{user}}"
//
// The matchers, all optional:
//
//   - turn: the model call's number in the conversation, counting from 1
//     (the number of assistant messages in the history, plus one).
//   - step: the model call's number since the last user message, from 1.
//     Step 1 answers the person; step 2 answers the first tool results.
//   - contains: a case-insensitive substring of the last user message.
//   - match: a regular expression (Go RE2 syntax) on the last user message.
//   - tool_result: a case-insensitive substring of the latest tool result
//     since the last user message.
//
// The reply, at least one of:
//
//   - reply: text. {{user}} expands to the last user message,
//     {{tool_result}} to the latest tool result (each cut at 2000 bytes),
//     {{turn}} and {{step}} to the numbers above, and {{NAME}} to the
//     named group (?P<NAME>…) of match. The string values of a tool
//     call's arguments expand the same way, each inside its string.
//   - tool_calls: a list of {name, arguments, id}. arguments must be an
//     object; a missing id becomes "mock_TURN_N".
//   - error: fail the call the way a server would: auth, rate_limit,
//     timeout, server, network, bad_response or bad_request (each is the
//     typed error listed under Errors, so [Reliable] can be exercised
//     offline).
//   - delay: wait this long first ("250ms", "2s"), or until the context
//     ends, which is [ErrTimeout] on a deadline.
//
// Unknown fields, bad regexps, unknown errors and turns that would reply
// nothing are rejected when the script is loaded ([ParseScript],
// [LoadScript]). Without a script the mock follows the embedded one
// ([DefaultScript]): "demo" runs a listing, a read, a write and an
// `rm -rf /` before answering; "write TEXT to FILE" writes that text to
// that file; messages about passwd, rm -rf, listing files, writing,
// reading a file, or the time make one matching tool call; anything else
// is echoed back. docs/mock.md is the same for users.
//
// # Errors
//
// Every error names the provider and can be told apart with [errors.Is]
// and [errors.As]:
//
//   - [ErrAuth]: HTTP 401 or 403.
//   - [*RateLimitError]: HTTP 429, with RetryAfter from a retry-after-ms
//     header, or a retry-after header in seconds or as an HTTP date.
//   - [ErrTimeout]: the provider's Timeout or the caller's deadline.
//   - [*StatusError]: any other status (or an error event in a stream),
//     with a bounded excerpt of the server's message; 400, 404, 413 and 422
//     also match [ErrBadRequest].
//   - [ErrBadResponse]: malformed JSON, a stream cut short, an answer
//     over the size cap ([ErrTooLarge] as well).
//   - [ErrNetwork]: the endpoint could not be reached.
//   - [ErrNoKey]: api_key_env names an unset variable.
//
// A cancelled context is returned as [context.Canceled]. [Hint] turns an
// error into a sentence for a person; [Retryable] is the fallback rule of
// [Reliable]: everything but [ErrBadRequest] and cancellation.
//
// # Retries
//
// The HTTP clients send a request again, at most twice, when nothing of
// its answer has reached the caller: the status line says 429, 500, 502,
// 503, 504 or 529, or the connection failed before a response came (but
// not a host name that does not resolve, nor a certificate that does not
// verify: another attempt cannot fix those). They
// wait what the server asks for in retry-after-ms or retry-after, or else
// 500 ms, then 1.5 s (each ±20%). A server that asks for more than 10 s
// ends the call at once with its error, so that [Reliable] falls back
// without delay; so does a wait that would outlast the context's deadline
// (the provider's Timeout covers the retries too), and a done context
// stops them. Any other status is final, and a stream that failed after it
// began is never sent again. Each retry is logged at warn level to
// HTTPConfig.Log (from [Build], its logger) with the provider, the reason,
// the attempt and the wait.
//
// # Secrets and limits
//
// The key goes into one request header and nowhere else. Quoted server
// text is cut to 300 bytes, control characters are escaped, and the key
// and anything shaped like a credential (sk-…, Bearer …, api_key=…) are
// replaced with [redacted]; ChatResponse.Raw is redacted the same way.
// Transport errors never quote the URL. Reads are bounded: a body by
// MaxResponseBytes (1 MiB by default); a stream by 16 times that in raw
// bytes and by MaxResponseBytes in accumulated text and arguments; one
// stream line by 256 KiB and one event by 1 MiB.
//
// # Streaming
//
// With ChatRequest.Stream set, text fragments go to OnDelta as they
// arrive, and Chat still returns the whole answer. A server that answers a
// stream request with plain JSON is accepted (OnDelta then gets the text in
// one piece). When [Reliable] falls back after some fragments were
// delivered, the next provider's fragments follow; ChatResponse.Text is
// the answer to keep.
//
// # Wire formats
//
// OpenAI Chat Completions: POST {base_url}/chat/completions with
// "Authorization: Bearer KEY". The system prompt is the first message;
// assistant tool calls carry their arguments as a JSON string; each
// result is a "tool" message with tool_call_id. Streams are "data: {json}"
// chunks ending with "data: [DONE]", with stream_options.include_usage
// set so the last chunk carries usage. Tool calls are accumulated by
// index: id and name arrive once, arguments in fragments. Tolerated
// quirks of compatible servers: arguments sent as an object instead of a
// string, missing call ids (replaced by ids derived from the response id,
// the position, the name and the arguments, so the same answer always
// gets the same ids), comment lines (": OPENROUTER PROCESSING"), content
// as an array of parts, an error object with status 200 or inside a
// stream, and CRLF line ends.
//
// Anthropic Messages: POST {base_url}/v1/messages with x-api-key and
// "anthropic-version: 2023-06-01". The system prompt is top level; tools
// come first. cache_control {"type":"ephemeral"} marks the last tool and
// the system block, so the stable prefix is cached (2 of the 4 allowed
// breakpoints). Assistant tool calls become tool_use blocks; consecutive
// tool results become tool_result blocks (is_error from
// [Message].IsError) that open the next user message. max_tokens defaults
// to 4096. Streams are event/data pairs: message_start,
// content_block_start, content_block_delta (text_delta, input_json_delta),
// content_block_stop, message_delta (stop reason, output usage),
// message_stop; ping is skipped, an error event ends the call with its
// typed error, unknown events are ignored.
//
// Finish reasons are normalised to [FinishStop], [FinishToolCalls],
// [FinishLength] and [FinishContentFilter].
//
// Tool-call arguments are always valid JSON. Argument text that is not
// JSON is passed on as a JSON string, which is not an object, so the
// caller's schema check rejects it and can tell the model; for Anthropic,
// whose tool_use input must be an object, such a call in the history is
// sent as {"_raw": "…"}.
package provider

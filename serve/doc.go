// Package serve runs trained models behind an HTTP server: dynamic
// batching of concurrent requests (Batcher), a JSON API with health,
// readiness and Prometheus metrics endpoints (Server), and loading a
// checkpoint written by adamnode train (LoadCheckpoint). The command
// adamnode serve is a thin layer over it; docs/serving.md shows it end to
// end.
//
// A model is anything with the Predictor method: a batch in (first axis
// the batch), a batch out, row i of the answer depending on row i of the
// input only, safe for concurrent use. The infer package's Pool is the
// Predictor of a trained model.
//
// # Batching
//
// A Batcher collects the requests that arrive within BatchOptions.MaxWait
// of a batch's first one, up to MaxBatch rows, runs them as one call of
// the Predictor and gives each request its own rows back. It waits only
// while another batch is running or after a batch of several requests: a
// lone request to an idle Batcher runs at once (with what has queued), so
// one client does not wait, while under load requests keep batching. At most
// MaxInFlight batches run at once; while they do, the next batch keeps
// filling, so a slow batch does not block the next. A request whose
// context is done before its batch runs is dropped from it; one cancelled
// while its batch runs returns at once and its rows are discarded. When a
// batch of several requests fails, each request is run again alone, so
// that a solver error caused by one request's input fails that request
// only (BatchOptions.NoRetry turns this off).
//
// # The HTTP API
//
// Server answers POST /v1/predict with a JSON object {"model": NAME,
// "inputs": [INSTANCE, ...]} (or "input": INSTANCE), an instance being
// the model's input shape as nested arrays (leading axes of size 1 may
// be left out) or a flat array of its numbers; the answer is
// {"model", "outputs", "argmax"} (or {"model", "output", "class"}). Bad
// input is a 4xx whose JSON body {"error": {"code", "field", "message"}}
// names the field: 400 (malformed JSON, wrong type or shape, a number
// that is not finite), 404 (unknown model or path), 405 (not POST), 413
// (body or instance count over the limits). A model's error on a
// request (a solver error) is a 422 with its message, a model's panic a
// 500, a request past Options.Timeout or during shutdown a 503. GET
// /healthz, /readyz and /metrics (Prometheus' text format) complete the
// API. docs/serving.md has it in full, with a session of adamnode serve.
package serve

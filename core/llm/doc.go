// Package llm holds the provider-neutral vocabulary of gopi: messages, content
// blocks, usage, models and the assistant stream events, all serialising to
// exactly the JSON the pi coding agent reads and writes.
//
// Start with [Message] (the union of every role pi stores), [Model] and
// [Provider]. Providers turn a [Request] into a sequence of [StreamEvent]s;
// they build the message as it streams with a [Builder], so every API family
// emits the same event shapes, and run inside [RunStream], which owns the
// start event, the abort check and the one final event.
package llm

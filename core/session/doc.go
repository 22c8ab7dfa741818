// Package session stores a conversation the way pi 0.73.1 does: a version-3
// JSONL file whose first line is a [Header] and whose other lines are
// entries linked by id and parentId into a tree. The "leaf" is the entry the
// next append hangs under; moving it to an older entry starts a branch.
//
// Start with [Create] (a new session in a directory, written lazily once the
// first assistant message arrives), [Open] (load, migrate v1/v2 files, skip
// and report damaged lines) or [InMemory] (--no-session). Append with the
// Store's Append* methods, build the model input with [Store.Context] and
// turn it into provider messages with [ConvertToLLM]. [List] and
// [MostRecent] find sessions on disk; [Store.Fork], [Store.Clone] and
// [ForkFrom] copy a conversation into a new file.
package session

// Package compaction keeps a long conversation inside the model's context
// window the way pi 0.73.1 does: it estimates how many tokens the context
// holds, decides when to compact, picks where to cut the session's active
// branch, and has the model summarise everything before the cut.
//
// Start with [EstimateContext] and [ShouldCompact] to decide, then
// [Prepare] on the branch path (root to leaf) to find the cut, then
// [Compact] to write the summary. The package never changes a session: the
// caller appends the [Result] as a compaction entry
// (session.Store.AppendCompaction with Result.Details).
package compaction

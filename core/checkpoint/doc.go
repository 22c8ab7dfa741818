// Package checkpoint records the files of a project before the agent
// changes them, and puts them back. In a git work tree, [Open] gives a
// [Repo]: [Repo.Snapshot] records the files under a directory as a commit
// object under refs/gopi/checkpoints/ (through an index of its own, so
// the user's HEAD, index, stash and branches never change),
// [Repo.Changes] says what differs since, and [Repo.Restore] brings it
// back byte for byte.
package checkpoint

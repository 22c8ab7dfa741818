package checkpoint

import "errors"

var (
	// errNotRepo says that a directory is not inside a git work tree.
	errNotRepo = errors.New("not inside a git work tree")
	// errNotRecorded refuses to remove something that lies where a
	// restore must put a file or folder but that the checkpoint does not
	// record (an ignored or too large file, another repository), so the
	// restore could not be undone: it is left alone.
	errNotRecorded = errors.New("it is in the way and the checkpoint does not record it, so it was left alone")
	// errCannotKeep refuses to remove something in the way of a journal
	// restore that the journal cannot keep for the undo (too large, or
	// neither a file nor a link).
	errCannotKeep = errors.New("it is in the way and cannot be kept for the undo, so it was left alone")
)

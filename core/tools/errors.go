package tools

import (
	"errors"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

var (
	// ErrNotRegular: the path is a FIFO, device, socket or other special
	// file, which the file tools neither read nor replace.
	ErrNotRegular = regularfile.ErrNotRegular
	// ErrChangedSinceApproval: the file an approved read, edit or write
	// was to work on is not the one the question named, its path leading
	// elsewhere since (see [Pin]); the error says what the path is now.
	ErrChangedSinceApproval = atomicfile.ErrChanged
	// ErrTooLarge: the file is over MaxWholeFile.
	ErrTooLarge = errors.New("file too large to read whole")
	// ErrUnknownTool: a tool name none of [AllNames]; the error names it
	// and the tools there are.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrSelectionPattern: a +name or -name tool selection entry holds a
	// pattern; the error names the entry.
	ErrSelectionPattern = errors.New("+name and -name entries name one tool each, not a pattern")
	// ErrSelectionMixed: a tool selection mixes plain names with +name or
	// -name entries.
	ErrSelectionMixed = errors.New("plain tool names cannot be mixed with +name or -name entries")
	// ErrNoWorkDir: a command's working directory is missing or not a
	// directory; the error names it.
	ErrNoWorkDir = errors.New("working directory does not exist")
)

var (
	// errShellTimeout is the cancel cause of a command that ran out of time.
	errShellTimeout = errors.New("command timed out")
	// errFdFailed: fd failed and wrote nothing on stderr to say why.
	errFdFailed = errors.New("fd failed")
	// errNoFile: the file a preview reads is not there; the error names it.
	errNoFile = errors.New("does not exist")
	// errLinkLoop: resolving a path went through too many symbolic links.
	errLinkLoop = errors.New("too many symbolic links")
)

// Package tools owns gopi's built-in tools, the ones pi calls read, bash,
// edit, write, grep, find and ls, with pi's names, argument schemas, limits
// and result details. Each implements [agent.Tool].
//
// Start with [All], [Default] or [ByName] to build a tool set for a working
// directory. Tools reach the machine only through the [FS] and [Shell]
// interfaces ([LocalFS] and [LocalShell] by default), so a host can run them
// remotely. [RunShell] is the shell executor shared by the bash tool and the
// RPC bash command; truncate.go holds the output limits every tool applies.
package tools

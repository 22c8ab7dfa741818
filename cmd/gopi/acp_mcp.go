package main

import (
	"fmt"
	"slices"

	"github.com/gopi-dev/gopi/core/mcp"
)

// withLentServers are the servers of a session: pi's own (mcp.json, own)
// and those an ACP client lent it. A client's server replaces one of
// pi's with the same name, or one whose tools would share its names (a
// name differing only in "-" and "_"), for this session: the editor's
// configuration is the one the user sees.
func (ap *app) withLentServers(own, lent []mcp.Entry) []mcp.Entry {
	if len(lent) == 0 {
		return own
	}
	out := slices.DeleteFunc(slices.Clone(own), func(e mcp.Entry) bool {
		for _, l := range lent {
			if mcp.Namespace(l.Name) == mcp.Namespace(e.Name) {
				fmt.Fprintf(ap.stderr, "gopi: the client's MCP server %q replaces %q of %s in this session\n", l.Name, e.Name, e.Source)
				return true
			}
		}
		return false
	})
	return append(out, lent...)
}

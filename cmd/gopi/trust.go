package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/resources"
)

// projectTrusted decides, as pi 1.5 does in its RPC and print modes,
// whether the folder's own .pi settings, extensions, skills and prompt
// templates load (resources.ResolveTrust), and says so on stderr when it
// leaves them out: a folder a user only opened must not run its code.
func projectTrusted(agentDir string, a *args, cwd string, stderr io.Writer) bool {
	global, _ := host.LoadSettings(agentDir, "")
	home, _ := os.UserHomeDir()
	d, err := resources.ResolveTrust(resources.TrustOptions{
		Cwd: cwd, Home: home, AgentDir: agentDir, Override: a.approve, Default: global.DefaultProjectTrust,
	})
	if err != nil {
		fmt.Fprintln(stderr, "gopi: warning:", err)
	}
	if !d.Trusted && len(d.Protected) > 0 {
		fmt.Fprintf(stderr, "gopi: this folder's own settings and resources were not loaded (%s): the project is not trusted (%s). Start with --approve, add it to %s, or set defaultProjectTrust to \"always\".\n",
			strings.Join(d.Protected, ", "), d.Why, agentDir+string(os.PathSeparator)+"trust.json")
	}
	return d.Trusted
}

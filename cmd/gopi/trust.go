package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/resources"
)

// projectTrusted decides, as pi 1.5 does in its RPC and print modes,
// whether the folder's own .pi settings, extensions, skills and prompt
// templates load (resources.ResolveTrust), and says so on stderr when it
// leaves them out: a folder a user only opened must not run its code.
// decide, when not nil, is asked before the saved decisions (the
// extensions' project_trust handlers).
func projectTrusted(agentDir string, a *args, cwd string, stderr io.Writer, decide func() (bool, bool, string)) bool {
	global, _ := host.LoadSettings(agentDir, "")
	home, _ := os.UserHomeDir()
	d, err := resources.ResolveTrust(resources.TrustOptions{
		Cwd: cwd, Home: home, AgentDir: agentDir, Override: a.approve, Default: global.DefaultProjectTrust,
		Decide: decide,
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

// askExtensions runs pi 1.5's project_trust event: the extensions that
// load whatever the decision (the agent dir's, settings', -e's; never
// the project's own) start in the extension host now, and the first
// handler that answers yes or no decides (remember saves it in
// trust.json). The host is kept in ap.early: the session's extensions
// then load into it. Without such extensions nothing starts and nothing
// is decided.
func (ap *app) askExtensions(a *args, cwd string) (trusted, decided bool, why string) {
	global, _ := host.LoadSettings(ap.agentDir, "")
	paths := ext.Discover(ext.DiscoverOptions{
		Cwd: cwd, AgentDir: ap.agentDir,
		Explicit: a.extensions, Configured: global.Extensions, NoDiscovery: a.noExtensions,
		NoProject: true,
	})
	if len(paths) == 0 {
		return false, false, ""
	}
	nh := ap.nodeHost(global, paths, cwd)
	ans, err := nh.ProjectTrust(context.Background(), cwd)
	if err != nil {
		fmt.Fprintln(ap.stderr, "gopi: warning:", err)
		return false, false, ""
	}
	ap.early = nh
	for _, e := range ans.Errors {
		fmt.Fprintf(ap.stderr, "gopi: warning: extension %q project_trust error: %s\n", e.ExtensionPath, e.Error)
	}
	if ans.Trusted != "yes" && ans.Trusted != "no" {
		return false, false, ""
	}
	trusted = ans.Trusted == "yes"
	if ans.Remember {
		if err := resources.SaveTrust(ap.agentDir, cwd, trusted); err != nil {
			fmt.Fprintln(ap.stderr, "gopi: warning:", err)
		}
	}
	return trusted, true, "an extension's project_trust handler"
}

package resources

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// protectedConfig are the entries of a project's .pi directory that need
// the project to be trusted before they load (pi 1.5's project trust): its
// settings, MCP servers, extensions, skills, prompt templates, themes and
// system-prompt files. A bare .pi directory needs nothing.
var protectedConfig = []string{"settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"}

// ProtectedResources lists what in cwd would load only in a trusted
// project: the protected entries of cwd/.pi and the .agents/skills
// directories of cwd and its parents (home's own ~/.agents/skills is the
// user's, not the project's).
func ProtectedResources(cwd, home string) []string {
	cwd = absDir(cwd)
	var out []string
	for _, name := range protectedConfig {
		p := filepath.Join(cwd, configDirName, name)
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	userAgents := ""
	if home != "" {
		userAgents = filepath.Join(absDir(home), ".agents", "skills")
	}
	for _, d := range ancestorAgentsSkillDirs(cwd) {
		if d == userAgents {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// Project trust decisions, as pi 1.5 reads them.
const (
	TrustAsk    = "ask"    // ask the user; without a way to ask, do not trust
	TrustAlways = "always" // trust every project
	TrustNever  = "never"  // trust none
)

// TrustOptions are what decides whether a project is trusted.
type TrustOptions struct {
	Cwd, Home string
	// AgentDir holds trust.json, the saved decisions.
	AgentDir string
	// Override is --approve (true) or --no-approve (false); nil when
	// neither was given.
	Override *bool
	// Default is the agent directory's defaultProjectTrust: TrustAsk
	// (also when empty), TrustAlways or TrustNever.
	Default string
	// Decide, when set, is asked after the command line and before
	// trust.json, and only for a project with protected resources: pi's
	// project_trust extension handlers. decided false leaves it to the
	// rest; why names what decided.
	Decide func() (trusted, decided bool, why string)
}

// TrustDecision is whether a project's protected resources load, and why.
type TrustDecision struct {
	Trusted bool
	// Protected are the resources the decision is about; empty when the
	// project has none (it is then trusted, there being nothing to guard).
	Protected []string
	// Why says what decided: "--approve", "--no-approve", "trust.json
	// (<dir>)", "defaultProjectTrust", "no protected resources", or
	// "not asked" (ask, but gopi cannot ask: pi's RPC mode skips them too).
	Why string
}

// ResolveTrust decides as pi 1.5 does without a trust prompt: the command
// line first, then the extensions (Decide), then the closest saved decision in trust.json for cwd or a
// parent, then defaultProjectTrust, where "ask" declines (gopi's modes,
// like pi's print and RPC modes, cannot show the prompt). A trust.json
// that cannot be read declines and is reported.
func ResolveTrust(o TrustOptions) (TrustDecision, error) {
	d := TrustDecision{Protected: ProtectedResources(o.Cwd, o.Home)}
	switch {
	case o.Override != nil && *o.Override:
		d.Trusted, d.Why = true, "--approve"
		return d, nil
	case o.Override != nil:
		d.Why = "--no-approve"
		return d, nil
	case len(d.Protected) == 0:
		d.Trusted, d.Why = true, "no protected resources"
		return d, nil
	}
	if o.Decide != nil {
		if trusted, ok, why := o.Decide(); ok {
			d.Trusted, d.Why = trusted, why
			return d, nil
		}
	}
	saved, dir, err := savedTrust(filepath.Join(o.AgentDir, "trust.json"), o.Cwd)
	if err != nil {
		d.Why = "trust.json unreadable"
		return d, err
	}
	if saved != nil {
		d.Trusted, d.Why = *saved, "trust.json ("+dir+")"
		return d, nil
	}
	switch o.Default {
	case TrustAlways:
		d.Trusted, d.Why = true, "defaultProjectTrust"
	case TrustNever:
		d.Why = "defaultProjectTrust"
	default:
		d.Why = "not asked"
	}
	return d, nil
}

// savedTrust is the decision trust.json holds for cwd or its closest
// parent that has one (true or false; null means none), with that
// directory. A missing file holds none.
func savedTrust(path, cwd string) (*bool, string, error) {
	data, err := regularfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the trust store: %w", err)
	}
	var m map[string]*bool
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, "", fmt.Errorf("trust store %s: expected an object of true, false or null: %w", path, err)
	}
	dir := absDir(cwd)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for {
		if v, ok := m[dir]; ok && v != nil {
			return v, dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, "", nil
		}
		dir = parent
	}
}

package ext

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopi-dev/gopi/internal/homedir"
)

// DiscoverOptions say where extensions come from.
type DiscoverOptions struct {
	Cwd      string
	AgentDir string
	// Explicit are -e/--extension paths; they load even with NoDiscovery.
	Explicit []string
	// Configured are settings.json's "extensions" entries.
	Configured []string
	// NoDiscovery is --no-extensions: only Explicit paths load.
	NoDiscovery bool
	// NoProject leaves out the project's .pi/extensions (an untrusted
	// project).
	NoProject bool
}

// Discover lists the extension entry files to load, as pi finds them:
// the project's .pi/extensions, the agent dir's extensions, then settings
// and command-line paths. In each directory a *.ts or *.js file is one
// extension, and so is a subdirectory with an index.ts or index.js, or with
// a package.json whose "pi.extensions" names its entry files; discovery
// goes one level deep. A path appears once, where it was first found.
func Discover(o DiscoverOptions) []string {
	var out []string
	seen := map[string]bool{}
	add := func(paths ...string) {
		for _, p := range paths {
			abs, err := filepath.Abs(p)
			if err != nil || seen[abs] {
				continue
			}
			seen[abs] = true
			out = append(out, abs)
		}
	}
	configured := o.Explicit
	if !o.NoDiscovery {
		if !o.NoProject {
			add(inDir(filepath.Join(o.Cwd, ".pi", "extensions"))...)
		}
		if o.AgentDir != "" {
			add(inDir(filepath.Join(o.AgentDir, "extensions"))...)
		}
		configured = append(append([]string(nil), o.Configured...), o.Explicit...)
	}
	for _, p := range configured {
		p = homedir.Expand(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(o.Cwd, p)
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if entries := entriesOf(p); entries != nil {
				add(entries...)
			} else {
				add(inDir(p)...)
			}
			continue
		}
		// A missing file is passed on: loading it fails with an
		// extension_error that names it.
		add(p)
	}
	return out
}

func isExtensionFile(name string) bool {
	return strings.HasSuffix(name, ".ts") || strings.HasSuffix(name, ".js")
}

// inDir is the extensions directly in dir.
func inDir(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		st, err := os.Stat(p) // follows links, as pi does
		if err != nil {
			continue
		}
		if !st.IsDir() {
			if isExtensionFile(e.Name()) {
				out = append(out, p)
			}
			continue
		}
		out = append(out, entriesOf(p)...)
	}
	return out
}

// entriesOf is a directory's declared entry files (package.json's
// pi.extensions that exist), else its index.ts or index.js, else nil.
func entriesOf(dir string) []string {
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		var m struct {
			Pi struct {
				Extensions []string `json:"extensions"`
			} `json:"pi"`
		}
		if json.Unmarshal(b, &m) == nil {
			var out []string
			for _, e := range m.Pi.Extensions {
				p := filepath.Join(dir, e)
				if _, err := os.Stat(p); err == nil {
					out = append(out, p)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	for _, index := range []string{"index.ts", "index.js"} {
		p := filepath.Join(dir, index)
		if _, err := os.Stat(p); err == nil {
			return []string{p}
		}
	}
	return nil
}

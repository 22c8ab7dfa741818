package resources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// ContextFile is an instruction file found for the session (in JSON as
// pi's systemPromptOptions name it).
type ContextFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// contextNames are tried in order in each directory; the first that exists
// wins (pi's rule).
var contextNames = []string{"AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}

// LoadContextFiles returns the agent directory's context file first, then
// those of cwd's ancestors from the filesystem root down to cwd. A file that
// exists but cannot be read is reported in warnings and skipped.
func LoadContextFiles(agentDir, cwd string) (files []ContextFile, warnings []error) {
	seen := map[string]bool{}
	if agentDir != "" {
		if f, err := contextFileIn(agentDir); err != nil {
			warnings = append(warnings, err)
		} else if f != nil {
			files = append(files, *f)
			seen[f.Path] = true
		}
	}
	var chain []ContextFile
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return files, append(warnings, fmt.Errorf("resolving cwd: %w", err))
	}
	for {
		f, err := contextFileIn(dir)
		if err != nil {
			warnings = append(warnings, err)
		} else if f != nil && !seen[f.Path] {
			chain = append([]ContextFile{*f}, chain...)
			seen[f.Path] = true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return append(files, chain...), warnings
}

func contextFileIn(dir string) (*ContextFile, error) {
	for _, name := range contextNames {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || st.IsDir() {
			continue
		}
		b, err := regularfile.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading context file %s: %w", p, err)
		}
		return &ContextFile{Path: p, Content: string(b)}, nil
	}
	return nil, nil
}

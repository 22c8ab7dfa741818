package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// searchTree builds a small repository-like tree:
//
//	.gitignore        ignores build/ and *.log
//	.git/HEAD         never searched
//	.hidden.txt       dotfiles are searched
//	main.go
//	pkg/util.go
//	pkg/util_test.go
//	pkg/.gitignore    ignores generated.go
//	pkg/generated.go
//	build/out.go
//	debug.log
//	bin.dat           binary, skipped by grep
func searchTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".gitignore":       "build/\n*.log\n",
		".git/HEAD":        "needle in git\n",
		".hidden.txt":      "needle hidden\n",
		"main.go":          "package main\n\n// needle one\nfunc main() {}\n",
		"pkg/util.go":      "package pkg\n\nvar Needle = 1\nvar x = 2\nvar y = 3\n",
		"pkg/util_test.go": "package pkg\n// needle test\n",
		"pkg/.gitignore":   "generated.go\n",
		"pkg/generated.go": "needle generated\n",
		"build/out.go":     "needle build\n",
		"debug.log":        "needle log\n",
		"bin.dat":          "needle\x00binary\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	return dir
}

func TestGrepGoFallback(t *testing.T) {
	dir := searchTree(t)
	res := run(t, dir, "grep", map[string]any{"pattern": "needle"}, WithoutExternalSearch())
	require.False(t, res.IsError, text(res))
	require.Equal(t, ".hidden.txt:1: needle hidden\nmain.go:3: // needle one\npkg/util_test.go:2: // needle test", text(res))
	require.Nil(t, res.Details)

	res = run(t, dir, "grep", map[string]any{"pattern": "needle", "ignoreCase": true, "glob": "*.go"}, WithoutExternalSearch())
	require.Equal(t, "main.go:3: // needle one\npkg/util.go:3: var Needle = 1\npkg/util_test.go:2: // needle test", text(res))

	res = run(t, dir, "grep", map[string]any{"pattern": "Needle", "path": "pkg", "context": 1}, WithoutExternalSearch())
	require.Equal(t, "util.go-2- \nutil.go:3: var Needle = 1\nutil.go-4- var x = 2", text(res))

	res = run(t, dir, "grep", map[string]any{"pattern": "var", "path": "pkg/util.go"}, WithoutExternalSearch())
	require.Equal(t, "util.go:3: var Needle = 1\nutil.go:4: var x = 2\nutil.go:5: var y = 3", text(res))

	res = run(t, dir, "grep", map[string]any{"pattern": "a.r", "literal": true}, WithoutExternalSearch())
	require.Equal(t, "No matches found", text(res))

	res = run(t, dir, "grep", map[string]any{"pattern": "var", "limit": 2}, WithoutExternalSearch())
	require.Equal(t, "pkg/util.go:3: var Needle = 1\npkg/util.go:4: var x = 2\n\n"+
		"[Stopped at the limit of 2 matches. Use limit=4 to see more, or narrow the pattern]", text(res))
	require.Equal(t, GrepDetails{MatchLimitReached: 2}, res.Details)

	res = run(t, dir, "grep", map[string]any{"pattern": "("}, WithoutExternalSearch())
	require.True(t, res.IsError)

	res = run(t, dir, "grep", map[string]any{"pattern": "x", "path": "nowhere"}, WithoutExternalSearch())
	require.True(t, res.IsError)
	require.Contains(t, text(res), "Path not found")
}

func TestGrepLongLines(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "long.txt"), "needle"+strings.Repeat("z", 600)+"\n")
	res := run(t, dir, "grep", map[string]any{"pattern": "needle"}, WithoutExternalSearch())
	require.Contains(t, text(res), "... [truncated]")
	require.True(t, res.Details.(GrepDetails).LinesTruncated)
}

func TestGrepParentGitignore(t *testing.T) {
	dir := searchTree(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "build", "deep"), 0o755))
	writeFile(t, filepath.Join(dir, "pkg", "sub", "x.log"), "needle\n")
	writeFile(t, filepath.Join(dir, "pkg", "sub", "x.txt"), "needle\n")
	// Searching below the root still honours the root's .gitignore.
	res := run(t, dir, "grep", map[string]any{"pattern": "needle", "path": "pkg/sub"}, WithoutExternalSearch())
	require.Equal(t, "x.txt:1: needle", text(res))
}

func TestGrepRipgrep(t *testing.T) {
	testenv.LookPath(t, "rg")
	dir := searchTree(t)
	// rg honours .gitignore only inside a git repository.
	require.NoError(t, exec.Command("git", "init", "-q", dir).Run())
	res := run(t, dir, "grep", map[string]any{"pattern": "needle", "glob": "*.go"})
	lines := strings.Split(text(res), "\n")
	require.ElementsMatch(t, []string{"main.go:3: // needle one", "pkg/util_test.go:2: // needle test"}, lines)
}

func TestFind(t *testing.T) {
	dir := searchTree(t)
	res := run(t, dir, "find", map[string]any{"pattern": "*.go"}, WithoutExternalSearch())
	require.False(t, res.IsError, text(res))
	require.Equal(t, "main.go\npkg/util.go\npkg/util_test.go", text(res))

	res = run(t, dir, "find", map[string]any{"pattern": "pkg/*_test.go"}, WithoutExternalSearch())
	require.Equal(t, "pkg/util_test.go", text(res))

	res = run(t, dir, "find", map[string]any{"pattern": "**/*.go", "path": "pkg"}, WithoutExternalSearch())
	require.Equal(t, "util.go\nutil_test.go", text(res))

	res = run(t, dir, "find", map[string]any{"pattern": "pk*"}, WithoutExternalSearch())
	require.Equal(t, "pkg/", text(res))

	res = run(t, dir, "find", map[string]any{"pattern": ".*"}, WithoutExternalSearch())
	require.Equal(t, ".gitignore\n.hidden.txt\npkg/.gitignore", text(res))

	res = run(t, dir, "find", map[string]any{"pattern": "*.go", "limit": 2}, WithoutExternalSearch())
	require.Equal(t, "main.go\npkg/util.go\n\n[Stopped at the limit of 2 results. Use limit=4 to see more, or narrow the pattern]", text(res))
	require.Equal(t, FindDetails{ResultLimitReached: 2}, res.Details)

	res = run(t, dir, "find", map[string]any{"pattern": "*.rs"}, WithoutExternalSearch())
	require.Equal(t, "No files found matching pattern", text(res))

	res = run(t, dir, "find", map[string]any{"pattern": "*", "path": "missing"}, WithoutExternalSearch())
	require.True(t, res.IsError)
}

func TestLs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.txt"), "")
	writeFile(t, filepath.Join(dir, "A.txt"), "")
	writeFile(t, filepath.Join(dir, ".env"), "")
	writeFile(t, filepath.Join(dir, "sub", "x"), "")
	require.NoError(t, os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")))

	res := run(t, dir, "ls", map[string]any{})
	require.False(t, res.IsError)
	require.Equal(t, ".env\nA.txt\nb.txt\nlink/\nsub/", text(res))

	res = run(t, dir, "ls", map[string]any{"path": "sub"})
	require.Equal(t, "x", text(res))

	res = run(t, dir, "ls", map[string]any{"limit": 2})
	require.Equal(t, ".env\nA.txt\n\n[Stopped at the limit of 2 entries. Use limit=4 to see more]", text(res))
	require.Equal(t, LsDetails{EntryLimitReached: 2}, res.Details)

	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	require.Equal(t, "(empty directory)", text(run(t, dir, "ls", map[string]any{"path": "empty"})))

	res = run(t, dir, "ls", map[string]any{"path": "b.txt"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "Not a directory")
	res = run(t, dir, "ls", map[string]any{"path": "nope"})
	require.True(t, res.IsError)
	require.Contains(t, text(res), "Path not found")
}

func TestRgGlobArgs(t *testing.T) {
	require.Nil(t, rgGlobArgs(""))
	require.Equal(t, []string{"--type-add", "gopiglob:*.go", "--type", "gopiglob"}, rgGlobArgs("*.go"))
	require.Equal(t, []string{"--glob", "!*.go"}, rgGlobArgs("!*.go"))
	require.Equal(t, []string{"--glob", "src/**/*.ts"}, rgGlobArgs("src/**/*.ts"))
}

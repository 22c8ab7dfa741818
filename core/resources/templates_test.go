package resources

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// write creates path (and its parents) with content.
func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func templatesByName(ts []Template) map[string]Template {
	m := map[string]Template{}
	for _, t := range ts {
		m[t.Name] = t
	}
	return m
}

func TestLoadTemplatesDiscovery(t *testing.T) {
	root := t.TempDir()
	agentDir := filepath.Join(root, "agent")
	cwd := filepath.Join(root, "proj")
	userDir := filepath.Join(agentDir, "prompts")
	projDir := filepath.Join(cwd, ".pi", "prompts")

	write(t, filepath.Join(userDir, "review.md"), "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1")
	write(t, filepath.Join(userDir, "shared.md"), "---\ndescription: user version\n---\nuser")
	write(t, filepath.Join(userDir, ".hidden.md"), "hidden")
	write(t, filepath.Join(userDir, "notes.txt"), "not a template")
	write(t, filepath.Join(userDir, "sub", "deep.md"), "not scanned: no recursion")
	write(t, filepath.Join(userDir, "skipme.md"), "ignored by .ignore")
	write(t, filepath.Join(userDir, ".ignore"), "# comment\nskipme.md\n")
	write(t, filepath.Join(projDir, "shared.md"), "---\ndescription: project version\n---\nproject")
	write(t, filepath.Join(projDir, "fix.md"), "Fix the failing tests")
	extraDir := filepath.Join(root, "extra")
	write(t, filepath.Join(extraDir, "one.md"), "one")
	write(t, filepath.Join(extraDir, ".dot.md"), "explicit directories keep dot files")
	write(t, filepath.Join(root, "single.md"), "single")
	write(t, filepath.Join(root, "single.txt"), "ignored: not markdown")

	ts, errs := LoadTemplates(agentDir, cwd, []string{extraDir, "../single.md", "../single.txt", "../missing"}, true)

	var names []string
	for _, tpl := range ts {
		names = append(names, tpl.Name)
	}
	// Project first, then user, then explicit paths, each directory sorted.
	assert.Equal(t, []string{"fix", "shared", "review", ".dot", "one", "single"}, names)

	m := templatesByName(ts)
	assert.Equal(t, "project", m["shared"].Content, "project wins a name clash")
	assert.Equal(t, LocationProject, m["shared"].Location)

	rv := m["review"]
	assert.Equal(t, "Review code", rv.Description)
	assert.Equal(t, "<file>", rv.ArgumentHint)
	assert.Equal(t, "Review $1", rv.Content)
	assert.Equal(t, filepath.Join(userDir, "review.md"), rv.Path)
	assert.Equal(t, LocationUser, rv.Location)
	assert.Equal(t, SourceInfo{Path: rv.Path, Source: "auto", Scope: ScopeUser, Origin: OriginTopLevel, BaseDir: agentDir}, rv.SourceInfo)

	assert.Equal(t, SourceInfo{Path: m["fix"].Path, Source: "auto", Scope: ScopeProject, Origin: OriginTopLevel, BaseDir: filepath.Join(cwd, ".pi")}, m["fix"].SourceInfo)
	assert.Equal(t, "Fix the failing tests", m["fix"].Description, "first line stands in for a missing description")

	one := m["one"]
	assert.Equal(t, LocationPath, one.Location)
	assert.Equal(t, SourceInfo{Path: one.Path, Source: "local", Scope: ScopeTemporary, Origin: OriginTopLevel, BaseDir: extraDir}, one.SourceInfo)
	assert.Equal(t, filepath.Join(root, "single.md"), m["single"].Path, "relative extra paths resolve against cwd")

	require.Len(t, errs, 2, "%v", errs)
	assert.ErrorIs(t, errs[0], ErrCollision)
	assert.Contains(t, errs[0].Error(), filepath.Join(userDir, "shared.md"))
	assert.Contains(t, errs[1].Error(), filepath.Join(root, "missing"))
	var le *LoadError
	require.ErrorAs(t, errs[1], &le)
	assert.True(t, le.Skipped)
}

func TestLoadTemplatesExplicitUnderDefaultDir(t *testing.T) {
	root := t.TempDir()
	agentDir := filepath.Join(root, "agent")
	p := filepath.Join(agentDir, "prompts", "x.md")
	write(t, p, "x")
	// Listed explicitly but also found by discovery: loads once, as auto.
	ts, errs := LoadTemplates(agentDir, root, []string{p}, true)
	require.Empty(t, errs)
	require.Len(t, ts, 1)
	assert.Equal(t, "auto", ts[0].SourceInfo.Source)

	// Discovery does not recurse, so files in subdirectories of the default
	// directories load only when listed; they keep the directory's scope.
	up := filepath.Join(agentDir, "prompts", "sub", "u.md")
	pp := filepath.Join(root, ".pi", "prompts", "sub", "p.md")
	write(t, up, "u")
	write(t, pp, "p")
	t.Setenv("HOME", root) // "~" expands to the home directory
	ts, errs = LoadTemplates(agentDir, root, []string{filepath.Dir(up), "~/.pi/prompts/sub/p.md"}, true)
	require.Empty(t, errs)
	m := templatesByName(ts)
	require.Len(t, m, 3)
	assert.Equal(t, SourceInfo{Path: up, Source: "local", Scope: ScopeUser, Origin: OriginTopLevel, BaseDir: filepath.Join(agentDir, "prompts")}, m["u"].SourceInfo)
	assert.Equal(t, LocationUser, m["u"].Location)
	assert.Equal(t, SourceInfo{Path: pp, Source: "local", Scope: ScopeProject, Origin: OriginTopLevel, BaseDir: filepath.Join(root, ".pi", "prompts")}, m["p"].SourceInfo)
	assert.Equal(t, LocationProject, m["p"].Location)
}

func TestLoadTemplatesBadFiles(t *testing.T) {
	root := t.TempDir()
	agentDir := filepath.Join(root, "agent")
	dir := filepath.Join(agentDir, "prompts")
	write(t, filepath.Join(dir, "bad.md"), "---\ndescription: [oops\n---\nbody")
	write(t, filepath.Join(dir, "crlf.md"), "---\r\ndescription: Windows file\r\n---\r\nline one\r\nline two\r\n")
	write(t, filepath.Join(dir, "good.md"), "\n\n   \nfirst real line is the description and it is rather long, over sixty characters\nsecond")
	unreadable := filepath.Join(dir, "locked.md")
	write(t, unreadable, "secret")
	require.NoError(t, os.Chmod(unreadable, 0))
	canRead := false
	if f, err := os.Open(unreadable); err == nil {
		canRead = true // running as root
		f.Close()
	}

	ts, errs := LoadTemplates(agentDir, root, nil, true)
	m := templatesByName(ts)
	assert.NotContains(t, m, "bad")
	assert.Equal(t, "Windows file", m["crlf"].Description)
	assert.Equal(t, "line one\nline two", m["crlf"].Content)
	assert.Equal(t, "first real line is the description and it is rather long, ov...", m["good"].Description)

	var bad []error
	for _, err := range errs {
		if strings.Contains(err.Error(), "bad.md") {
			bad = append(bad, err)
		}
	}
	assert.Len(t, bad, 1, "bad YAML is reported exactly once")
	if canRead {
		assert.Len(t, errs, 1)
	} else {
		assert.NotContains(t, m, "locked")
		require.Len(t, errs, 2)
		assert.Contains(t, errs[1].Error(), "locked.md")
		assert.ErrorIs(t, errs[1], os.ErrPermission)
	}
}

func TestParseCommandArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"a b  c", []string{"a", "b", "c"}},
		{"a\tb", []string{"a", "b"}},
		{`"hello world" x`, []string{"hello world", "x"}},
		{`'single quoted' "it's"`, []string{"single quoted", "it's"}},
		{`pre"fix mid"post`, []string{"prefix midpost"}},
		{`"unclosed quote here`, []string{"unclosed quote here"}},
		{`"" a`, []string{"a"}},
		{"héllo wörld", []string{"héllo", "wörld"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ParseCommandArgs(c.in), "input %q", c.in)
	}
}

func TestSubstituteArgs(t *testing.T) {
	args := []string{"a", "b c", "d"}
	cases := []struct {
		name, content string
		args          []string
		want          string
	}{
		{"positional", "$1-$2-$3", args, "a-b c-d"},
		{"missing positional", "[$4][$0]", args, "[][]"},
		{"multi digit", "$10|$1", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"}, "ten|1"},
		{"all", "$@", args, "a b c d"},
		{"arguments", "do: $ARGUMENTS!", args, "do: a b c d!"},
		{"slice from", "${@:2}", args, "b c d"},
		{"slice zero", "${@:0}", args, "a b c d"},
		{"slice len", "${@:1:2}", args, "a b c"},
		{"slice past end", "[${@:9}][${@:2:99}]", args, "[][b c d]"},
		{"slice zero len", "[${@:1:0}]", args, "[]"},
		{"no args", "x $1 $@ y", nil, "x   y"},
		{"plain dollar", "costs $ and $x", args, "costs $ and $x"},
		{"positional value not re-substituted as positional", "$1 $2", []string{"$2", "z"}, "$2 z"},
		// pi runs the steps one after another, so a value inserted by $1
		// is seen by the later $@ step.
		{"later steps see earlier values", "$1", []string{"$@", "q"}, "$@ q"},
		// $ARGUMENTS / $@ go through JavaScript replacement patterns.
		{"js dollar dollar", "$@", []string{"5$$"}, "5$"},
		{"js match pattern", "<$@>", []string{"$&"}, "<$@>"},
		{"js before pattern", "x$ARGUMENTS", []string{"[$`]"}, "x[x]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, SubstituteArgs(c.content, c.args))
		})
	}
}

func TestExpandTemplate(t *testing.T) {
	ts := []Template{
		{Name: "greet", Content: "Say hello to $1 and then $ARGUMENTS"},
		{Name: "plain", Content: "No arguments here."},
	}
	assert.Equal(t, `Say hello to Ann Lee and then Ann Lee now`, ExpandTemplate(`/greet "Ann Lee" now`, ts))
	assert.Equal(t, "No arguments here.", ExpandTemplate("/plain", ts))
	assert.Equal(t, "Say hello to  and then ", ExpandTemplate("/greet", ts))
	assert.Equal(t, "/unknown x y", ExpandTemplate("/unknown x y", ts))
	assert.Equal(t, "greet x", ExpandTemplate("greet x", ts))
	assert.Equal(t, " /greet x", ExpandTemplate(" /greet x", ts))
	assert.Equal(t, "/greet\tx", ExpandTemplate("/greet\tx", ts), "only a space ends the name")
}

func TestLoadErrorFormat(t *testing.T) {
	err := error(&LoadError{Path: "/a/b.md", Err: errors.New("boom")})
	assert.Equal(t, "/a/b.md: boom", err.Error())
}

func TestTemplateTakesArguments(t *testing.T) {
	for body, want := range map[string]bool{
		"Review $1":              true,
		"Fix $@ now":             true,
		"Explain $ARGUMENTS":     true,
		"From ${@:2} on":         true,
		"Costs $ 5, no argument": false,
		"Plain text":             false,
	} {
		assert.Equal(t, want, Template{Content: body}.TakesArguments(), body)
	}
}

package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests read the Seatbelt profile's text; they run on every OS.
// What the profile does is seen only on a Mac (seatbelt_darwin_test.go).

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.sb from the generator")

// sexp is one SBPL expression: an atom, a string, a regex (#"..."), or
// a list.
type sexp struct {
	atom, str, regex string
	isStr, isRegex   bool
	list             []sexp
	isList           bool
}

// readSBPL reads a profile as SBPL's reader does, as far as gopi's
// profiles go: lists, atoms, "strings" with backslash escapes,
// #"regexes", and comments from ';' to the line's end. It fails on what
// the reader would refuse: an unclosed string or list, a stray ')', an
// escape it does not know.
func readSBPL(t *testing.T, text string) []sexp {
	t.Helper()
	r := &sbplReader{s: text}
	var out []sexp
	for {
		r.skip()
		if r.i >= len(r.s) {
			return out
		}
		e, err := r.read()
		require.NoError(t, err, "the profile does not read as SBPL:\n%s", text)
		out = append(out, e)
	}
}

type sbplReader struct {
	s string
	i int
}

func (r *sbplReader) skip() {
	for r.i < len(r.s) {
		switch c := r.s[r.i]; {
		case c == ';':
			for r.i < len(r.s) && r.s[r.i] != '\n' {
				r.i++
			}
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *sbplReader) read() (sexp, error) {
	r.skip()
	if r.i >= len(r.s) {
		return sexp{}, errors.New("unexpected end")
	}
	switch c := r.s[r.i]; {
	case c == '(':
		r.i++
		e := sexp{isList: true}
		for {
			r.skip()
			if r.i >= len(r.s) {
				return sexp{}, errors.New("unclosed list")
			}
			if r.s[r.i] == ')' {
				r.i++
				return e, nil
			}
			sub, err := r.read()
			if err != nil {
				return sexp{}, err
			}
			e.list = append(e.list, sub)
		}
	case c == ')':
		return sexp{}, fmt.Errorf("stray ) at %d", r.i)
	case c == '"':
		s, err := r.str()
		return sexp{str: s, isStr: true}, err
	case c == '#' && strings.HasPrefix(r.s[r.i:], `#"`):
		r.i++
		s, err := r.str()
		return sexp{regex: s, isRegex: true}, err
	default:
		start := r.i
		for r.i < len(r.s) && !strings.ContainsRune(" \n\t\r()\";", rune(r.s[r.i])) {
			r.i++
		}
		return sexp{atom: r.s[start:r.i]}, nil
	}
}

func (r *sbplReader) str() (string, error) {
	r.i++ // the opening quote
	var b strings.Builder
	for r.i < len(r.s) {
		c := r.s[r.i]
		r.i++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if r.i >= len(r.s) {
				return "", errors.New("unclosed string")
			}
			e := r.s[r.i]
			r.i++
			switch e {
			case '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				return "", fmt.Errorf("unknown escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("unclosed string")
}

// rule is an (allow ...) or (deny ...) form: its operations and its
// filters.
type rule struct {
	action  string
	ops     []string
	filters []sexp
}

func rules(t *testing.T, profile string) []rule {
	t.Helper()
	var out []rule
	for _, e := range readSBPL(t, profile) {
		require.True(t, e.isList && len(e.list) > 0, "a top-level form is a list")
		head := e.list[0].atom
		if head == "version" {
			continue
		}
		require.Contains(t, []string{"allow", "deny"}, head)
		r := rule{action: head}
		for _, x := range e.list[1:] {
			if x.atom != "" {
				r.ops = append(r.ops, x.atom)
			} else {
				r.filters = append(r.filters, x)
			}
		}
		out = append(out, r)
	}
	return out
}

// filter renders a filter as "(name value)" with its string read, for
// comparing.
func (e sexp) String() string {
	switch {
	case e.isStr:
		return fmt.Sprintf("%q", e.str)
	case e.isRegex:
		return "#" + fmt.Sprintf("%q", e.regex)
	case e.isList:
		var parts []string
		for _, x := range e.list {
			parts = append(parts, x.String())
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	return e.atom
}

// writeFilters are the filters of every allow rule whose operations
// include a write, and whether one of them allows writes with no filter.
func writeFilters(t *testing.T, profile string) (filters []string, everywhere bool) {
	for _, r := range rules(t, profile) {
		if r.action != "allow" || !slices.ContainsFunc(r.ops, func(op string) bool { return strings.HasPrefix(op, "file-write") }) {
			continue
		}
		if len(r.filters) == 0 {
			everywhere = true
		}
		for _, f := range r.filters {
			filters = append(filters, f.String())
		}
	}
	return filters, everywhere
}

// deviceFilters are the write filters every profile has.
var deviceFilters = []string{
	`(literal "/dev/null")`, `(literal "/dev/zero")`, `(literal "/dev/random")`, `(literal "/dev/urandom")`,
	`(literal "/dev/tty")`, `(literal "/dev/dtracehelper")`,
	`(literal "/dev/ptmx")`, `(regex #"^/dev/ttys[0-9]+$")`, `(subpath "/dev/fd")`,
}

func subpaths(paths ...string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, fmt.Sprintf("(subpath %q)", p))
	}
	return out
}

// TestSeatbeltProfileWorkspaceWrite: denied by default; reads anywhere;
// writes in the project, the writable roots and the temp dir, the
// devices and the terminals, nowhere else; the first rule is the deny.
func TestSeatbeltProfileWorkspaceWrite(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := Policy{Mode: WorkspaceWrite, WritableRoots: []string{filepath.Join(base, "project"), filepath.Join(base, "cache")}}
	tmp := filepath.Join(base, "tmp")
	profile, err := seatbeltProfile(p, writableDirs(p, tmp))
	require.NoError(t, err)

	rs := rules(t, profile)
	require.NotEmpty(t, rs)
	assert.Equal(t, rule{action: "deny", ops: []string{"default"}}, rs[0], "closed by default")
	assert.Contains(t, rs, rule{action: "allow", ops: []string{"file-read*"}}, "reads anywhere")
	filters, everywhere := writeFilters(t, profile)
	assert.False(t, everywhere, "no rule allows writes everywhere")
	want := slices.Concat(subpaths(filepath.Join(base, "project"), filepath.Join(base, "cache"), tmp), deviceFilters)
	assert.ElementsMatch(t, want, filters)
	assert.True(t, strings.HasPrefix(profile, "(version 1)\n"), profile)
}

// TestSeatbeltProfileReadOnly: read-only writes only the temp dir (and
// the devices), whatever roots the policy lists.
func TestSeatbeltProfileReadOnly(t *testing.T) {
	p := Policy{Mode: ReadOnly, WritableRoots: []string{"/gopi-test/project"}}
	profile, err := seatbeltProfile(p, writableDirs(p, "/gopi-test/tmp"))
	require.NoError(t, err)
	filters, everywhere := writeFilters(t, profile)
	assert.False(t, everywhere)
	assert.ElementsMatch(t, slices.Concat(subpaths("/gopi-test/tmp"), deviceFilters), filters)
	assert.Contains(t, profile, "; gopi's sandbox: read-only, network off.")
}

// TestSeatbeltProfileNetwork: with the network off only Unix sockets
// are allowed; with it on, every network operation.
func TestSeatbeltProfileNetwork(t *testing.T) {
	isNet := func(op string) bool { return strings.HasPrefix(op, "network") || op == "system-socket" }
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprint("network=", network), func(t *testing.T) {
			p := Policy{Mode: WorkspaceWrite, Network: network, WritableRoots: []string{"/gopi-test/project"}}
			profile, err := seatbeltProfile(p, writableDirs(p, "/gopi-test/tmp"))
			require.NoError(t, err)
			var open bool
			for _, r := range rules(t, profile) {
				if r.action != "allow" || !slices.ContainsFunc(r.ops, isNet) {
					continue
				}
				if len(r.filters) == 0 {
					open = true
					assert.Equal(t, []string{"network*"}, r.ops)
					continue
				}
				if !network {
					for _, f := range r.filters {
						assert.Contains(t, []string{"(local unix-socket)", "(remote unix-socket)", "(socket-domain AF_UNIX)"}, f.String(),
							"with the network off a network rule names Unix sockets only")
					}
				}
			}
			assert.Equal(t, network, open, "(allow network*) with the network on, and only then")
		})
	}
}

// TestSeatbeltProfileEscapesPaths: a writable directory whose name
// holds a double quote, a backslash, a newline or a tab is written as an
// SBPL string that reads back as the same path; a name with another
// control character, which SBPL has no escape for, is refused.
func TestSeatbeltProfileEscapesPaths(t *testing.T) {
	weird := "/gopi-test/we\"ird\\dir\nwith\ttabs) (allow file-write*"
	p := Policy{Mode: WorkspaceWrite, WritableRoots: []string{weird}}
	profile, err := seatbeltProfile(p, writableDirs(p, "/gopi-test/tmp"))
	require.NoError(t, err)
	assert.Contains(t, profile, `(subpath "/gopi-test/we\"ird\\dir\nwith\ttabs) (allow file-write*")`)
	filters, everywhere := writeFilters(t, profile)
	assert.False(t, everywhere, "the name cannot open a rule of its own")
	assert.ElementsMatch(t, slices.Concat(subpaths(weird, "/gopi-test/tmp"), deviceFilters), filters)

	for _, c := range []string{"\x00", "\x01", "\x1b", "\x7f"} {
		_, err := sbplString("/a" + c + "b")
		assert.ErrorIs(t, err, ErrPath, "%q", c)
		p := Policy{Mode: WorkspaceWrite, WritableRoots: []string{"/gopi-test/a" + c + "b"}}
		_, err = seatbeltProfile(p, writableDirs(p, "/gopi-test/tmp"))
		assert.ErrorIs(t, err, ErrPath, "%q", c)
	}
	s, err := sbplString("/Users/é/日本")
	require.NoError(t, err)
	assert.Equal(t, `"/Users/é/日本"`, s, "UTF-8 passes as it is")
}

// TestSeatbeltProfileFollowsLinks: Seatbelt matches the path the kernel
// resolved, so each writable directory is written with its links
// followed (on macOS, /tmp is a link to /private/tmp), also below a
// link when the directory does not exist yet; a root named twice is
// written once.
func TestSeatbeltProfileFollowsLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	target := filepath.Join(base, "private", "tmp")
	require.NoError(t, os.MkdirAll(filepath.Join(target, "project"), 0o755))
	link := filepath.Join(base, "tmp")
	require.NoError(t, os.Symlink(target, link))

	p := Policy{Mode: WorkspaceWrite, WritableRoots: []string{
		filepath.Join(link, "project"), filepath.Join(link, "not-yet", "deeper"), filepath.Join(target, "project"),
	}}
	profile, err := seatbeltProfile(p, writableDirs(p, link))
	require.NoError(t, err)
	filters, _ := writeFilters(t, profile)
	assert.ElementsMatch(t, slices.Concat(subpaths(filepath.Join(target, "project"), filepath.Join(target, "not-yet", "deeper"), target), deviceFilters), filters)
	assert.NotContains(t, profile, `"`+link)
}

// TestSeatbeltArgs: the command runs under /usr/bin/sandbox-exec, never
// one found in $PATH, with the profile as a string, and "--" before the
// command so that a command starting with "-" is not read as an option.
func TestSeatbeltArgs(t *testing.T) {
	assert.Equal(t, []string{"/usr/bin/sandbox-exec", "-p", "(version 1)", "--", "/bin/bash", "-c", "-x"},
		seatbeltArgs("(version 1)", "/bin/bash", []string{"bash", "-c", "-x"}))
	assert.Equal(t, []string{"/usr/bin/sandbox-exec", "-p", "(version 1)", "--", "/usr/bin/true"},
		seatbeltArgs("(version 1)", "/usr/bin/true", []string{"true"}))
}

// TestSeatbeltProfileGolden keeps the whole profile for a typical policy
// in testdata, so that a change to it shows in review (go test -run
// Golden -update rewrites it).
func TestSeatbeltProfileGolden(t *testing.T) {
	for name, p := range map[string]Policy{
		"workspace-write":   {Mode: WorkspaceWrite, WritableRoots: []string{"/gopi-test/Users/me/project", "/gopi-test/Users/me/Library/Caches/go-build"}},
		"read-only-network": {Mode: ReadOnly, Network: true},
	} {
		t.Run(name, func(t *testing.T) {
			profile, err := seatbeltProfile(p, writableDirs(p, "/gopi-test/private/var/folders/xy/T/gopi-sandbox-1"))
			require.NoError(t, err)
			rules(t, profile) // it reads
			path := filepath.Join("testdata", "seatbelt-"+name+".sb")
			if *updateGolden {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(profile), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), profile)
		})
	}
}

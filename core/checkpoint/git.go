package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// git runs git commands for one repository. Every command gets a clean
// environment for what it reads: no pager, no prompts, no user or system
// attributes that could change the bytes stored.
type git struct {
	top    string // the work tree's top directory
	gitDir string // its git directory, absolute
}

// openGit finds the work tree dir belongs to.
func openGit(ctx context.Context, dir string) (*git, error) {
	out, err := runGit(ctx, dir, nil, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--absolute-git-dir")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotRepo, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "true" {
		return nil, errNotRepo
	}
	return &git{top: lines[1], gitDir: lines[2]}, nil
}

// run runs git in the work tree's top directory with env added.
func (g *git) run(ctx context.Context, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	return runGit(ctx, g.top, env, stdin, args...)
}

// gitEnv is what every git command runs with: nothing interactive, and
// the user's global and system configuration kept (their object format,
// their safe.directory), but attribute files outside the tree ignored.
func gitEnv(extra []string) []string {
	env := append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"GIT_OPTIONAL_LOCKS=0", // never touch the user's index for a stat refresh
		"LC_ALL=C",
	)
	return append(env, extra...)
}

func runGit(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=false", "-c", "core.attributesFile=" + os.DevNull}, args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv(env)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// splitZ splits NUL-terminated output.
func splitZ(b []byte) []string {
	var out []string
	for _, f := range bytes.Split(b, []byte{0}) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out
}

// catFile reads blobs with one `git cat-file --batch`; Close ends it.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (g *git) catFile(ctx context.Context) (*catFile, error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = g.top
	cmd.Env = gitEnv(nil)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

// blob returns an object's bytes.
func (c *catFile) blob(id string) ([]byte, error) {
	if _, err := io.WriteString(c.in, id+"\n"); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	head, err := c.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	var name, typ string
	var size int
	if _, err := fmt.Sscanf(head, "%s %s %d", &name, &typ, &size); err != nil || typ != "blob" {
		return nil, fmt.Errorf("git cat-file: object %s: %q", id, strings.TrimSpace(head))
	}
	data := make([]byte, size+1) // the content and its newline
	if _, err := io.ReadFull(c.out, data); err != nil {
		return nil, fmt.Errorf("git cat-file: object %s: %w", id, err)
	}
	return data[:size], nil
}

func (c *catFile) Close() error {
	_ = c.in.Close()
	return c.cmd.Wait()
}

// relTo is p (slash-separated, relative to the top) made relative to the
// scope prefix, or false when it lies outside.
func relTo(prefix, p string) (string, bool) {
	if prefix == "" {
		return p, true
	}
	if rest, ok := strings.CutPrefix(p, prefix+"/"); ok {
		return rest, true
	}
	return "", false
}

// native is a slash path under root as this system writes it.
func native(root, p string) string { return filepath.Join(root, filepath.FromSlash(p)) }

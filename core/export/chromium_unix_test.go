//go:build unix

package export

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// chromiumNames are the names Debian, Ubuntu and Google ship the browser
// under.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findChromium returns a headless-capable browser, or skips the test;
// with GOPI_REQUIRE_TOOLS=1 (as CI sets) a missing browser fails it.
func findChromium(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, chromiumNames...)
}

// dumpDOM loads file in headless chromium and returns the DOM after the
// page's scripts ran.
func dumpDOM(t *testing.T, bin, file string) string {
	t.Helper()
	profile := t.TempDir()
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir=" + profile,
		// Keep the browser from reaching out on its own.
		"--no-first-run", "--no-default-browser-check", "--disable-sync",
		"--disable-extensions", "--disable-background-networking",
		"--disable-component-update", "--disable-default-apps",
		"--disable-dev-shm-usage",
	}
	args = append(args, "--dump-dom", "file://"+file)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	// Chromium forks helpers (zygote, renderer): put them in a group of
	// their own and kill the whole group on timeout and afterwards.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr

	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			t.Logf("kill chromium group: %v", kerr)
		}
	}
	t.Logf("chromium took %v", time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("chromium timed out: %v\nstderr:\n%s", ctx.Err(), tail(stderr.String()))
	}
	require.NoError(t, err, "chromium failed; stderr:\n%s", tail(stderr.String()))
	dom := stdout.String()
	require.Contains(t, dom, "</html>", "no DOM dumped; stderr:\n%s", tail(stderr.String()))
	return dom
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

func TestChromiumRendersPage(t *testing.T) {
	bin := findChromium(t)
	file := filepath.Join(t.TempDir(), "session.html")
	require.NoError(t, WriteFile(file, inputOf(conversation(t))))

	check := func(t *testing.T, dom string, scripts int) {
		t.Helper()
		// The conversation, with the user's markup as text.
		contains(t, dom, "Why does &lt;script&gt;alert('pwned')&lt;/script&gt; appear in <strong>bold</strong> output?")
		if n := strings.Count(dom, "<script"); n != scripts {
			t.Errorf("DOM has %d script elements, want %d (the page's own)", n, scripts)
		}
		contains(t, dom, "Let me look.")
		contains(t, dom, "listing-line-one\nlisting-line-two")
		contains(t, dom, "ENOENT: missing.txt does not exist")
		contains(t, dom, "<code>make test</code>")
		contains(t, dom, "visible <em>custom</em> note")
		// Markdown, as elements the browser built.
		contains(t, dom, "<h2>Findings</h2>")
		contains(t, dom, "<th>file</th>")
		contains(t, dom, "<td>main.go</td>")
		contains(t, dom, "<del>wrong</del>")
		contains(t, dom, `<code class="language-go">`)
		contains(t, dom, `<img src="data:image/png;base64,`+pixel+`"`)
		// Collapsed thinking, open tool calls.
		contains(t, dom, `<details class="thinking"><summary>Thinking</summary>`)
		contains(t, dom, `<details class="tool failed" open="">`)
		// Totals.
		contains(t, dom, "in 3,700")
		contains(t, dom, "out 520")
		contains(t, dom, "cache read 1,200")
		contains(t, dom, "cache write 50")
		contains(t, dom, `<td class="tot-cost">$0.0195</td>`)
		contains(t, dom, "1 user · 4 assistant · 2 tool calls · 3 tool results")
		contains(t, dom, "<code>anthropic/claude-test</code>, <code>openai/gpt-test</code>")
	}

	t.Run("with script", func(t *testing.T) {
		dom := dumpDOM(t, bin, file)
		check(t, dom, 1)
		// The script ran: the expand/collapse buttons are shown.
		contains(t, dom, `<div class="controls" id="controls">`)
	})
	// --dump-dom itself needs JavaScript, so "disabled" is the same page
	// with its one script element removed: everything must still be there,
	// and the buttons that would need the script stay hidden.
	t.Run("without script", func(t *testing.T) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		page := string(data)
		start, end := strings.Index(page, "<script>"), strings.Index(page, "</script>")
		require.True(t, start > 0 && end > start)
		bare := filepath.Join(filepath.Dir(file), "noscript.html")
		require.NoError(t, os.WriteFile(bare, []byte(page[:start]+page[end+len("</script>"):]), 0o644))

		dom := dumpDOM(t, bin, bare)
		check(t, dom, 0)
		contains(t, dom, `<div class="controls" id="controls" hidden="">`)
	})
}

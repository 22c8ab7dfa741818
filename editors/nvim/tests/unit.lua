-- Unit tests of the plugin's pure parts: edit replay for review diffs, the
-- renderer on events and messages, the status text and completion items.
-- Ends with "N passed, N failed".
--
--   nvim -l tests/unit.lua
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
vim.opt.rtp:prepend(vim.fn.fnamemodify(here, ":h"))
local lib = dofile(here .. "/lib.lua")
local test, eq, ok = lib.run, lib.eq, lib.ok

test("apply_edits replays edit's replacements, and gives up on a miss", function()
  local review = require("gopi.review")
  eq("a X c X", review.apply_edits("a b c b", { { oldText = "b", newText = "X" }, { oldText = "b", newText = "X" } }))
  eq(nil, review.apply_edits("abc", { { oldText = "z", newText = "y" } }))
  eq(nil, review.apply_edits("abc", { { oldText = "", newText = "y" } }))
  eq("a.c", review.apply_edits("a%c", { { oldText = "%", newText = "." } }), "patterns are plain text")
end)

test("after an Allow from the inline review, a buffer gopi did not write after all shows its file again", function()
  local inline = require("gopi.inline")
  local path = vim.fn.tempname()
  vim.fn.writefile({ "old" }, path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "new" })
  vim.bo[buf].modified = false
  inline.watch_ms, inline.watch_tries = 10, 3
  local echo, said = vim.api.nvim_echo, {}
  vim.api.nvim_echo = function(chunks)
    table.insert(said, chunks[1][1])
  end
  inline.watch(buf, path, { "old" }, { "new" })
  vim.wait(1000, function()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "old"
  end, 10)
  eq({ "old" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "the file's text again")
  eq(false, vim.bo[buf].modified, "unmodified")
  vim.api.nvim_echo = echo
  eq(1, #said, "a warning")
  lib.ok(said[1]:find("was not written by gopi", 1, true), "the warning: " .. said[1])
  -- gopi's write came: the buffer is left as it is.
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "new" })
  vim.bo[buf].modified = false
  inline.watch(buf, path, { "old" }, { "new" })
  vim.fn.writefile({ "new" }, path)
  vim.wait(200)
  eq({ "new" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "written: kept")
  vim.cmd("bwipeout! " .. buf)
  inline.watch_ms, inline.watch_tries = 200, 50
end)

test(":checkhealth gopi names a review option that is neither tab nor inline", function()
  local config = require("gopi.config")
  config.setup({ review = "inlin", cmd = "/nonexistent/gopi" })
  vim.cmd("silent checkhealth gopi")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  config.setup({})
  lib.ok(text:find('review = "inlin": neither "tab" nor "inline"', 1, true), "the warning:\n" .. text)
end)

test(":checkhealth gopi names the sandbox option: set, unset, or a value set past setup()", function()
  local config = require("gopi.config")
  local function health()
    vim.cmd("silent checkhealth gopi")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    vim.cmd("bwipeout!")
    return text
  end
  config.setup({ sandbox = "read-only", cmd = "/nonexistent/gopi" })
  local text = health()
  lib.ok(text:find("sandbox: read-only (setup)", 1, true), text)
  config.setup({ cmd = "/nonexistent/gopi" })
  text = health()
  lib.ok(text:find("sandbox: not set, gopi decides", 1, true), text)
  config.options.sandbox = "none"
  text = health()
  lib.ok(text:find('sandbox = "none": none of "off", "read-only", "workspace-write"; gopi does not start', 1, true), text)
  config.setup({})
end)

test("a gopi that install.sh put in $GOPI_INSTALL_DIR is found when it is not on PATH; :checkhealth names it and its version", function()
  -- The real gopi behind a script that answers --version as a release does.
  local real = vim.env.GOPI_BIN
  if not real or real == "" then
    real = vim.fn.fnamemodify(here, ":h:h:h") .. "/bin/gopi"
  end
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local fake = dir .. "/gopi"
  vim.fn.writefile({
    "#!/bin/sh",
    'if [ "$1" = --version ]; then printf "gopi 9.8.7\\ncommit abc\\nbuilt 2026-11-29T00:00:00Z\\n"; exit 0; fi',
    "exec " .. vim.fn.shellescape(real) .. ' "$@"',
  }, fake)
  vim.fn.setfperm(fake, "rwxr-xr-x")
  local path, install_dir = vim.env.PATH, vim.env.GOPI_INSTALL_DIR
  vim.env.PATH = "/usr/bin:/bin"
  vim.env.GOPI_INSTALL_DIR = dir
  local done, bin, how, text = pcall(function()
    if vim.fn.executable("gopi") == 1 then
      error("a gopi on /usr/bin:/bin: " .. vim.fn.exepath("gopi"))
    end
    local b, h = require("gopi.client").binary({})
    require("gopi.config").setup({})
    vim.cmd("silent checkhealth gopi")
    local t = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    vim.cmd("bwipeout!")
    return b, h, t
  end)
  vim.env.PATH, vim.env.GOPI_INSTALL_DIR = path, install_dir
  ok(done, tostring(bin))
  eq(fake, bin)
  ok(how:find("install.sh", 1, true), how)
  ok(text:find("binary: " .. fake .. " (from install.sh's folder", 1, true), "the binary:\n" .. text)
  ok(text:find("version: gopi 9.8.7, commit abc, built 2026-11-29T00:00:00Z", 1, true), "the version:\n" .. text)
end)

test("a failed codemode script: its calls under it (one cancelled), its output, console and error; a fence longer than the script's", function()
  local render = require("gopi.render")
  local buf = vim.api.nvim_create_buf(false, true)
  local r = render.new(buf)
  local st = { streaming = false, changed = {} }
  local code = "const md = `\n```js\n`;\nawait tools.bash({ command: 'sleep 9' });"
  local result = {
    { type = "text", text = "Script failed\nWall time 0.3 seconds\nOutput:\n" },
    { type = "text", text = "partial\n<console_output>\nstarting\n</console_output>\nScript error:\nError: boom\n    at <eval>:3" },
  }
  local calls = {
    { id = "c1/1", name = "bash", args = '{"command":"sleep 9"}', status = "cancelled" },
    { id = "c1/2", name = "mcp__dev__x", args = '{"n":1}', status = "error", error = "bad n\nmore" },
  }
  for _, ev in ipairs({
    { type = "agent_start" },
    { type = "tool_execution_start", toolCallId = "c1", toolName = "codemode", args = { code = code } },
    { type = "tool_execution_start", toolCallId = "c1/1", toolName = "bash", args = { command = "sleep 9" }, parentToolCallId = "c1" },
    { type = "tool_execution_update", toolCallId = "c1", partialResult = { content = {}, details = { calls = { calls[1], calls[2] } } } },
    {
      type = "tool_execution_end",
      toolCallId = "c1/1",
      isError = true,
      result = { content = { { type = "text", text = "Operation aborted" } } },
      parentToolCallId = "c1",
    },
    { type = "tool_execution_end", toolCallId = "c1", isError = true, result = { content = result, details = { calls = calls } } },
    { type = "agent_settled" },
  }) do
    r:event(ev, st)
  end
  eq({
    "✗ codemode: 2 tool calls · failed after 0.3 s",
    "````javascript",
    "const md = `",
    "```js",
    "`;",
    "await tools.bash({ command: 'sleep 9' });",
    "````",
    "    ■ bash: sleep 9  (cancelled)",
    '    ✗ mcp__dev__x: {"n":1}  (failed: bad n)',
    "    ---",
    "    Script failed after 0.3 s",
    "    partial",
    "    [console output]",
    "    starting",
    "    [error]",
    "    Error: boom",
    "        at <eval>:3",
  }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  eq(nil, render.script_result({ { type = "text", text = "Tool codemode not found" } }), "a result that is not a script's")
end)

test("a codemode script's calls are listed in the order it made them, whatever order they started in", function()
  local render = require("gopi.render")
  local buf = vim.api.nvim_create_buf(false, true)
  local r = render.new(buf)
  local st = { streaming = false, changed = {} }
  local code = "await Promise.all(['a', 'b', 'c'].map((path) => tools.ls({ path })));"
  for _, ev in ipairs({
    { type = "agent_start" },
    { type = "tool_execution_start", toolCallId = "c1", toolName = "codemode", args = { code = code } },
    { type = "tool_execution_start", toolCallId = "c1/3", toolName = "ls", args = { path = "c" }, parentToolCallId = "c1" },
    { type = "tool_execution_start", toolCallId = "c1/1", toolName = "ls", args = { path = "a" }, parentToolCallId = "c1" },
    { type = "tool_execution_start", toolCallId = "c1/2", toolName = "ls", args = { path = "b" }, parentToolCallId = "c1" },
  }) do
    r:event(ev, st)
  end
  local lines = vim.tbl_filter(function(l)
    return l:match("^    %S+ ls: ") ~= nil
  end, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  eq(3, #lines, vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false)))
  ok(lines[1]:find("ls: a", 1, true) and lines[2]:find("ls: b", 1, true) and lines[3]:find("ls: c", 1, true), vim.inspect(lines))
end)

test("the renderer streams deltas in place and keeps tool blocks whole", function()
  local render = require("gopi.render")
  local buf = vim.api.nvim_create_buf(false, true)
  local r = render.new(buf)
  local st = { streaming = false, changed = {} }
  local evs = {
    { type = "agent_start" },
    { type = "message_start", message = { role = "user", content = { { type = "text", text = "hi\nthere" } } } },
    { type = "message_start", message = { role = "assistant", content = {} } },
    { type = "message_update", assistantMessageEvent = { type = "text_start", contentIndex = 0 } },
    { type = "message_update", assistantMessageEvent = { type = "text_delta", contentIndex = 0, delta = "Hello, " } },
    { type = "message_update", assistantMessageEvent = { type = "text_delta", contentIndex = 0, delta = "world\nsecond" } },
    { type = "message_update", assistantMessageEvent = { type = "text_end", contentIndex = 0 } },
    { type = "message_end", message = { role = "assistant", stopReason = "toolUse" } },
    { type = "tool_execution_start", toolCallId = "c1", toolName = "write", args = { path = "a.txt", content = "x" } },
    { type = "tool_execution_start", toolCallId = "c2", toolName = "bash", args = { command = "ls" } },
    { type = "tool_execution_update", toolCallId = "c1", partialResult = { content = { { type = "text", text = "writing" } } } },
    { type = "tool_execution_end", toolCallId = "c1", isError = false, result = { content = { { type = "text", text = "wrote 1 byte" } } } },
    { type = "tool_execution_end", toolCallId = "c2", isError = true, result = { content = { { type = "text", text = "no\nway" } } } },
    { type = "queue_update", steering = {}, followUp = { "later" } },
    { type = "agent_settled" },
  }
  for _, ev in ipairs(evs) do
    r:event(ev, st)
  end
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  eq(
    table.concat({
      "## You",
      "",
      "hi",
      "there",
      "",
      "## gopi",
      "",
      "Hello, world",
      "second",
      "",
      "✓ write: a.txt",
      "    content: x",
      "    path: a.txt",
      "    ---",
      "    wrote 1 byte",
      "",
      "✗ bash: ls",
      "    command: ls",
      "    ---",
      "    no",
      "    way",
    }, "\n"),
    text,
    "the chat"
  )
  eq(false, st.streaming, "settled")
  eq({ ["a.txt"] = true }, st.changed, "changed files")
  eq({ "later" }, st.queue.followUp, "the queue")
end)

test("the status shows model, thinking, context (escaped) and cost", function()
  local chat = require("gopi.chat")
  local c = chat.current()
  c.state.status = { model = "faux-1", thinking = "high", percent = 75.4, cost = 0.0123 }
  eq("gopi · faux-1 · think high · %#WarningMsg#75%%%* · $0.012", c:status())
  eq("gopi · faux-1 · think high · 75% · $0.012", c:status_text())
  -- The component for statuslines: no highlights, the percent sign doubled.
  eq("gopi · faux-1 · think high · 75%% · $0.012", require("gopi").status())
  c.state.status = { percent = 93 }
  eq("gopi · %#ErrorMsg#93%%%*", c:status())
  -- Estimated (after a compaction): marked with a tilde.
  c.state.status = { percent = 12.2, estimated = true }
  eq("gopi · ~12%%", c:status())
  eq("gopi · ~12%", c:status_text())
  -- The estimate: four characters (UTF-16 code units) a token, rounded up.
  eq(
    5,
    chat.estimate({
      { role = "compactionSummary", summary = "abcd" },
      { role = "user", content = "é€" },
      { role = "assistant", content = { { type = "toolCall", name = "ls", arguments = { a = 1 } } } },
      { role = "bashExecution", command = "ls", output = "x" },
    }),
    "(4 + 2 + 2 + 7 + 3 = 18 characters)"
  )
end)

test("the sandbox option: nil or a mode, checked by setup() with an error naming what it takes; --sandbox only when set", function()
  local config, client = require("gopi.config"), require("gopi.client")
  config.setup({ sandbox = "read-only" })
  for _, bad in ipairs({ "readonly", "on", true, 1 }) do
    local good, err = pcall(config.setup, { sandbox = bad })
    eq(false, good, "setup({sandbox = " .. vim.inspect(bad) .. "})")
    ok(
      tostring(err):find('sandbox: expected nil (gopi decides), "off", "read-only" or "workspace-write", got ' .. tostring(bad), 1, true),
      "the error: " .. tostring(err)
    )
    eq("read-only", config.options.sandbox, "a refused setup() changes nothing")
  end
  for _, mode in ipairs({ "off", "read-only", "workspace-write" }) do
    eq(
      { "gopi", "--mode", "jsonrpc", "--approval", "writes", "--sandbox", mode, "-e", "x.ts" },
      client.command("gopi", config.setup({ sandbox = mode, args = { "-e", "x.ts" } }))
    )
  end
  eq({ "gopi", "--mode", "jsonrpc", "--approval", "writes" }, client.command("gopi", config.setup({})), "nil: gopi decides")
  -- Set past setup(): gopi does not start.
  local c, err = client.start({ cfg = vim.tbl_extend("force", config.options, { cmd = vim.v.progpath, sandbox = "none" }), cwd = vim.fn.getcwd(), ui = {} })
  eq(nil, c)
  ok(err:find('the sandbox option is "none"', 1, true), err)
end)

test("the status names the sandbox gopi reports: its mode, +net, a warning when it cannot be enforced, nothing without one", function()
  local c = require("gopi.chat").current()
  c.state.status = { model = "faux-1", sandbox = { mode = "read-only", network = false, layers = { "landlock-fs", "seccomp" } } }
  eq("gopi · faux-1 · sandbox read-only", c:status())
  c.state.status.sandbox = { mode = "workspace-write", network = true, layers = { "landlock-fs" } }
  eq("gopi · faux-1 · sandbox workspace-write +net", c:status_text())
  c.state.status.sandbox = { mode = "workspace-write", network = false, layers = {}, problem = "this kernel has no Landlock" }
  eq("gopi · faux-1 · %#WarningMsg#sandbox workspace-write not enforced%*", c:status())
  eq("gopi · faux-1 · sandbox workspace-write not enforced", require("gopi").status())
  c.state.status.sandbox = nil
  eq("gopi · faux-1", c:status())
  c.state.status = {}
end)

test("the sandbox's escape question: its own label, and the picker's prompt is gopi's question as it is", function()
  local review = require("gopi.review")
  local d = { toolName = "bash", toolCallId = "c1", args = { command = "echo x > ~/x" }, sandboxEscape = true }
  local message = "gopi's sandbox stopped bash: echo x > ~/x\nRun it once outside the sandbox?"
  local got = {}
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    got = { items = items, prompt = opts.prompt }
    on_choice("Deny")
  end
  local answer
  local co = coroutine.create(function()
    answer = review.ask(vim.fn.getcwd(), { type = 3, message = message, actions = { { title = "Allow once" }, { title = "Deny" } }, details = d }, 7)
  end)
  coroutine.resume(co)
  eq(1, #review.pending, "it waits, like every approval question")
  eq("bash outside the sandbox", review.label(review.pending[1]))
  review.open()
  vim.wait(1000, function()
    return answer ~= nil
  end, 10)
  vim.ui.select = select
  eq({ items = { "Allow once", "Deny" }, prompt = message }, got)
  eq({ title = "Deny" }, answer)
  eq("bash", review.label({ details = { toolName = "bash" } }), "a plain bash question keeps its label")
end)

test("extensions' statuses follow gopi's, in their keys' order, on one line, escaped", function()
  local c = require("gopi.chat").current()
  c.state.status = { model = "faux-1" }
  c.ext_status = { b = "50% done", a = "two\nlines" }
  eq("gopi · faux-1 · two lines · 50%% done", c:status())
  eq("gopi · faux-1 · two lines · 50% done", c:status_text())
  eq("gopi · faux-1 · two lines · 50%% done", require("gopi").status())
  c.ext_status = {}
end)

test("completion items: / from the commands, @ from files", function()
  local complete = require("gopi.complete")
  complete.commands = { { name = "review", description = "Review" }, { name = "refactor" }, { name = "skill:x" } }
  local items, start = complete.items("/ref")
  eq(
    { "/refactor" },
    vim.tbl_map(function(i)
      return i.word
    end, items)
  )
  -- The plugin's own slash commands come first, then gopi's.
  items = complete.items("/re")
  eq(
    { "/resume", "/rename", "/rewind", "/restart", "/review", "/refactor" },
    vim.tbl_map(function(i)
      return i.word
    end, items)
  )
  eq(0, start)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/src", "p")
  vim.fn.writefile({}, dir .. "/src/server.go")
  vim.fn.writefile({}, dir .. "/server_test.go")
  vim.cmd.cd(dir)
  local files, fstart = complete.items("see @serv")
  eq(
    { "@src/server.go", "@server_test.go" },
    vim.tbl_map(function(i)
      return i.word
    end, files)
  )
  eq(4, fstart)
  vim.fn.delete(dir, "rf")
end)

test("the nvim-cmp and blink.cmp sources offer the prompt's completions", function()
  local sources = require("gopi.cmp")
  local complete = require("gopi.complete")
  complete.commands = { { name = "review", description = "Review" } }
  local buf = vim.api.nvim_create_buf(false, true)
  require("gopi.chat").current().prompt = buf
  vim.api.nvim_set_current_buf(buf)
  local src = sources.cmp.new()
  eq(true, src:is_available(), "available in the prompt")
  eq({ "/", "@", "#" }, src:get_trigger_characters())
  local got
  src:complete({ context = { cursor_before_line = "/rev", cursor = { row = 2, col = 5 } } }, function(r)
    got = r
  end)
  eq("/review", got.items[1].label)
  eq("Review", got.items[1].detail)
  -- The edit replaces all that was typed from the "/" (bytes, 0-based).
  eq({ newText = "/review", range = { start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 4 } } }, got.items[1].textEdit)
  eq("utf-8", src:get_position_encoding_kind())
  local b = require("gopi.blink").new()
  eq(true, b:enabled())
  local bgot
  b:get_completions({ line = "/rev and more", cursor = { 1, 4 } }, function(r)
    bgot = r
  end)
  eq("/review", bgot.items[1].label)
  eq({ newText = "/review", range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 4 } } }, bgot.items[1].textEdit)
  vim.api.nvim_set_current_buf(vim.api.nvim_create_buf(false, true))
  eq(false, src:is_available(), "not elsewhere")
  -- Without nvim-cmp installed, registering is a no-op.
  eq(false, sources.register())
end)

test("widgets go above the prompt's text (or below it), the queue just above it, in view", function()
  local s = require("gopi.chat").current()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "first", "last" })
  vim.cmd("split")
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_win_set_height(0, 8)
  s.prompt = buf
  s.widgets = { todo = { lines = { "[ ] one", "[x] two" } }, hint = { lines = { "under it" }, placement = "belowEditor" } }
  s.state.queue = { steering = {}, followUp = { "later" } }
  s:show_queue()
  local got = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
    local lines = vim.tbl_map(function(vl)
      return vl[1][1]
    end, m[4].virt_lines or {})
    table.insert(got, { row = m[2], above = m[4].virt_lines_above or false, lines = lines })
  end
  eq({
    { row = 0, above = true, lines = { "[ ] one", "[x] two", "⏵ follow-up: later" } },
    { row = 1, above = false, lines = { "under it" } },
  }, got, "the virtual lines")
  -- Lines above the first one are seen only with the window's topfill.
  eq(3, vim.fn.winsaveview().topfill, "topfill")
  s.widgets, s.state.queue = {}, { steering = {}, followUp = {} }
  s:show_queue()
  eq({}, vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, {}), "cleared")
  vim.cmd("close")
end)

test("each chat owns its transcript, run, queue, status and attachments: two chats share none of them", function()
  local chat = require("gopi.chat")
  local a, b = chat.new(), chat.new()
  a:make_buffers()
  b:make_buffers()
  ok(a.buf ~= b.buf and a.prompt ~= b.prompt, "buffers of their own")
  local function user(text)
    return { type = "message_start", message = { role = "user", content = { { type = "text", text = text } } } }
  end
  a:on_events({ { type = "agent_start" }, user("to a"), { type = "queue_update", steering = {}, followUp = { "later" } } })
  b:on_events({ user("to b") })
  local function transcript(c)
    return table.concat(vim.api.nvim_buf_get_lines(c.buf, 0, -1, false), "\n")
  end
  eq("## You\n\nto a", transcript(a), "a's transcript")
  eq("## You\n\nto b", transcript(b), "b's transcript")
  eq(true, a:is_streaming(), "a runs")
  eq(false, b:is_streaming(), "b does not")
  eq({ "later" }, a.state.queue.followUp, "a's queue")
  eq({}, b.state.queue.followUp, "b's queue")
  ok(a:status():find(" · gopi$"), "a's status has the spinner: " .. a:status())
  eq("gopi", b:status(), "b's status")
  a:attach({ name = "shot.png", size = 3, mimeType = "image/png", data = "AAAA" })
  eq(1, #a.images, "a's attachment")
  eq(0, #b.images, "b has none")
  ok(#vim.api.nvim_buf_get_extmarks(a.prompt, -1, 0, -1, {}) > 0, "a's prompt shows its queue and attachment")
  eq({}, vim.api.nvim_buf_get_extmarks(b.prompt, -1, 0, -1, {}), "b's prompt shows nothing")
  a:stop()
  b:stop()
  for _, c in ipairs({ a, b }) do
    vim.cmd("silent bwipeout! " .. c.buf .. " " .. c.prompt)
  end
end)

--- The plugin's commands, as plugin/gopi.lua defines them.
local function commands()
  local out = {}
  for name in io.open(vim.fn.fnamemodify(here, ":h") .. "/plugin/gopi.lua"):read("*a"):gmatch('cmd%("(Gopi%w*)"') do
    table.insert(out, name)
  end
  return out
end

test("the lazy.nvim specs of the README and the help work as written: a name, every command there, no build", function()
  local root = vim.fn.fnamemodify(here, ":h")
  local readme = io.open(root .. "/README.md"):read("*a")
  local help = io.open(root .. "/doc/gopi.txt"):read("*a")
  local specs = {
    README = readme:match("```lua\n(%-%- lazy%.nvim[^\n]*\n{.-})\n```"),
    help = help:match(">lua\n(%s*{%s*dir = .-})\n<"),
  }
  for where, code in pairs(specs) do
    lib.ok(code, "a lazy.nvim spec in the " .. where)
    local spec = assert(load("return " .. code))()
    eq("gopi", spec.name, where .. ": the name")
    lib.ok(spec.dir:match("editors/nvim$"), where .. ": the plugin's directory")
    -- lazy.nvim makes stubs for the commands in cmd only: the rest would be
    -- E492 until one of those ran. lazy = false loads plugin/gopi.lua at start.
    if spec.lazy ~= false then
      for _, c in ipairs(commands()) do
        lib.ok(vim.tbl_contains(spec.cmd or {}, c), where .. ": " .. c .. " in cmd")
      end
    end
    -- lazy.nvim runs no build for a dir plugin: a build there would mislead.
    eq(nil, spec.build, where .. ": build")
  end
end)

test("doc/tags ships and is current (what :helptags makes of doc/gopi.txt)", function()
  local root = vim.fn.fnamemodify(here, ":h")
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile(vim.fn.readfile(root .. "/doc/gopi.txt"), dir .. "/gopi.txt")
  vim.cmd.helptags(vim.fn.fnameescape(dir))
  eq(
    vim.fn.readfile(dir .. "/tags"),
    vim.fn.filereadable(root .. "/doc/tags") == 1 and vim.fn.readfile(root .. "/doc/tags") or {},
    "doc/tags (run :helptags doc in editors/nvim)"
  )
  -- Every command has its tag.
  local tags = table.concat(vim.fn.readfile(dir .. "/tags"), "\n")
  for _, c in ipairs(commands()) do
    lib.ok(tags:find("\n?:" .. c .. "\t"), ":" .. c .. " has a help tag")
  end
  vim.fn.delete(dir, "rf")
end)

test("@file references carry the file's lines (a loaded buffer's first); the chat shows a chip", function()
  local context = require("gopi.context")
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.cmd.cd(dir)
  vim.fn.writefile({ "a", "```", "c" }, dir .. "/x.md")
  vim.fn.writefile({ "on disk" }, dir .. "/y.txt")
  vim.cmd.edit("y.txt")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "in the buffer", "two" })
  local out = context.expand("see @x.md, @y.txt#L2 and @nothing.txt or me@example.com")
  eq(
    table.concat({
      "see @x.md, @y.txt#L2 and @nothing.txt or me@example.com",
      "",
      '<file path="x.md">',
      "````markdown",
      "a",
      "```",
      "c",
      "````",
      "</file>",
      '<file path="y.txt" lines="2-2">',
      "```",
      "two",
      "```",
      "</file>",
    }, "\n"),
    out
  )
  eq("see @x.md, @y.txt#L2 and @nothing.txt or me@example.com\n[@x.md (3 lines)]\n[@y.txt#L2 (1 line)]", context.compact(out))
  eq("no refs", context.expand("no refs"))
  vim.cmd("bwipe!")
  vim.fn.delete(dir, "rf")
end)

test("completion items: # from the mentions, at a word's start only", function()
  local complete = require("gopi.complete")
  local items, start = complete.items("fix #di")
  eq(
    { "#diagnostics", "#diagnostics:all", "#diff" },
    vim.tbl_map(function(i)
      return i.word
    end, items)
  )
  eq(4, start)
  items = complete.items("#")
  eq(
    { "#buffer", "#selection", "#diagnostics", "#diagnostics:all", "#quickfix", "#diff" },
    vim.tbl_map(function(i)
      return i.word
    end, items)
  )
  eq({}, (complete.items("issue#bu")), "not inside a word")
  local got = require("gopi.cmp").items("see #q", 0)
  eq({ newText = "#quickfix", range = { start = { line = 0, character = 4 }, ["end"] = { line = 0, character = 6 } } }, got[1].textEdit)
end)

--- A scratch directory as the working directory, with files.
local function workdir(files)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.cmd.cd(dir)
  for name, lines in pairs(files or {}) do
    vim.fn.writefile(lines, dir .. "/" .. name)
  end
  return dir
end

test("#buffer: the last file buffer's text, unsaved changes included, not gopi's prompt; a chip", function()
  local context = require("gopi.context")
  local dir = workdir({ ["main.go"] = { "package main", "", "func main() {}" } })
  vim.cmd("runtime plugin/gopi.lua")
  vim.cmd.edit("main.go")
  vim.api.nvim_buf_set_lines(0, 2, 3, false, { "func main() { unsaved() }" })
  -- Into a gopi-like scratch buffer, as the prompt window is.
  local p = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_set_current_buf(p)
  local out = context.expand("look at #buffer, please")
  eq(
    table.concat({
      "look at #buffer, please",
      "",
      '<buffer path="main.go" modified="true">',
      "```go",
      "package main",
      "",
      "func main() { unsaved() }",
      "```",
      "</buffer>",
    }, "\n"),
    out
  )
  eq("look at #buffer, please\n[#buffer main.go (3 lines, unsaved)]", context.compact(out))
  eq("#buffers and #nothing stay", context.expand("#buffers and #nothing stay"))
  vim.cmd("bwipe! " .. p)
  vim.cmd("bwipe!")
  vim.fn.delete(dir, "rf")
end)

test("#selection: the last visual selection's text (charwise too) and its range; a chip", function()
  local context = require("gopi.context")
  local dir = workdir({ ["a.txt"] = { "one", "two three", "four", "five" } })
  vim.cmd.edit("a.txt")
  vim.cmd("normal! 2GVj\27")
  local out = context.expand("#selection: why?")
  eq(
    table.concat({
      "#selection: why?",
      "",
      '<selection path="a.txt" lines="2-3">',
      "```text",
      "two three",
      "four",
      "```",
      "</selection>",
    }, "\n"),
    out
  )
  eq("#selection: why?\n[#selection a.txt#L2-3 (2 lines)]", context.compact(out))
  -- Charwise: the selected text only.
  vim.cmd("normal! 2G0wv$h\27")
  out = context.expand("#selection")
  ok(out:find('<selection path="a.txt" lines="2-2">\n```text\nthree\n```', 1, true), out)
  eq("#selection\n[#selection a.txt#L2 (1 line)]", context.compact(out))
  vim.cmd("bwipe!")
  vim.fn.delete(dir, "rf")
end)

test("#diagnostics: the buffer's (or, :all, every buffer's) with place, severity and source; a chip", function()
  local context = require("gopi.context")
  local dir = workdir({ ["a.go"] = { "x", "y" }, ["b.go"] = { "z" } })
  local ns = vim.api.nvim_create_namespace("gopi-test")
  vim.cmd.edit("b.go")
  vim.diagnostic.set(ns, 0, { { lnum = 0, col = 0, severity = vim.diagnostic.severity.WARN, message = "in b" } })
  vim.cmd.edit("a.go")
  vim.diagnostic.set(ns, 0, {
    { lnum = 1, col = 2, severity = vim.diagnostic.severity.ERROR, message = "undefined: y", source = "gopls", code = "UndeclaredName" },
    { lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = "two\nlines" },
  })
  local out = context.expand("fix #diagnostics")
  eq(
    table.concat({
      "fix #diagnostics",
      "",
      '<diagnostics path="a.go" count="2">',
      "```",
      "a.go:1:1: HINT: two",
      "  lines",
      "a.go:2:3: ERROR: undefined: y [gopls UndeclaredName]",
      "```",
      "</diagnostics>",
    }, "\n"),
    out
  )
  eq("fix #diagnostics\n[#diagnostics 2]", context.compact(out))
  out = context.expand("fix #diagnostics:all")
  ok(out:find("a.go:2:3: ERROR: undefined: y [gopls UndeclaredName]\nb.go:1:1: WARN: in b\n", 1, true), out)
  eq("fix #diagnostics:all\n[#diagnostics:all 3]", context.compact(out))
  vim.diagnostic.reset(ns)
  vim.cmd("silent %bwipe!")
  vim.fn.delete(dir, "rf")
end)

test("#quickfix: the list's entries with place and text, and its title; a chip", function()
  local context = require("gopi.context")
  local dir = workdir({ ["a.go"] = { "x", "y" } })
  vim.fn.setqflist(
    {},
    " ",
    { title = 'grep "x"', items = {
      { filename = "a.go", lnum = 2, col = 1, text = "y is here", type = "E" },
      { text = "a note" },
    } }
  )
  local out = context.expand("see #quickfix.")
  eq(
    table.concat({
      "see #quickfix.",
      "",
      '<quickfix title="grep &quot;x&quot;" count="2">',
      "```",
      "a.go:2:1: E: y is here",
      "a note",
      "```",
      "</quickfix>",
    }, "\n"),
    out
  )
  eq("see #quickfix.\n[#quickfix 2]", context.compact(out))
  vim.fn.setqflist({}, "r")
  vim.cmd("silent %bwipe!")
  vim.fn.delete(dir, "rf")
end)

test("#diff: git diff HEAD in the background, cut when too long; a chip", function()
  local context = require("gopi.context")
  local dir = workdir({ ["a.txt"] = { "old" } })
  local function git(...)
    vim.system({ "git", "-c", "user.name=t", "-c", "user.email=t@t", ... }, { cwd = dir }):wait()
  end
  git("init", "-q")
  git("add", "a.txt")
  git("commit", "-q", "-m", "one")
  vim.fn.writefile({ "new" }, dir .. "/a.txt")
  -- The callback comes later, from the main loop: nothing waits for git.
  local got
  eq(
    nil,
    context.expand("what changed? #diff", function(t)
      got = t
    end)
  )
  eq(nil, got, "not yet")
  vim.wait(5000, function()
    return got ~= nil
  end)
  ok(got and got:find('<diff files="1">\n```diff\ndiff --git a/a.txt b/a.txt\n', 1, true) and vim.endswith(got, "\n-old\n+new\n```\n</diff>"), got)
  eq("what changed? #diff\n[#diff 1 file (7 lines)]", context.compact(got))
  -- Over the limit: cut at a line's end, and said so.
  local max = context.max_diff_bytes
  context.max_diff_bytes = 100
  local long = {}
  for i = 1, 200 do
    long[i] = "line " .. i
  end
  vim.fn.writefile(long, dir .. "/a.txt")
  local cut = context.expand("#diff")
  context.max_diff_bytes = max
  ok(cut:find('<diff files="1" truncated="true">', 1, true) and cut:find("[the diff was cut here: over 0 KiB]", 1, true), cut)
  ok(#cut < 400, "short: " .. #cut)
  ok(context.compact(cut):find("^#diff\n%[#diff 1 file %(%d+ lines, cut%)%]$"), context.compact(cut))
  -- No changes; and outside a repository, a warning and no block.
  git("checkout", "-q", "a.txt")
  eq("#diff\n[#diff no changes]", context.compact(context.expand("#diff")))
  local notes = {}
  local notify = vim.notify
  vim.notify = function(m)
    table.insert(notes, m)
  end
  vim.cmd.cd(vim.fn.tempname():match("^(.*)/"))
  eq("#diff", context.expand("#diff"))
  vim.notify = notify
  ok(notes[1] and notes[1]:find("^gopi: #diff: "), vim.inspect(notes))
  vim.fn.delete(dir, "rf")
end)

test("messages go to gopi in the order sent, one waiting on git diff or not", function()
  local dir = workdir({ ["a.txt"] = { "old" } })
  vim.system({ "git", "init", "-q" }, { cwd = dir }):wait()
  local c = require("gopi.chat").current()
  local client = c.client
  local sent = {}
  -- What the plugin's send hands the chat to send as it is.
  c.send = function(_, text)
    table.insert(sent, text)
  end
  c.client = {
    running = function()
      return true
    end,
  }
  package.loaded.gopi = nil
  local g = require("gopi")
  g.send("first #diff")
  g.send("second")
  vim.wait(5000, function()
    return #sent == 2
  end)
  c.send, c.client = nil, client
  package.loaded.gopi = nil
  eq(2, #sent)
  ok(vim.startswith(sent[1], "first #diff\n\n<diff"), sent[1])
  eq("second", sent[2])
  vim.fn.delete(dir, "rf")
end)

test("built-in slash commands run the plugin's functions; other / names do not", function()
  local gopi = require("gopi")
  local slash = require("gopi.slash")
  local called = {}
  local saved = { compact = gopi.compact, model = gopi.model, new_session = gopi.new_session }
  gopi.compact = function(a)
    table.insert(called, "compact:" .. a)
  end
  gopi.model = function(a)
    table.insert(called, "model:" .. a)
  end
  gopi.new_session = function()
    table.insert(called, "new")
  end
  eq(true, slash.run("/compact keep the API"))
  eq(true, slash.run("  /model faux/faux-1 "))
  eq(true, slash.run("/new"))
  eq(false, slash.run("/review"), "a template goes to gopi")
  eq(false, slash.run("/new\nand more"), "several lines go to gopi")
  eq(false, slash.run("explain /new"))
  eq({ "compact:keep the API", "model:faux/faux-1", "new" }, called)
  for k, v in pairs(saved) do
    gopi[k] = v
  end
end)

test(":GopiMcp's lines: servers that need sign-in, then failed ones, first with their error on one line, tool counts, read-only tools marked", function()
  local mcp = require("gopi.mcp")
  local servers = {
    {
      name = "fs",
      state = "connected",
      exposure = "direct",
      resources = true,
      tools = {
        { name = "mcp__fs__read", remoteName = "read", exposure = "direct", readOnly = true },
      },
    },
    { name = "off", state = "disabled", exposure = "codemode", tools = {} },
    { name = "docs", state = "failed", exposure = "deferred", error = "connecting: refused\n  stderr: boom\n", tools = {} },
    { name = "sentry", state = "needs-auth", exposure = "codemode", error = "needs sign-in: run `gopi mcp login sentry`", tools = {} },
  }
  local lines = vim.tbl_map(mcp.format_server, mcp.ordered(servers))
  eq({
    "sentry           needs sign-in · codemode — needs sign-in: run `gopi mcp login sentry`",
    "docs             failed · deferred — connecting: refused · stderr: boom",
    "fs               connected · direct · 1 tool · resources",
    "off              disabled · codemode",
  }, lines)
  eq("read                 direct · read-only  (mcp__fs__read)", mcp.format_tool(servers[1].tools[1]))
  eq("x                    hidden  (mcp__s__x)", mcp.format_tool({ name = "mcp__s__x", remoteName = "x", exposure = "hidden", readOnly = false }))
end)

test(":GopiMcp's float follows mcp_server_state, the cursor on its server; a failure is warned of once until the server connects", function()
  local mcp = require("gopi.mcp")
  mcp.reset()
  local a = { name = "a", state = "connected", exposure = "direct", tools = {} }
  local b = { name = "b", state = "connecting", exposure = "deferred", tools = {} }
  local win = mcp.show({ a, b })
  eq(mcp.view.win, win)
  eq({ "a                connected · direct · 0 tools", "b                connecting · deferred" }, vim.api.nvim_buf_get_lines(mcp.view.buf, 0, -1, false))
  vim.api.nvim_win_set_cursor(win, { 2, 0 })
  -- b fails: it comes first, the cursor goes with it; one warning, on its error's first line.
  local failed = { name = "b", state = "failed", exposure = "deferred", error = "connecting: refused\nstderr:\nboom", tools = {} }
  eq("MCP server b failed: connecting: refused", mcp.changed(failed))
  eq(
    { "b                failed · deferred — connecting: refused · stderr: · boom", "a                connected · direct · 0 tools" },
    vim.api.nvim_buf_get_lines(mcp.view.buf, 0, -1, false)
  )
  eq({ 1, 0 }, vim.api.nvim_win_get_cursor(win))
  local marks = vim.api.nvim_buf_get_extmarks(mcp.view.buf, vim.api.nvim_create_namespace("gopi.mcp"), 0, -1, { details = true })
  eq(1, #marks)
  eq("DiagnosticError", marks[1][4].hl_group)
  eq(nil, mcp.changed(failed), "once")
  eq(nil, mcp.changed(vim.tbl_extend("force", failed, { state = "connecting" })))
  eq(nil, mcp.changed(failed), "still once: it has not connected since")
  eq(nil, mcp.changed({ name = "b", state = "connected", exposure = "deferred", tools = {} }))
  eq("MCP server b failed: connecting: refused", mcp.changed(failed), "again after it connected")
  mcp.reset()
  eq("MCP server b failed: connecting: refused", mcp.changed(failed), "again after gopi restarted")
  mcp.close()
  eq(nil, mcp.view)
  eq(false, vim.api.nvim_win_is_valid(win))
  eq(nil, mcp.changed(a), "no float, no warning: nothing happens")
end)

test("a turn's assistant messages share one heading, their parts a blank line apart; a finished tool card is folded once", function()
  local render = require("gopi.render")
  local buf = vim.api.nvim_create_buf(false, true)
  vim.cmd("split")
  vim.api.nvim_win_set_buf(0, buf)
  local r = render.new(buf)
  local st = { streaming = false, changed = {} }
  local result = { content = { { type = "text", text = "a\nb" } } }
  local evs = {
    { type = "agent_start" },
    { type = "message_start", message = { role = "user", content = "go" } },
    { type = "message_start", message = { role = "assistant", content = {} } },
    { type = "message_end", message = { role = "assistant", stopReason = "toolUse" } },
    { type = "tool_execution_start", toolCallId = "c1", toolName = "bash", args = { command = "ls" } },
    { type = "tool_execution_end", toolCallId = "c1", isError = false, result = result },
    { type = "message_start", message = { role = "toolResult", toolCallId = "c1", content = result.content } },
    { type = "message_end", message = { role = "toolResult", toolCallId = "c1", content = result.content } },
    { type = "message_start", message = { role = "assistant", content = {} } },
    { type = "message_update", assistantMessageEvent = { type = "text_delta", contentIndex = 0, delta = "done" } },
    { type = "message_end", message = { role = "assistant", stopReason = "stop" } },
    { type = "agent_settled" },
  }
  for _, ev in ipairs(evs) do
    r:event(ev, st)
  end
  local function check(what)
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local heads, card = 0, nil
    for i, l in ipairs(lines) do
      if l == "## gopi" then
        heads = heads + 1
      elseif l:find("✓ bash: ls", 1, true) then
        card = i
      end
    end
    eq(1, heads, what .. ": one heading for the turn:\n" .. table.concat(lines, "\n"))
    eq({ "## gopi", "" }, vim.list_slice(lines, card - 2, card - 1), what .. ": the card under the heading")
    eq({ "", "done" }, vim.list_slice(lines, #lines - 1, #lines), what .. ": the text after the card, apart from it")
    eq(1, vim.fn.foldlevel(card), what .. ": the card's fold level")
    eq(card, vim.fn.foldclosed(card), what .. ": the card is folded")
    vim.cmd(card .. "foldopen")
    eq(-1, vim.fn.foldclosed(card), what .. ": one zo opens it")
  end
  check("streamed")
  -- The same turn from the session's history, folded again.
  r:clear()
  r:message({ role = "user", content = "go" })
  r:message({ role = "assistant", content = { { type = "toolCall", id = "c1", name = "bash", arguments = { command = "ls" } } } })
  r:message({ role = "toolResult", toolCallId = "c1", content = result.content })
  r:message({ role = "assistant", content = { { type = "text", text = "done" } } })
  r:refold()
  check("from history")
  -- A new prompt is headed again.
  r:message({ role = "user", content = "more" })
  r:message({ role = "assistant", content = { { type = "text", text = "ok" } } })
  local n = 0
  for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    n = n + (l == "## gopi" and 1 or 0)
  end
  eq(2, n, "a heading per turn")
  vim.cmd("close")
end)

test("images: known by their first bytes and @path's extension; chips name them with their size", function()
  local image = require("gopi.image")
  eq("image/png", image.sniff("\137PNG\r\n\26\n...."))
  eq("image/jpeg", image.sniff("\255\216\255\224"))
  eq("image/gif", image.sniff("GIF89a.."))
  eq("image/webp", image.sniff("RIFF\0\0\0\0WEBPVP8 "))
  eq(nil, image.sniff("hello"))
  eq({ "a.png", "b/c.JPEG" }, image.refs("see @a.png, and @b/c.JPEG. but not @main.go or a@x.png or @a.png again"))
  eq("512 B", image.size_text(512))
  eq("120 KB", image.size_text(120 * 1024))
  eq("1.5 MB", image.size_text(1.5 * 1024 * 1024))
  local img = assert(image.from_bytes("GIF89a" .. string.rep("x", 2042), "anim.gif"))
  eq({ "anim.gif", 2048, "image/gif" }, { img.name, img.size, img.mimeType })
  eq("[image: anim.gif 2 KB]", image.chip(img))
  -- A message's block: the name it was sent with, else its kind.
  eq("[image: anim.gif 2 KB]", image.chip({ type = "image", mimeType = "image/gif", data = img.data }))
  eq("[image: PNG 3 B]", require("gopi.render").content_text({ { type = "image", mimeType = "image/png", data = "YWJj" } }))
  local none, why = image.from_bytes("text", "notes.png")
  eq(nil, none)
  eq("notes.png is not an image gopi can send (png, jpeg, gif or webp)", why)
end)

test('the help lists the keys as configured: a remapped one as remapped, one set to "" not at all', function()
  local config = require("gopi.config")
  config.setup({ keys = { accept = "<leader>a", reject = "", send = { n = "<CR>", i = "<C-g>" } } })
  local text = table.concat(require("gopi.help").lines("review"), "\n")
  lib.ok(text:find("In a review:\n  <leader>a", 1, true), text)
  lib.ok(not text:find("reject it", 1, true), text)
  lib.ok(text:find("<CR> (normal), <C-g> (insert)", 1, true), text)
  -- The inline review's keys, by name, in its own help and in the others.
  config.setup({ keys = { next_hunk = "<leader>n" } })
  text = table.concat(require("gopi.help").lines("inline"), "\n")
  lib.ok(text:find("In an inline review (in the file's buffer):\n  ga", 1, true), text)
  lib.ok(text:find("<leader>n  the next hunk", 1, true), text)
  lib.ok(not text:find("Other keys:", 1, true), "every key has its description: " .. text)
  config.setup({})
end)

test("the rewind's list and preview: local times, the messages by entry, file counts, a binary file named", function()
  local rewind = require("gopi.rewind")
  -- gopi's times are UTC; shown in local time, the date only when not today.
  local now = os.time({ year = 2026, month = 3, day = 9, hour = 12, min = 0, sec = 0 })
  local utc = os.date("!%Y-%m-%dT%H:%M:%S.5Z", now - 90)
  eq(os.date("%H:%M:%S", now - 90), rewind.when(utc, now))
  eq(os.date("%Y-%m-%d %H:%M", now - 3 * 86400), rewind.when(os.date("!%Y-%m-%dT%H:%M:%SZ", now - 3 * 86400), now))
  eq("soon", rewind.when("soon", now))
  local texts = rewind.user_texts({
    { type = "model_change", id = "m" },
    { type = "message", id = "u1", message = { role = "user", content = "fix it\nplease" } },
    {
      type = "message",
      id = "u2",
      message = { role = "user", content = { { type = "text", text = "look" }, { type = "image" }, { type = "text", text = " here" } } },
    },
    { type = "message", id = "a1", message = { role = "assistant", content = { { type = "text", text = "done" } } } },
  })
  eq({ u1 = "fix it\nplease", u2 = "look here" }, texts)
  local cp = { id = "c1", entryId = "u1", createdAt = utc, trigger = "prompt" }
  eq(os.date("%H:%M:%S", now - 90) .. "  prompt   fix it  (1 file)", rewind.label(cp, texts.u1, 1, now))
  eq(os.date("%H:%M:%S", now - 90) .. "  prompt   fix it  (no changes)", rewind.label(cp, texts.u1, 0, now))
  local manual = { id = "c2", entryId = "a1", createdAt = utc, trigger = "restore", label = "before restoring c1" }
  eq(os.date("%H:%M:%S", now - 90) .. "  restore  before restoring c1", rewind.label(manual, nil, nil, now))
  local lines = rewind.preview_lines(cp, texts.u1, {
    { path = "a.go", status = "modified", diff = "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n" },
    { path = "logo.png", status = "added", binary = true },
  })
  local text = table.concat(lines, "\n")
  lib.ok(
    text:find("Restoring the code undoes what changed since in 2 files:\n  modified  a.go\n  added     logo.png  (restoring removes it, binary)\n", 1, true),
    text
  )
  lib.ok(text:find("\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n\nBinary file logo.png added", 1, true), text)
  eq("Binary file logo.png added", lines[#lines])
end)

lib.finish()

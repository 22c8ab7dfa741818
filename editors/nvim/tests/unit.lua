-- Unit tests of the plugin's pure parts: edit replay for review diffs, the
-- renderer on events and messages, the status text and completion items.
-- Ends with "N passed, N failed".
--
--   nvim -l tests/unit.lua
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
vim.opt.rtp:prepend(vim.fn.fnamemodify(here, ":h"))
local lib = dofile(here .. "/lib.lua")
local test, eq = lib.run, lib.eq

test("apply_edits replays edit's replacements, and gives up on a miss", function()
  local review = require("gopi.review")
  eq("a X c X", review.apply_edits("a b c b", { { oldText = "b", newText = "X" }, { oldText = "b", newText = "X" } }))
  eq(nil, review.apply_edits("abc", { { oldText = "z", newText = "y" } }))
  eq(nil, review.apply_edits("abc", { { oldText = "", newText = "y" } }))
  eq("a.c", review.apply_edits("a%c", { { oldText = "%", newText = "." } }), "patterns are plain text")
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
      "## You", "", "hi", "there", "", "## gopi", "", "Hello, world", "second", "",
      "✓ write: a.txt", "    content: x", "    path: a.txt", "    ---", "    wrote 1 byte", "",
      "✗ bash: ls", "    command: ls", "    ---", "    no", "    way",
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
  chat.session.state.status = { model = "faux-1", thinking = "high", percent = 75.4, cost = 0.0123 }
  eq("gopi · faux-1 · think high · %#WarningMsg#75%%%* · $0.012", chat.status())
  eq("gopi · faux-1 · think high · 75% · $0.012", chat.status_text())
  -- The component for statuslines: no highlights, the percent sign doubled.
  eq("gopi · faux-1 · think high · 75%% · $0.012", require("gopi").status())
  chat.session.state.status = { percent = 93 }
  eq("gopi · %#ErrorMsg#93%%%*", chat.status())
  -- Estimated (after a compaction): marked with a tilde.
  chat.session.state.status = { percent = 12.2, estimated = true }
  eq("gopi · ~12%%", chat.status())
  eq("gopi · ~12%", chat.status_text())
  -- The estimate: four characters (UTF-16 code units) a token, rounded up.
  eq(5, chat.estimate({
    { role = "compactionSummary", summary = "abcd" },
    { role = "user", content = "é€" },
    { role = "assistant", content = { { type = "toolCall", name = "ls", arguments = { a = 1 } } } },
    { role = "bashExecution", command = "ls", output = "x" },
  }), "(4 + 2 + 2 + 7 + 3 = 18 characters)")
end)

test("extensions' statuses follow gopi's, in their keys' order, on one line, escaped", function()
  local chat = require("gopi.chat")
  chat.session.state.status = { model = "faux-1" }
  chat.session.ext_status = { b = "50% done", a = "two\nlines" }
  eq("gopi · faux-1 · two lines · 50%% done", chat.status())
  eq("gopi · faux-1 · two lines · 50% done", chat.status_text())
  eq("gopi · faux-1 · two lines · 50%% done", require("gopi").status())
  chat.session.ext_status = {}
end)

test("completion items: / from the commands, @ from files", function()
  local complete = require("gopi.complete")
  complete.commands = { { name = "review", description = "Review" }, { name = "refactor" }, { name = "skill:x" } }
  local items, start = complete.items("/ref")
  eq({ "/refactor" }, vim.tbl_map(function(i) return i.word end, items))
  -- The plugin's own slash commands come first, then gopi's.
  items = complete.items("/re")
  eq({ "/resume", "/rename", "/restart", "/review", "/refactor" }, vim.tbl_map(function(i) return i.word end, items))
  eq(0, start)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/src", "p")
  vim.fn.writefile({}, dir .. "/src/server.go")
  vim.fn.writefile({}, dir .. "/server_test.go")
  vim.cmd.cd(dir)
  local files, fstart = complete.items("see @serv")
  eq({ "@src/server.go", "@server_test.go" }, vim.tbl_map(function(i) return i.word end, files))
  eq(4, fstart)
  vim.fn.delete(dir, "rf")
end)

test("the nvim-cmp and blink.cmp sources offer the prompt's completions", function()
  local sources = require("gopi.cmp")
  local complete = require("gopi.complete")
  complete.commands = { { name = "review", description = "Review" } }
  local chat = require("gopi.chat")
  local buf = vim.api.nvim_create_buf(false, true)
  chat.session.prompt = buf
  vim.api.nvim_set_current_buf(buf)
  local src = sources.cmp.new()
  eq(true, src:is_available(), "available in the prompt")
  eq({ "/", "@" }, src:get_trigger_characters())
  local got
  src:complete({ context = { cursor_before_line = "/rev", cursor = { row = 2, col = 5 } } }, function(r) got = r end)
  eq("/review", got.items[1].label)
  eq("Review", got.items[1].detail)
  -- The edit replaces all that was typed from the "/" (bytes, 0-based).
  eq({ newText = "/review", range = { start = { line = 1, character = 0 }, ["end"] = { line = 1, character = 4 } } }, got.items[1].textEdit)
  eq("utf-8", src:get_position_encoding_kind())
  local b = require("gopi.blink").new()
  eq(true, b:enabled())
  local bgot
  b:get_completions({ line = "/rev and more", cursor = { 1, 4 } }, function(r) bgot = r end)
  eq("/review", bgot.items[1].label)
  eq({ newText = "/review", range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 4 } } }, bgot.items[1].textEdit)
  vim.api.nvim_set_current_buf(vim.api.nvim_create_buf(false, true))
  eq(false, src:is_available(), "not elsewhere")
  -- Without nvim-cmp installed, registering is a no-op.
  eq(false, sources.register())
end)

test("widgets go above the prompt's text (or below it), the queue just above it, in view", function()
  local chat = require("gopi.chat")
  local s = chat.session
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "first", "last" })
  vim.cmd("split")
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_win_set_height(0, 8)
  s.prompt = buf
  s.widgets = { todo = { lines = { "[ ] one", "[x] two" } }, hint = { lines = { "under it" }, placement = "belowEditor" } }
  s.state.queue = { steering = {}, followUp = { "later" } }
  chat.show_queue()
  local got = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
    local lines = vim.tbl_map(function(vl) return vl[1][1] end, m[4].virt_lines or {})
    table.insert(got, { row = m[2], above = m[4].virt_lines_above or false, lines = lines })
  end
  eq({
    { row = 0, above = true, lines = { "[ ] one", "[x] two", "⏵ follow-up: later" } },
    { row = 1, above = false, lines = { "under it" } },
  }, got, "the virtual lines")
  -- Lines above the first one are seen only with the window's topfill.
  eq(3, vim.fn.winsaveview().topfill, "topfill")
  s.widgets, s.state.queue = {}, { steering = {}, followUp = {} }
  chat.show_queue()
  eq({}, vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, {}), "cleared")
  vim.cmd("close")
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
  eq(vim.fn.readfile(dir .. "/tags"), vim.fn.filereadable(root .. "/doc/tags") == 1 and vim.fn.readfile(root .. "/doc/tags") or {}, "doc/tags (run :helptags doc in editors/nvim)")
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
  eq(table.concat({
    "see @x.md, @y.txt#L2 and @nothing.txt or me@example.com",
    "",
    '<file path="x.md">',
    "````markdown", "a", "```", "c", "````",
    "</file>",
    '<file path="y.txt" lines="2-2">',
    "```", "two", "```",
    "</file>",
  }, "\n"), out)
  eq("see @x.md, @y.txt#L2 and @nothing.txt or me@example.com\n[@x.md (3 lines)]\n[@y.txt#L2 (1 line)]", context.compact(out))
  eq("no refs", context.expand("no refs"))
  vim.cmd("bwipe!")
  vim.fn.delete(dir, "rf")
end)

test("built-in slash commands run the plugin's functions; other / names do not", function()
  local gopi = require("gopi")
  local slash = require("gopi.slash")
  local called = {}
  local saved = { compact = gopi.compact, model = gopi.model, new_session = gopi.new_session }
  gopi.compact = function(a) table.insert(called, "compact:" .. a) end
  gopi.model = function(a) table.insert(called, "model:" .. a) end
  gopi.new_session = function() table.insert(called, "new") end
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

test("the help lists the keys as configured: a remapped one as remapped, one set to \"\" not at all", function()
  local config = require("gopi.config")
  config.setup({ keys = { accept = "<leader>a", reject = "", send = { n = "<CR>", i = "<C-g>" } } })
  local text = table.concat(require("gopi.help").lines("review"), "\n")
  lib.ok(text:find("In a review:\n  <leader>a", 1, true), text)
  lib.ok(not text:find("reject it", 1, true), text)
  lib.ok(text:find("<CR> (normal), <C-g> (insert)", 1, true), text)
  config.setup({})
end)

lib.finish()

-- End-to-end tests of the plugin: each test starts a child Neovim
-- (--embed, driven over its RPC API) with the plugin on its runtimepath,
-- against the real gopi binary on the offline faux model, in a fresh
-- working and agent directory. The runner ends with "N passed, N failed"
-- and exits 1 on any failure.
--
--   GOPI_BIN=/path/to/gopi nvim -l tests/e2e.lua [name-filter]
local uv = vim.uv or vim.loop
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin = vim.fn.fnamemodify(here, ":h")
local gopi = vim.env.GOPI_BIN or vim.fn.fnamemodify(plugin .. "/../../bin/gopi", ":p")
local nvim = vim.env.GOPI_TEST_NVIM or vim.v.progpath
local filter = arg and arg[1] or nil
assert(vim.fn.executable(gopi) == 1, "gopi binary not found at " .. gopi .. " (make build, or set GOPI_BIN)")

local WAIT = 20000
local lib = dofile(here .. "/lib.lua")
local eq, ok = lib.eq, lib.ok

local function tmpdir()
  local d = vim.fn.tempname()
  vim.fn.mkdir(d .. "/work", "p")
  vim.fn.mkdir(d .. "/agent", "p")
  return d
end

--- A child Neovim with the plugin set up; t.lua(code, ...) runs Lua in it.
local function child(opts)
  opts = opts or {}
  local root = tmpdir()
  local env = {
    PI_CODING_AGENT_DIR = root .. "/agent",
    ANTHROPIC_API_KEY = "",
    OPENAI_API_KEY = "",
    GEMINI_API_KEY = "",
    HOME = root,
  }
  local chan = vim.fn.jobstart({ nvim, "--embed", "--headless", "--clean", "-n" }, { rpc = true, cwd = root .. "/work", env = env })
  assert(chan > 0, "could not start " .. nvim)
  local t = { chan = chan, root = root, work = root .. "/work" }
  function t.lua(code, ...)
    return vim.rpcrequest(chan, "nvim_exec_lua", code, { ... })
  end
  function t.cmd(c)
    return vim.rpcrequest(chan, "nvim_command", c)
  end
  function t.input(keys)
    return vim.rpcrequest(chan, "nvim_input", keys)
  end
  --- Waits until the Lua expression code (returning a boolean) holds in the child.
  function t.wait(what, code, ...)
    local args = { ... }
    local ok = vim.wait(WAIT, function()
      local good, res = pcall(t.lua, "return (function(...) " .. code .. " end)(...)", unpack(args))
      return good and res == true
    end, 20)
    if not ok then
      error("timed out waiting for " .. what .. "\n--- chat:\n" .. table.concat(t.chat(), "\n"), 2)
    end
  end
  --- Waits until the chat holds text.
  function t.wait_chat(what, text)
    t.wait(what, "return table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').session.buf, 0, -1, false), '\\n'):find((...), 1, true) ~= nil", text)
  end
  function t.chat()
    local ok, lines = pcall(t.lua, [[
      local s = require("gopi.chat").session
      if not s.buf then return {} end
      return vim.api.nvim_buf_get_lines(s.buf, 0, -1, false)
    ]])
    return ok and lines or {}
  end
  function t.chat_has(text)
    return table.concat(t.chat(), "\n"):find(text, 1, true) ~= nil
  end
  t.lua(
    [[
    local plugin, cfg = ...
    vim.opt.rtp:prepend(plugin)
    vim.cmd("runtime plugin/gopi.lua")
    require("gopi").setup(cfg)
    -- Dialogs are answered by the test: _G.answer(items, prompt) picks.
    _G.asked = {}
    vim.ui.select = function(items, o, cb)
      table.insert(_G.asked, o.prompt or "")
      local pick = _G.answer and _G.answer(items, o.prompt) or nil
      vim.schedule(function() cb(pick) end)
    end
  ]],
    plugin,
    vim.tbl_extend("force", { cmd = gopi, provider = "faux", model = opts.model or "faux-fast", approval = opts.approval or "writes" }, opts.setup or {})
  )
  function t.close()
    pcall(t.lua, "require('gopi.chat').stop()")
    pcall(vim.fn.jobstop, chan)
    vim.fn.delete(root, "rf")
  end
  return t
end

local function test(name, fn, opts)
  if filter and not name:find(filter, 1, true) then
    return
  end
  local t = child(opts)
  lib.run(name, fn, t)
  t.close()
end

local function prompt(t, text, keys)
  t.lua("local p = require('gopi.chat').session.prompt; vim.api.nvim_buf_set_lines(p, 0, -1, false, vim.split(..., '\\n'))", text)
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').session.prompt))")
  t.input("<Esc>" .. (keys or "<CR>"))
end

local settled = "return require('gopi.chat').session.state.streaming == false and #require('gopi.chat').session.r.cards >= 0"

test(":Gopi opens the chat and a prompt window; a reply streams into it", function(t)
  t.cmd("Gopi")
  eq(3, t.lua("return #vim.api.nvim_tabpage_list_wins(0)"), "windows: the file, the chat, the prompt")
  t.wait("gopi started", "return require('gopi.chat').session.client ~= nil and require('gopi.chat').session.client.ready == true")
  prompt(t, "stream: 60")
  t.wait_chat("the streamed reply", "58 59 60")
  local chat = table.concat(t.chat(), "\n")
  ok(chat:find("## You\n\nstream: 60", 1, true), chat)
  ok(chat:find("## gopi\n\n1 2 3 4", 1, true), chat)
  eq("markdown", t.lua("return vim.bo[require('gopi.chat').session.buf].filetype"), "filetype")
  t.wait("settled", "return require('gopi.chat').session.state.streaming == false")
  ok(t.lua("return require('gopi').status()"):find("faux%-fast"), "status names the model: " .. t.lua("return require('gopi').status()"))
  -- :Gopi again closes the chat windows.
  t.cmd("Gopi")
  eq(1, t.lua("return #vim.api.nvim_tabpage_list_wins(0)"), "windows after the toggle")
end)

test("a tool block shows its arguments and result, folded when it succeeded", function(t)
  t.lua([[
    local chat = require("gopi.chat")
    local redraw = chat.redraw_bars
    chat.redraw_bars = function()
      local p = chat.session.state.progress
      if p and p:find("bash: echo hello from bash", 1, true) then _G.progress_seen = true end
      return redraw()
    end
  ]])
  t.cmd("Gopi")
  prompt(t, "bash: echo hello from bash")
  t.wait("the tool result", "for _, l in ipairs(vim.api.nvim_buf_get_lines(require('gopi.chat').session.buf, 0, -1, false)) do if l:find('✓ bash: echo hello from bash', 1, true) then return true end end return false")
  t.wait_chat("the reply after it", "Tool said")
  local chat = t.chat()
  local head
  for i, l in ipairs(chat) do
    if l:find("✓ bash: echo hello from bash", 1, true) then
      head = i
    end
  end
  ok(table.concat(chat, "\n"):find("    command: echo hello from bash", 1, true), "arguments shown")
  -- $/progress named the tool while it ran (the window bar showed it).
  ok(t.lua("return _G.progress_seen"), "progress reported the tool")
  ok(table.concat(chat, "\n"):find("    hello from bash", 1, true), "result shown")
  local win = t.lua("return vim.fn.bufwinid(require('gopi.chat').session.buf)")
  local closed = t.lua("local w, l = ... return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(l) end)", win, head)
  eq(head, closed, "the tool block is folded closed")
end, { approval = "off" })

test("while gopi works, <CR> steers, <M-CR> queues a follow-up (shown), <C-c> aborts", function(t)
  t.cmd("Gopi")
  prompt(t, "stream: 400")
  t.wait("streaming", "return require('gopi.chat').session.state.streaming == true")
  prompt(t, "reply: later", "<M-CR>")
  t.wait("the queued follow-up", "local q = require('gopi.chat').session.state.queue return q and #q.followUp == 1")
  local virt = t.lua([[
    local s = require('gopi.chat').session
    local ns = vim.api.nvim_get_namespaces()["gopi.queue"]
    local marks = vim.api.nvim_buf_get_extmarks(s.prompt, ns, 0, -1, { details = true })
    local out = {}
    for _, m in ipairs(marks) do for _, vl in ipairs(m[4].virt_lines or {}) do table.insert(out, vl[1][1]) end end
    return out
  ]])
  eq({ "⏵ follow-up: reply: later" }, virt, "the queue above the prompt")
  t.input("<C-c>")
  t.wait("stopped", "return require('gopi.chat').session.state.streaming == false")
  ok(t.chat_has("> stopped"), "the abort is shown")
  -- Steering: the message goes in while the reply streams.
  prompt(t, "stream: 300")
  t.wait("streaming", "return require('gopi.chat').session.state.streaming == true")
  prompt(t, "reply: steered")
  t.wait_chat("the steered reply", "\nsteered")
end, { model = "faux-1" })

test("an approval opens a diff tab: ga accepts (the file is written), :q rejects (it is not)", function(t)
  t.cmd("Gopi")
  prompt(t, "write: notes.txt :: hello from gopi")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  local proposed = t.lua("for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.api.nvim_buf_get_name(b):find('gopi://proposed/', 1, true) then return vim.api.nvim_buf_get_lines(b, 0, -1, false) end end")
  eq({ "hello from gopi" }, proposed, "the proposed content")
  eq(true, t.lua("return vim.wo.diff"), "a diff")
  t.input("ga")
  t.wait("the review closed", "return #vim.api.nvim_list_tabpages() == 1")
  t.wait("settled", "return require('gopi.chat').session.state.streaming == false")
  eq({ "hello from gopi" }, vim.fn.readfile(t.work .. "/notes.txt"), "accepted: written")
  prompt(t, "edit: notes.txt :: hello => goodbye")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  local prop2 = t.lua("for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.api.nvim_buf_get_name(b):find('gopi://proposed/', 1, true) then return vim.api.nvim_buf_get_lines(b, 0, -1, false) end end")
  eq({ "goodbye from gopi" }, prop2, "the edit's result")
  t.cmd("q")
  t.wait("the review closed", "return #vim.api.nvim_list_tabpages() == 1")
  t.wait("settled", "return require('gopi.chat').session.state.streaming == false and #vim.api.nvim_buf_get_lines(require('gopi.chat').session.buf, 0, -1, false) > 0")
  t.wait_chat("the tool failed", "✗ edit: notes.txt")
  eq({ "hello from gopi" }, vim.fn.readfile(t.work .. "/notes.txt"), "rejected: unchanged")
  -- :w in the proposal accepts too.
  prompt(t, "write: other.txt :: saved with w")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  eq(false, t.lua("return vim.bo.modifiable"), "the proposal is read-only")
  t.cmd("w")
  t.wait("the review closed", "return #vim.api.nvim_list_tabpages() == 1")
  t.wait("the file", "return vim.fn.filereadable(...) == 1", t.work .. "/other.txt")
  eq({ "saved with w" }, vim.fn.readfile(t.work .. "/other.txt"), ":w accepted")
  -- :GopiChanges lists what the last run changed.
  t.cmd("GopiChanges")
  eq("other.txt", t.lua("return vim.fn.fnamemodify(vim.fn.bufname(vim.fn.getqflist()[1].bufnr), ':t')"), "the quickfix list")
end)

test("bash asks through vim.ui.select with the command shown; dismissed, nothing runs", function(t)
  t.cmd("Gopi")
  prompt(t, "bash: touch ran.txt")
  t.wait("the question", "return #_G.asked == 1")
  ok(t.lua("return _G.asked[1]"):find("$ touch ran.txt", 1, true), "the command is shown: " .. t.lua("return _G.asked[1]"))
  t.wait("settled", "return require('gopi.chat').session.state.streaming == false and table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').session.buf, 0, -1, false), '\\n'):find('✗ bash', 1, true) ~= nil")
  eq(0, vim.fn.filereadable(t.work .. "/ran.txt"), "nothing ran")
end)

test(":GopiNew, then :GopiSessions resumes the earlier session", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: the first session")
  t.wait_chat("the reply", "\nthe first session")
  t.wait("settled", "return require('gopi.chat').session.state.streaming == false")
  t.cmd("GopiNew")
  t.wait("an empty chat", "return #table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').session.buf, 0, -1, false), '') == 0")
  t.lua("_G.answer = function(items) for _, s in ipairs(items) do if (s.firstMessage or ''):find('the first session', 1, true) then return s end end end")
  t.cmd("GopiSessions")
  t.wait_chat("the resumed history", "\nthe first session")
end)

test(":GopiModel and :GopiThinking reach gopi and the status", function(t)
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').session.client ~= nil and require('gopi.chat').session.client.ready == true")
  t.cmd("GopiModel faux/faux-1")
  t.wait("the model in the status", "return require('gopi').status():find('faux%-1') ~= nil")
  t.cmd("GopiThinking high")
  t.wait("the thinking level in the status", "return require('gopi').status():find('think high', 1, true) ~= nil")
  local st = t.lua("return require('gopi.chat').session.client:call('get_state')")
  eq("faux-1", st.model.id, "gopi's model")
  eq("high", st.thinkingLevel, "gopi's thinking level")
end)

test(":checkhealth gopi names the binary, its version, the handshake and the providers", function(t)
  t.cmd("checkhealth gopi")
  local text = table.concat(t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "\n")
  ok(text:find("binary: " .. gopi, 1, true), text)
  ok(text:find("version: gopi ", 1, true), text)
  ok(text:find("handshake: gopi", 1, true), text)
  ok(text:find("providers with credentials: faux only", 1, true), text)
end)

test("gopi killed: the chat says so, and :GopiRestart goes on with the same conversation", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: before the crash")
  t.wait_chat("the reply", "\nbefore the crash")
  t.wait("the session file", "return require('gopi.chat').session.state.session_file ~= nil")
  local pid = t.lua("return vim.fn.getpid()")
  local kids = vim.fn.systemlist({ "pgrep", "-P", tostring(pid) })
  ok(#kids >= 1, "gopi is a child of the editor")
  for _, k in ipairs(kids) do
    uv.kill(tonumber(k), "sigkill")
  end
  t.wait_chat("the notice", "gopi exited")
  t.cmd("GopiRestart")
  t.wait_chat("the history again", "\nbefore the crash")
  prompt(t, "reply: after the restart")
  t.wait_chat("a reply after the restart", "\nafter the restart")
end)

test("a 10,000-delta reply leaves the editor responsive (measured)", function(t)
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').session.client ~= nil and require('gopi.chat').session.client.ready == true")
  local start = uv.hrtime()
  prompt(t, "stream: 10000")
  local worst, samples = 0, 0
  while true do
    local t0 = uv.hrtime()
    local done = t.lua("return require('gopi.chat').session.state.streaming == false and table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').session.buf, -3, -1, false), ' '):find('9999 10000', 1, true) ~= nil")
    local dt = (uv.hrtime() - t0) / 1e6
    worst, samples = math.max(worst, dt), samples + 1
    if done then
      break
    end
    ok((uv.hrtime() - start) / 1e6 < 120000, "the reply finished")
    vim.wait(5)
  end
  io.stdout:write(string.format("# 10,000 deltas: %.0f ms to the end of the reply; the editor answered %d requests meanwhile, the slowest in %.1f ms\n", (uv.hrtime() - start) / 1e6, samples, worst))
end)

test("completion: / from gopi's commands, @ for files; :GopiAdd puts a range in the prompt", function(t)
  vim.fn.mkdir(t.work .. "/src", "p")
  vim.fn.writefile({ "package main", "", "func main() {}" }, t.work .. "/src/server.go")
  vim.fn.mkdir(t.root .. "/agent/prompts", "p")
  vim.fn.writefile({ "---", "description: Review the change", "---", "Review it." }, t.root .. "/agent/prompts/review.md")
  t.cmd("Gopi")
  t.wait("the commands", "return #require('gopi.complete').commands > 0")
  local items = t.lua("return require('gopi.complete').items('/rev')")
  eq("/review", items[1].word, "a template")
  local files = t.lua("return require('gopi.complete').items('look at @serv')")
  eq("@src/server.go", files[1].word, "a file")
  t.cmd("edit src/server.go")
  t.cmd("1,3GopiAdd")
  eq({ "@src/server.go#L1-3 " }, t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').session.prompt, 0, -1, false)"), "the prompt")
end)

test(":GopiFork puts the message back in the prompt; :GopiClone and :GopiExport make files", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: worth keeping")
  t.wait_chat("the reply", "\nworth keeping")
  t.wait("the session file", "return require('gopi.chat').session.state.session_file ~= nil")
  local first = t.lua("return require('gopi.chat').session.state.session_file")
  t.lua("_G.answer = function(items) return items[1] end")
  t.cmd("GopiFork")
  t.wait("the forked message in the prompt", "return vim.api.nvim_buf_get_lines(require('gopi.chat').session.prompt, 0, -1, false)[1] == 'reply: worth keeping'")
  t.cmd("GopiClone")
  t.wait("a new session file", "local f = require('gopi.chat').session.state.session_file return f ~= nil and f ~= ...", first)
  t.lua("_G.notes = {} vim.notify = function(m) table.insert(_G.notes, m) end vim.ui.open = function() end")
  t.cmd("GopiExport")
  t.wait("the export", "for _, n in ipairs(_G.notes) do if n:find('exported to ', 1, true) then return true end end return false")
  local path = t.lua("for _, n in ipairs(_G.notes) do local p = n:match('exported to (.*)') if p then return p end end")
  eq(1, vim.fn.filereadable(path), "the HTML file")
end)

test("the chat as a float", function(t)
  t.cmd("Gopi")
  local floats = t.lua("local n = 0 for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do if vim.api.nvim_win_get_config(w).relative ~= '' then n = n + 1 end end return n")
  eq(2, floats, "the chat and the prompt float")
  prompt(t, "reply: afloat")
  t.wait_chat("the reply", "\nafloat")
end, { setup = { chat = { layout = "float" } } })

lib.finish()

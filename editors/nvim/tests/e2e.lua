-- End-to-end tests of the plugin: each test starts a child Neovim
-- (--embed, driven over its RPC API) with the plugin on its runtimepath,
-- against the real gopi binary on the offline faux model, in a fresh
-- working and agent directory. The runner ends with "N passed, N failed"
-- and exits 1 on any failure.
--
--   GOPI_BIN=/path/to/gopi nvim -l tests/e2e.lua [name-filter]
--
-- The tests of pi extensions' UI load pi's example rpc-demo.ts; they need
-- GOPI_NODE, GOPI_PI_PACKAGE and GOPI_PI_EXAMPLES, which
-- `eval "$(testdata/pi/ext-env.sh)"` exports, and are skipped without them.
-- Those of the completion sources load nvim-cmp and blink.cmp from
-- GOPI_NVIM_CMP and GOPI_BLINK_CMP, which `eval "$(tests/install-plugins.sh)"`
-- exports; without them they are skipped.
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

-- What the extension host needs, and where pi's examples are.
local ext_vars = { "GOPI_NODE", "GOPI_PI_PACKAGE", "GOPI_PI_EXAMPLES" }
local ext_missing = vim.tbl_filter(function(k)
  return (vim.env[k] or "") == ""
end, ext_vars)

-- The completion plugins the tests of gopi's sources load: run.sh sets
-- these from tests/install-plugins.sh.
local plugin_env = { ["nvim-cmp"] = "GOPI_NVIM_CMP", ["blink.cmp"] = "GOPI_BLINK_CMP" }

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
    t.wait(what, "return table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '\\n'):find((...), 1, true) ~= nil", text)
  end
  function t.chat()
    local ok, lines = pcall(
      t.lua,
      [[
      local s = require("gopi.chat").current()
      if not s.buf then return {} end
      return vim.api.nvim_buf_get_lines(s.buf, 0, -1, false)
    ]]
    )
    return ok and lines or {}
  end
  function t.chat_has(text)
    return table.concat(t.chat(), "\n"):find(text, 1, true) ~= nil
  end
  -- No sandbox unless the test sets one: the tests of everything else run
  -- as they were written, whatever gopi's default for editors is.
  local setup = vim.tbl_extend(
    "force",
    { cmd = gopi, provider = "faux", model = opts.model or "faux-fast", approval = opts.approval or "writes", sandbox = "off", bare = opts.bare },
    opts.setup or {}
  )
  local unset = {}
  -- Completion plugins (tests/install-plugins.sh) go on 'runtimepath' before
  -- gopi's setup, which registers the nvim-cmp source when it finds nvim-cmp.
  -- (With plugins_late, after it: a plugin that loads later.)
  local function load_plugins()
    for _, name in ipairs(opts.plugins or {}) do
      t.lua(
        [[
        local dir = ...
        vim.opt.rtp:prepend(dir)
        for _, f in ipairs(vim.fn.glob(dir .. "/plugin/*.{lua,vim}", false, true)) do vim.cmd.source(f) end
      ]],
        vim.env[plugin_env[name]]
      )
    end
  end
  if not opts.plugins_late then
    load_plugins()
  end
  if opts.ext then
    -- pi's rpc-demo.ts, loaded as a user would: `-e` in the args option,
    -- and the extension host's runtime in the env option only (the child
    -- editor's own environment loses it).
    setup.args = { "-e", vim.env.GOPI_PI_EXAMPLES .. "/rpc-demo.ts" }
    setup.env = { GOPI_NODE = vim.env.GOPI_NODE, GOPI_PI_PACKAGE = vim.env.GOPI_PI_PACKAGE }
    unset = { "GOPI_NODE", "GOPI_PI_PACKAGE" }
  end
  t.lua(
    [[
    local plugin, cfg, unset = ...
    for _, k in ipairs(unset) do vim.env[k] = nil end
    vim.opt.rtp:prepend(plugin)
    vim.cmd("runtime plugin/gopi.lua")
    if not cfg.bare then require("gopi").setup(cfg) end
    -- Dialogs are answered by the test: _G.answer(items, prompt) picks.
    _G.asked = {}
    vim.ui.select = function(items, o, cb)
      table.insert(_G.asked, o.prompt or "")
      local pick = _G.answer and _G.answer(items, o.prompt) or nil
      vim.schedule(function() cb(pick) end)
    end
    -- vim.ui.input answers _G.typed (nil: dismissed); what it was asked is kept.
    _G.inputs = {}
    vim.ui.input = function(o, cb)
      table.insert(_G.inputs, o)
      local v = _G.typed
      vim.schedule(function() cb(v) end)
    end
    -- Messages are kept (as "level message") instead of shown.
    _G.notes = {}
    vim.notify = function(m, level)
      table.insert(_G.notes, tostring(level or vim.log.levels.INFO) .. " " .. tostring(m))
    end
  ]],
    plugin,
    setup,
    unset
  )
  if opts.plugins_late then
    load_plugins()
  end
  --- Waits until a message containing text was notified; returns it ("level message").
  function t.wait_note(what, text)
    t.wait(what, "for _, n in ipairs(_G.notes) do if n:find((...), 1, true) then return true end end return false", text)
    return t.lua("for _, n in ipairs(_G.notes) do if n:find((...), 1, true) then return n end end", text)
  end
  --- The screen as a user would see it: one string per row.
  function t.screen()
    return t.lua([[
      vim.cmd("redraw!")
      local rows = {}
      for r = 1, vim.o.lines do
        local cells = {}
        for c = 1, vim.o.columns do
          cells[c] = vim.fn.screenstring(r, c)
        end
        rows[r] = table.concat(cells)
      end
      return rows
    ]])
  end
  function t.close()
    pcall(t.lua, "require('gopi.chat').current():stop()")
    pcall(vim.fn.jobstop, chan)
    vim.fn.delete(root, "rf")
  end
  return t
end

local function test(name, fn, opts)
  if filter and not name:find(filter, 1, true) then
    return
  end
  if opts and opts.ext and #ext_missing > 0 then
    lib.skip(name, table.concat(ext_missing, ", ") .. ' not set (eval "$(testdata/pi/ext-env.sh)" sets them)')
    return
  end
  for _, p in ipairs(opts and opts.plugins or {}) do
    local dir = vim.env[plugin_env[p]] or ""
    if vim.fn.isdirectory(dir .. "/lua") == 0 then
      lib.skip(name, plugin_env[p] .. " does not name a checkout of " .. p .. " (see tests/install-plugins.sh)")
      return
    end
  end
  local t = child(opts)
  lib.run(name, fn, t)
  t.close()
end

local function prompt(t, text, keys)
  t.lua("local p = require('gopi.chat').current().prompt; vim.api.nvim_buf_set_lines(p, 0, -1, false, vim.split(..., '\\n'))", text)
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().prompt))")
  t.input("<Esc>" .. (keys or "<CR>"))
end

--- Sends stream: n and waits for the end of its reply, the chat's last line.
local function stream(t, n)
  prompt(t, "stream: " .. n)
  t.wait(
    "the reply to stream: " .. n,
    [[
    local s = require("gopi.chat").current()
    local last = vim.api.nvim_buf_get_lines(s.buf, -2, -1, false)[1]
    return s.state.streaming == false and last:sub(-#(...)) == (...)
  ]],
    string.format(" %d %d", n - 1, n)
  )
end

--- The number of the first row of the screen that holds text.
local function find_row(rows, text)
  for i, r in ipairs(rows) do
    if r:find(text, 1, true) then
      return i
    end
  end
end

local settled = "return require('gopi.chat').current().state.streaming == false and #require('gopi.chat').current().r.cards >= 0"

test(":Gopi opens the chat and a prompt window; a reply streams into it", function(t)
  t.cmd("Gopi")
  eq(3, t.lua("return #vim.api.nvim_tabpage_list_wins(0)"), "windows: the file, the chat, the prompt")
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  prompt(t, "stream: 60")
  t.wait_chat("the streamed reply", "58 59 60")
  local chat = table.concat(t.chat(), "\n")
  ok(chat:find("## You\n\nstream: 60", 1, true), chat)
  ok(chat:find("## gopi\n\n1 2 3 4", 1, true), chat)
  eq("markdown", t.lua("return vim.bo[require('gopi.chat').current().buf].filetype"), "filetype")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  ok(t.lua("return require('gopi').status()"):find("faux%-fast"), "status names the model: " .. t.lua("return require('gopi').status()"))
  -- :Gopi again closes the chat windows.
  t.cmd("Gopi")
  eq(1, t.lua("return #vim.api.nvim_tabpage_list_wins(0)"), "windows after the toggle")
end)

test("a tool block shows its arguments and result, folded when it succeeded", function(t)
  t.lua([[
    local chat = require("gopi.chat").current()
    local redraw = chat.redraw_bars
    chat.redraw_bars = function(self)
      local p = self.state.progress
      if p and p:find("bash: echo hello from bash", 1, true) then _G.progress_seen = true end
      return redraw(self)
    end
  ]])
  t.cmd("Gopi")
  prompt(t, "bash: echo hello from bash")
  t.wait(
    "the tool result",
    "for _, l in ipairs(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false)) do if l:find('✓ bash: echo hello from bash', 1, true) then return true end end return false"
  )
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
  local win = t.lua("return vim.fn.bufwinid(require('gopi.chat').current().buf)")
  local closed = t.lua("local w, l = ... return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(l) end)", win, head)
  eq(head, closed, "the tool block is folded closed")
end, { approval = "off" })

test("while gopi works, <CR> steers, <M-CR> queues a follow-up (shown), <C-c> aborts", function(t)
  t.cmd("Gopi")
  prompt(t, "stream: 400")
  t.wait("streaming", "return require('gopi.chat').current().state.streaming == true")
  prompt(t, "reply: later", "<M-CR>")
  t.wait("the queued follow-up", "local q = require('gopi.chat').current().state.queue return q and #q.followUp == 1")
  local virt = t.lua([[
    local s = require('gopi.chat').current()
    local ns = vim.api.nvim_get_namespaces()["gopi.queue"]
    local marks = vim.api.nvim_buf_get_extmarks(s.prompt, ns, 0, -1, { details = true })
    local out = {}
    for _, m in ipairs(marks) do for _, vl in ipairs(m[4].virt_lines or {}) do table.insert(out, vl[1][1]) end end
    return out
  ]])
  eq({ "⏵ follow-up: reply: later" }, virt, "the queue above the prompt")
  local screen = t.screen()
  ok(find_row(screen, "⏵ follow-up: reply: later"), "the queue on screen:\n" .. table.concat(screen, "\n"))
  t.input("<C-c>")
  t.wait("stopped", "return require('gopi.chat').current().state.streaming == false")
  ok(t.chat_has("> stopped"), "the abort is shown")
  -- Steering: the message goes in while the reply streams.
  prompt(t, "stream: 300")
  t.wait("streaming", "return require('gopi.chat').current().state.streaming == true")
  prompt(t, "reply: steered")
  t.wait_chat("the steered reply", "\nsteered")
end, { model = "faux-1" })

local pending = "return #require('gopi.review').pending == 1"

test("an approval waits for :GopiReview; its diff tab: ga accepts (the file is written), :q rejects (it is not)", function(t)
  t.cmd("Gopi")
  prompt(t, "write: notes.txt :: hello from gopi")
  t.wait("the question", pending)
  eq(1, #t.lua("return vim.api.nvim_list_tabpages()"), "nothing opened by itself")
  t.cmd("GopiReview")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  local proposed = t.lua(
    "for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.api.nvim_buf_get_name(b):find('notes.txt (proposed)', 1, true) then return vim.api.nvim_buf_get_lines(b, 0, -1, false) end end"
  )
  eq({ "hello from gopi" }, proposed, "the proposed content")
  eq(true, t.lua("return vim.wo.diff"), "a diff")
  t.input("ga")
  t.wait("the review closed", "return #vim.api.nvim_list_tabpages() == 1")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  eq({ "hello from gopi" }, vim.fn.readfile(t.work .. "/notes.txt"), "accepted: written")
  prompt(t, "edit: notes.txt :: hello => goodbye")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  local prop2 = t.lua(
    "for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.api.nvim_buf_get_name(b):find('notes.txt (proposed)', 1, true) then return vim.api.nvim_buf_get_lines(b, 0, -1, false) end end"
  )
  eq({ "goodbye from gopi" }, prop2, "the edit's result")
  t.cmd("q")
  t.wait("the review closed", "return #vim.api.nvim_list_tabpages() == 1")
  t.wait(
    "settled",
    "return require('gopi.chat').current().state.streaming == false and #vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false) > 0"
  )
  t.wait_chat("the tool failed", "✗ edit: notes.txt")
  eq({ "hello from gopi" }, vim.fn.readfile(t.work .. "/notes.txt"), "rejected: unchanged")
  eq(0, t.lua("return #require('gopi.review').pending"), "answered")
  -- :w in the proposal accepts too.
  prompt(t, "write: other.txt :: saved with w")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  eq(false, t.lua("return vim.bo.modifiable"), "the proposal is read-only")
  t.cmd("w")
  t.wait("the review closed", "return #vim.api.nvim_list_tabpages() == 1")
  t.wait("the file", "return vim.fn.filereadable(...) == 1", t.work .. "/other.txt")
  eq({ "saved with w" }, vim.fn.readfile(t.work .. "/other.txt"), ":w accepted")
  -- :GopiChanges lists what the last run changed.
  t.cmd("GopiChanges")
  t.wait("the quickfix list", "return #vim.fn.getqflist() > 0")
  eq("other.txt", t.lua("return vim.fn.fnamemodify(vim.fn.bufname(vim.fn.getqflist()[1].bufnr), ':t')"), "the quickfix list")
end)

test("an approval never takes the keyboard: typing goes on in the file; announced in a message, the status and the chat", function(t)
  vim.fn.writefile({ "hello world" }, t.work .. "/a.txt")
  vim.fn.writefile({ "mine" }, t.work .. "/b.txt")
  t.cmd("edit b.txt")
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  -- Back in the file, typing, when the question comes.
  t.cmd("wincmd t")
  t.input("Go")
  t.input("typed before")
  t.wait("the typing", "return vim.api.nvim_get_current_line() == 'typed before'")
  t.lua("require('gopi').send('edit: a.txt :: hello => bye', 'prompt')")
  -- (Or, as it was, the review taking the screen.)
  t.wait("the question", "return #(require('gopi.review').pending or {}) == 1 or #vim.api.nvim_list_tabpages() == 2")
  t.input(" and after")
  vim.wait(200)
  t.wait("the typing after", "return vim.api.nvim_get_current_line() == 'typed before and after'")
  eq({ "mine", "typed before and after" }, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('b.txt'), 0, -1, false)"), "the user's buffer")
  eq(1, #t.lua("return vim.api.nvim_list_tabpages()"), "no tab opened")
  eq("b.txt", t.lua("return vim.fn.bufname()"), "the window is the user's")
  eq("i", t.lua("return vim.api.nvim_get_mode().mode"), "still in insert mode")
  eq({ "hello world" }, vim.fn.readfile(t.work .. "/a.txt"), "nothing written")
  -- Announced: a message, the status, a line in the chat.
  local note = t.wait_note("the announcement", "gR in the chat or :GopiReview")
  ok(note:find("a.txt", 1, true), note)
  ok(t.lua("return require('gopi').status()"):find("⚑ edit a.txt waits", 1, true), "the status: " .. t.lua("return require('gopi').status()"))
  t.wait_chat("the line in the chat", "⚑ waiting for you: ")
  -- The chat's window bar keeps the mark when it is too narrow for all.
  local screen = t.screen()
  ok(find_row(screen, "⚑ edit a.txt"), "the mark in the chat's window bar:\n" .. table.concat(screen, "\n"))
  -- The question is kept while the user goes on; gR in the chat opens it.
  vim.wait(500)
  eq(1, t.lua("return #require('gopi.review').pending"), "still waiting")
  t.input("<Esc>")
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().buf))")
  t.input("gR")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  t.input("ga")
  t.wait("written", "return vim.fn.readfile(...)[1] == 'bye world'", t.work .. "/a.txt")
  t.wait("answered", "return #require('gopi.review').pending == 0 and not require('gopi').status():find('⚑', 1, true)")
end)

test("a review opened from insert mode leaves it and shows its keys in its window bar and :messages", function(t)
  vim.fn.writefile({ "hello world" }, t.work .. "/a.txt")
  t.lua("vim.o.columns = 160 vim.o.lines = 40")
  t.cmd("Gopi")
  prompt(t, "edit: a.txt :: hello => bye")
  t.wait("the question", pending)
  -- From insert mode in the prompt, through a mapping as a user would make one.
  t.lua("vim.keymap.set('i', '<C-g>r', '<Cmd>GopiReview<CR>')")
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().prompt))")
  t.input("i")
  t.wait("insert mode", "return vim.api.nvim_get_mode().mode == 'i'")
  t.input("<C-g>r")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  t.wait("normal mode", "return vim.api.nvim_get_mode().mode == 'n'")
  local bar = t.lua("return vim.wo.winbar")
  ok(bar:find("ga accept · gr reject · gA allow always", 1, true), "the window bar: " .. bar)
  t.wait("the hint in :messages", "return vim.fn.execute('messages'):find('ga accept', 1, true) ~= nil")
  local screen = t.screen()
  local shown = table.concat(screen, "\n")
  ok(find_row(screen, "ga accept · gr reject"), "the hint on screen:\n" .. shown)
  ok(not shown:find("-- INSERT --", 1, true), "no insert mode on screen:\n" .. shown)
end)

test("a review: the file on the left, the proposal on the right, named by the path in the project", function(t)
  vim.fn.mkdir(t.work .. "/src", "p")
  vim.fn.writefile({ "package main", "", "func hello() {}" }, t.work .. "/src/main.go")
  t.lua("vim.o.columns = 160 vim.o.lines = 40")
  t.cmd("Gopi")
  prompt(t, "edit: src/main.go :: hello => bye")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  local sides = t.lua([[
    local out = {}
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local b = vim.api.nvim_win_get_buf(w)
      table.insert(out, { col = vim.api.nvim_win_get_position(w)[2], name = vim.fn.bufname(b), text = vim.api.nvim_buf_get_lines(b, 0, -1, false)[3], bar = vim.wo[w].winbar, modifiable = vim.bo[b].modifiable, modified = vim.bo[b].modified })
    end
    table.sort(out, function(a, b) return a.col < b.col end)
    return out
  ]])
  eq(2, #sides, "two windows")
  eq("func hello() {}", sides[1].text, "the current file on the left")
  eq("func bye() {}", sides[2].text, "the proposal on the right")
  eq("src/main.go (current)", sides[1].name, "the left buffer's name")
  eq("src/main.go (proposed)", sides[2].name, "the right buffer's name")
  ok(sides[1].bar:find("src/main.go", 1, true) and sides[2].bar:find("src/main.go", 1, true), vim.inspect(sides))
  eq(false, sides[2].modifiable, "the proposal is not modifiable")
  eq(false, sides[2].modified, "nor modified")
  local screen = t.screen()
  -- The tab's label: the buffer's name, its directories shortened as
  -- Neovim's tab line does for every file.
  ok(screen[1]:find(" s/main.go (proposed) ", 1, true), "the tab label:\n" .. table.concat(screen, "\n"))
end)

test("an accept writes what the review shows: a file changed meanwhile is shown again, not accepted", function(t)
  vim.fn.writefile({ "hello world" }, t.work .. "/a.txt")
  t.cmd("Gopi")
  prompt(t, "edit: a.txt :: hello => bye")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  eq({ "bye world" }, t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "the proposal")
  vim.fn.writefile({ "hello there" }, t.work .. "/a.txt")
  t.input("ga")
  t.wait("the review again", "return vim.api.nvim_buf_get_lines(0, 0, -1, false)[1] == 'bye there'")
  eq(1, t.lua("return #require('gopi.review').pending"), "still waiting")
  eq({ "hello there" }, vim.fn.readfile(t.work .. "/a.txt"), "not written yet")
  t.input("ga")
  t.wait("written", "return vim.fn.readfile(...)[1] == 'bye there'", t.work .. "/a.txt")
  t.wait("one tab", "return #vim.api.nvim_list_tabpages() == 1 and #require('gopi.review').pending == 0")
end)

-- The inline review's state in the child: the file's buffer, its marks.
local inline_marks = "return #vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('gopi.inline'), 0, -1, {}) > 0"
local six = { "one", "two", "three", "four", "five", "six" }
local two_hunks = "edit: a.txt :: two\nthree\nfour => TWO\nthree\nFOUR"

test(
  'an inline review (review = "inline"): in the file\'s window, ]x/[x move, one hunk accepted and one rejected: Deny, the accepted hunk written, undo restores',
  function(t)
    vim.fn.writefile(six, t.work .. "/a.txt")
    t.cmd("edit a.txt")
    local file_win = t.lua("return vim.api.nvim_get_current_win()")
    t.cmd("Gopi")
    prompt(t, two_hunks)
    t.wait("the question", pending)
    eq(
      0,
      t.lua("return #vim.api.nvim_buf_get_extmarks(vim.fn.bufnr('a.txt'), vim.api.nvim_create_namespace('gopi.inline'), 0, -1, {})"),
      "nothing shown before it is opened"
    )
    t.cmd("GopiReview")
    t.wait("the inline review", inline_marks)
    eq(1, #t.lua("return vim.api.nvim_list_tabpages()"), "no tab")
    eq(file_win, t.lua("return vim.api.nvim_get_current_win()"), "in the file's own window")
    eq(six, t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "nothing in the buffer yet")
    local virt = t.lua([[
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('gopi.inline'), 0, -1, { details = true })) do
      for _, l in ipairs(m[4].virt_lines or {}) do table.insert(out, vim.trim(l[1][1])) end
    end
    return out
  ]])
    eq({ "TWO", "FOUR" }, virt, "the added lines, as virtual lines")
    eq(2, t.lua("return vim.fn.line('.')"), "at the first hunk")
    t.input("]x")
    t.wait("the second hunk", "return vim.fn.line('.') == 4")
    t.input("]x")
    t.wait("around to the first", "return vim.fn.line('.') == 2")
    t.input("[x")
    t.wait("back to the second", "return vim.fn.line('.') == 4")
    t.input("[x")
    t.wait("the first again", "return vim.fn.line('.') == 2")
    -- An accepted hunk is one undo step; undone, it is proposed again.
    t.input("ga")
    t.wait("the first hunk in the buffer", "return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'TWO'")
    eq("four", t.lua("return vim.api.nvim_buf_get_lines(0, 3, 4, false)[1]"), "the second hunk not yet")
    t.input("u")
    t.wait(
      "undone, proposed again",
      "return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'two' and #vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('gopi.inline'), 0, -1, { details = true }) >= 2"
    )
    eq(six, t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "undo took the hunk out whole")
    t.lua("vim.api.nvim_win_set_cursor(0, { 2, 0 })")
    t.input("gr")
    t.wait("one hunk left, at the cursor", "return vim.fn.line('.') == 4")
    eq(1, t.lua("return #require('gopi.review').pending"), "still waiting")
    t.input("ga")
    t.wait("answered", "return #require('gopi.review').pending == 0")
    t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
    local want = { "one", "two", "three", "FOUR", "five", "six" }
    eq(want, vim.fn.readfile(t.work .. "/a.txt"), "the file holds the accepted hunk only")
    eq(want, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)"), "and the buffer")
    eq(false, t.lua("return vim.bo[vim.fn.bufnr('a.txt')].modified"), "written")
    t.wait_chat("gopi was told no", "✗ edit: a.txt")
    eq(false, t.lua("return " .. inline_marks:sub(8)), "the marks are gone")
    t.lua("vim.api.nvim_set_current_win(...)", file_win)
    t.input("u")
    t.wait("undone", "return vim.api.nvim_buf_get_lines(0, 0, -1, false)[4] == 'four'")
    eq(six, t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "undo restores the buffer as it was")
  end,
  { setup = { review = "inline" } }
)

test("an inline review: accept all lets gopi write its edit; reject all leaves the file as it was; a file not shown opens in the previous window", function(t)
  vim.fn.writefile(six, t.work .. "/a.txt")
  t.cmd("edit other.txt")
  local file_win = t.lua("return vim.api.nvim_get_current_win()")
  t.cmd("Gopi")
  prompt(t, two_hunks)
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the inline review", inline_marks)
  eq(1, #t.lua("return vim.api.nvim_list_tabpages()"), "no tab")
  eq(file_win, t.lua("return vim.api.nvim_get_current_win()"), "in the previous window")
  eq("a.txt", t.lua("return vim.fn.expand('%:t')"), "the file opened there")
  t.input("gY")
  t.wait("answered", "return #require('gopi.review').pending == 0")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  local all = { "one", "TWO", "three", "FOUR", "five", "six" }
  t.wait_chat("gopi wrote it", "✓ edit: a.txt")
  eq(all, vim.fn.readfile(t.work .. "/a.txt"), "gopi's version on disk")
  eq(all, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)"), "and in the buffer")
  eq(false, t.lua("return vim.bo[vim.fn.bufnr('a.txt')].modified"), "the buffer is the file")
  t.lua("vim.api.nvim_set_current_win(...)", file_win)
  -- The undo history is kept: the reload, then one step per hunk.
  local steps = t.lua(
    "local out = {} for i = 1, 3 do vim.cmd('silent undo') table.insert(out, table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), ',')) end return out"
  )
  eq({ "one,TWO,three,FOUR,five,six", "one,two,three,FOUR,five,six", "one,two,three,four,five,six" }, steps, "undo, step by step")
  t.lua("for i = 1, 3 do vim.cmd('silent redo') end")
  eq(all, t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "redone")
  eq(false, t.lua("return vim.bo.modified"), "back at the file's text")
  prompt(t, "edit: a.txt :: TWO\nthree\nFOUR => 2\nthree\n4")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the inline review", inline_marks)
  t.input("gX")
  t.wait("answered", "return #require('gopi.review').pending == 0")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  t.wait_chat("denied", "✗ edit: a.txt")
  eq(all, vim.fn.readfile(t.work .. "/a.txt"), "rejected: the file unchanged")
  eq(all, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)"), "and the buffer")
  eq(false, t.lua("return vim.bo[vim.fn.bufnr('a.txt')].modified"), "not modified")
end, { setup = { review = "inline" } })

test(
  "an inline review: the window already showing the file; withdrawn, its marks and keys go and the user's own come back; unsaved changes open the diff tab",
  function(t)
    vim.fn.writefile(six, t.work .. "/a.txt")
    t.cmd("edit a.txt")
    local file_win = t.lua("return vim.api.nvim_get_current_win()")
    t.lua("vim.keymap.set('n', 'ga', '<Cmd>let g:mine = 1<CR>', { buffer = 0 })")
    t.cmd("vsplit other.txt")
    t.cmd("Gopi")
    prompt(t, two_hunks)
    t.wait("the question", pending)
    t.cmd("GopiReview")
    t.wait("the inline review", inline_marks)
    eq(file_win, t.lua("return vim.api.nvim_get_current_win()"), "in the window that showed a.txt")
    -- ? lists the inline review's keys while it lasts.
    t.lua("vim.api.nvim_feedkeys('?', 'x', false)")
    local help = t.lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
    lib.ok(help:find("In an inline review", 1, true) and help:find("]x", 1, true), "the inline review's keys: " .. help)
    t.lua("vim.api.nvim_feedkeys('q', 'x', false)")
    eq(file_win, t.lua("return vim.api.nvim_get_current_win()"), "back in the file's window")
    t.cmd("GopiAbort")
    t.wait("withdrawn", "return #require('gopi.review').pending == 0")
    t.wait("the marks gone", "return #vim.api.nvim_buf_get_extmarks(vim.fn.bufnr('a.txt'), vim.api.nvim_create_namespace('gopi.inline'), 0, -1, {}) == 0")
    eq(six, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)"), "the buffer as it was")
    t.lua("vim.api.nvim_set_current_win(...)", file_win)
    eq("<Cmd>let g:mine = 1<CR>", t.lua("return vim.fn.maparg('ga', 'n')"), "the user's own ga is back")
    eq("", t.lua("return vim.fn.maparg(']x', 'n')"), "]x unmapped again")
    eq("", t.lua("return vim.fn.maparg('?', 'n')"), "? unmapped again")
    -- A buffer with unsaved changes is not reviewed in place.
    t.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'mine' })")
    t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
    prompt(t, two_hunks)
    t.wait("the question", pending)
    t.cmd("GopiReview")
    t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
    ok(t.lua("return vim.fn.execute('messages')"):find("unsaved changes", 1, true), "says why")
    eq(
      { "mine", "two", "three", "four", "five", "six" },
      t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)"),
      "the buffer untouched"
    )
  end,
  { setup = { review = "inline" } }
)

test("an inline review of a write over a file: gA accepts it and allows write from then on", function(t)
  vim.fn.writefile(six, t.work .. "/a.txt")
  t.cmd("edit a.txt")
  t.cmd("Gopi")
  prompt(t, "write: a.txt :: one\ntwo\nthree\n4\nfive\nsix")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the inline review", inline_marks)
  eq(4, t.lua("return vim.fn.line('.')"), "at its one hunk")
  t.input("gA")
  t.wait("answered", "return #require('gopi.review').pending == 0")
  t.wait_chat("written", "✓ write: a.txt")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  eq({ "one", "two", "three", "4", "five", "six" }, vim.fn.readfile(t.work .. "/a.txt"), "gopi's write")
  t.wait("the buffer too", "return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 3, 4, false)[1] == '4'")
  prompt(t, "write: a.txt :: done")
  t.wait("written without a question", "return vim.fn.readfile(...)[1] == 'done'", t.work .. "/a.txt")
  eq(0, t.lua("return #require('gopi.review').pending"), "nothing asked")
end, { setup = { review = "inline" } })

test("an inline review: a file the user wrote meanwhile is written with the rest accepted (Deny); one written by someone else is left alone", function(t)
  vim.fn.writefile(six, t.work .. "/a.txt")
  t.cmd("edit a.txt")
  t.cmd("Gopi")
  prompt(t, two_hunks)
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the inline review", inline_marks)
  t.input("ga")
  t.wait("one hunk in", "return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1] == 'TWO'")
  t.cmd("write")
  t.input("gY")
  t.wait("answered", "return #require('gopi.review').pending == 0")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  local all = { "one", "TWO", "three", "FOUR", "five", "six" }
  eq(all, vim.fn.readfile(t.work .. "/a.txt"), "the whole proposal on disk")
  eq(false, t.lua("return vim.bo.modified"), "written")
  t.wait_chat("gopi was told no", "✗ edit: a.txt")
  -- Someone else writes the file during a review: it stays theirs.
  prompt(t, "edit: a.txt :: TWO => 2")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the inline review", inline_marks)
  vim.fn.writefile({ "theirs" }, t.work .. "/a.txt")
  t.input("ga")
  t.wait("answered", "return #require('gopi.review').pending == 0")
  eq({ "theirs" }, vim.fn.readfile(t.work .. "/a.txt"), "not written over")
  ok(t.lua("return vim.fn.execute('messages')"):find("changed on disk during the review", 1, true), "said so")
end, { setup = { review = "inline" } })

test(":GopiAbort withdraws a waiting question: gone from the status, nothing opens", function(t)
  vim.fn.writefile({ "hello world" }, t.work .. "/a.txt")
  t.cmd("Gopi")
  prompt(t, "edit: a.txt :: hello => bye")
  t.wait("the question", pending)
  t.cmd("GopiAbort")
  t.wait("withdrawn", "return #require('gopi.review').pending == 0")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  ok(not t.lua("return require('gopi').status()"):find("⚑", 1, true), "the status: " .. t.lua("return require('gopi').status()"))
  t.cmd("GopiReview")
  eq(1, #t.lua("return vim.api.nvim_list_tabpages()"), "nothing to open")
  eq({ "hello world" }, vim.fn.readfile(t.work .. "/a.txt"), "unchanged")
end)

test("bash asks through vim.ui.select with the command shown, once opened; dismissed it waits, denied nothing runs", function(t)
  t.cmd("Gopi")
  prompt(t, "bash: touch ran.txt")
  t.wait("the question", pending)
  eq(0, t.lua("return #_G.asked"), "not asked before it is opened")
  t.cmd("GopiReview")
  t.wait("the question", "return #_G.asked == 1")
  ok(t.lua("return _G.asked[1]"):find("$ touch ran.txt", 1, true), "the command is shown: " .. t.lua("return _G.asked[1]"))
  -- Dismissed, it waits on (it was not answered).
  vim.wait(300)
  eq(1, t.lua("return #require('gopi.review').pending"), "still waiting after a dismissal")
  t.lua("_G.answer = function() return 'Deny' end")
  t.cmd("GopiReview")
  t.wait(
    "settled",
    "return require('gopi.chat').current().state.streaming == false and table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '\\n'):find('✗ bash', 1, true) ~= nil"
  )
  eq(0, vim.fn.filereadable(t.work .. "/ran.txt"), "nothing ran")
end)

-- A codemode script that runs bash (which asks) and reads a file at once.
local codemode_script = table.concat({
  "const [cmd, notes] = await Promise.all([",
  '  tools.bash({ command: "echo nested" }),',
  '  tools.read({ path: "notes.txt" }),',
  "]);",
  'console.log("bash exited with", cmd.exit_code);',
  'text("bash said: " + cmd.output.trim());',
  "return notes;",
}, "\n")

test("a codemode call: the script in a javascript block, its calls indented under it, the result; the nested question is answered", function(t)
  vim.fn.writefile({ "remember the milk" }, t.work .. "/notes.txt")
  t.cmd("Gopi")
  prompt(t, "call: codemode " .. vim.json.encode({ code = codemode_script }))
  -- bash asks first, as a call of its own would.
  t.wait("the nested question", pending)
  t.lua("_G.answer = function(items) return items[1] end")
  t.cmd("GopiReview")
  t.wait_chat("the script's result", "Script completed in ")
  t.wait("settled", settled)
  local chat = t.chat()
  local text = table.concat(chat, "\n")
  local head = find_row(chat, "✓ codemode: 2 tool calls · completed in ")
  ok(head, "the card's title line:\n" .. text)
  -- The script as a fenced javascript block right under the title.
  local want = vim.list_extend({ "```javascript" }, vim.split(codemode_script, "\n"))
  table.insert(want, "```")
  eq(want, vim.list_slice(chat, head + 1, head + #want), "the script's block")
  -- The calls, each a line indented under the script, in the order made.
  local calls = vim.list_slice(chat, head + #want + 1, head + #want + 2)
  ok(calls[1]:match("^    ✓ bash: echo nested  %(%d+ ms%)$"), "bash's line: " .. calls[1])
  ok(calls[2]:match("^    ✓ read: notes%.txt  %(%d+ ms%)$"), "read's line: " .. calls[2])
  eq(
    {
      "    ---",
      "    Script completed in ",
      "    [text 1 of 2]",
      "    bash said: nested",
      "    [text 2 of 2]",
      "    remember the milk",
      "    [console output]",
      "    bash exited with 0",
    },
    vim.tbl_map(function(l)
      return (l:gsub("in [%d.]+ s$", "in "))
    end, vim.list_slice(chat, head + #want + 3, head + #want + 10)),
    "the result"
  )
  -- No nested call has a card of its own.
  ok(not text:find("\n✓ bash", 1, true) and not text:find("\n✓ read", 1, true), "no top-level card for a nested call:\n" .. text)
  -- Markdown's treesitter sees a fenced block tagged javascript there (what
  -- injects JavaScript highlighting where its parser is installed).
  local block = t.lua([[
    local buf = require('gopi.chat').current().buf
    local parser = vim.treesitter.get_parser(buf, "markdown")
    local root = parser:parse()[1]:root()
    local q = vim.treesitter.query.parse("markdown", "(fenced_code_block (info_string (language) @lang)) @block")
    local out = {}
    for id, node in q:iter_captures(root, buf) do
      if q.captures[id] == "block" then
        out.first, _, out.last = node:range()
      elseif not out.lang then
        out.lang = vim.treesitter.get_node_text(node, buf)
        break
      end
    end
    return { out.lang or "none", out.first, out.last }
  ]])
  -- (The block ends where the line after its closing fence starts.)
  eq({ "javascript", head, head + #want }, { block[1], block[2], block[3] }, "the fenced block: its language, where it starts and ends")
  -- The card folds closed once done, like any tool's.
  local win = t.lua("return vim.fn.bufwinid(require('gopi.chat').current().buf)")
  eq(head, t.lua("local w, l = ... return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(l) end)", win, head), "the card is folded closed")
  -- The session shown again (from its history) shows the same card.
  t.cmd("GopiRestart")
  t.wait("the history again", "return require('gopi.chat').current().client.ready == true and #require('gopi.chat').current().r.regions > 0")
  t.wait_chat("the card from history", "✓ codemode: 2 tool calls · completed in ")
  local again = t.chat()
  local h2 = find_row(again, "✓ codemode: 2 tool calls")
  eq(vim.list_slice(chat, head, head + #want + 10), vim.list_slice(again, h2, h2 + #want + 10), "the card from history")
end, { setup = { args = { "--tools", "+codemode" } } })

test(":GopiNew, then :GopiSessions resumes the earlier session", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: the first session")
  t.wait_chat("the reply", "\nthe first session")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  t.cmd("GopiNew")
  t.wait("an empty chat", "return #table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '') == 0")
  t.lua("_G.answer = function(items) for _, s in ipairs(items) do if (s.firstMessage or ''):find('the first session', 1, true) then return s end end end")
  t.cmd("GopiSessions")
  t.wait_chat("the resumed history", "\nthe first session")
end)

test(":GopiModel and :GopiThinking reach gopi and the status", function(t)
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  t.cmd("GopiModel faux/faux-1")
  t.wait("the model in the status", "return require('gopi').status():find('faux%-1') ~= nil")
  t.cmd("GopiThinking high")
  t.wait("the thinking level in the status", "return require('gopi').status():find('think high', 1, true) ~= nil")
  local st = t.lua("return require('gopi.chat').current().client:call('get_state')")
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
  ok(text:find("no chat is running", 1, true), "the MCP servers' section says why it is empty: " .. text)
end)

--- :checkhealth gopi's report, as text.
local function health(t)
  t.cmd("checkhealth gopi")
  local text = table.concat(t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "\n")
  t.cmd("bwipeout!")
  return text
end

local ready = "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true"

test(
  "sandbox: setup's sandbox reaches gopi as --sandbox; the status and :checkhealth name what gopi reports; a command writing in the project is stopped",
  function(t)
    t.cmd("Gopi")
    t.wait("gopi started", ready)
    local cmd = t.lua("return require('gopi.chat').current().client.cmd")
    eq({ "--sandbox", "read-only" }, { cmd[6], cmd[7] }, "gopi's command line: " .. table.concat(cmd, " "))
    t.wait("the sandbox in the status", "return require('gopi').status():find('sandbox read-only', 1, true) ~= nil")
    prompt(t, "bash: echo no > stopped.txt")
    t.wait_chat("the command's result", "✗ bash")
    t.wait("settled", settled)
    eq(0, vim.fn.filereadable(t.work .. "/stopped.txt"), "read-only: the command wrote in the project")
    ok(t.chat_has("sandbox"), "the result says the sandbox stopped it")
    local text = health(t)
    ok(text:find("sandbox: read-only (setup)", 1, true), text)
    ok(text:find("OK the sandbox in force: read-only, network off, enforced by landlock-fs", 1, true), text)
  end,
  { approval = "off", setup = { sandbox = "read-only" } }
)

test("sandbox: a mode gopi cannot enforce here: the status and :checkhealth warn", function(t)
  t.cmd("Gopi")
  t.wait("gopi started", ready)
  t.wait(
    "the warning in the status",
    "return require('gopi.chat').current():status():find('%#WarningMsg#sandbox workspace-write not enforced%*', 1, true) ~= nil"
  )
  local text = health(t)
  ok(text:find("WARNING the sandbox in force: workspace-write cannot be enforced here, so gopi refuses the model's commands: ", 1, true), text)
  ok(text:find("no Landlock", 1, true), text)
end, {
  approval = "off",
  -- gopi's test hook: it believes the kernel has no Landlock.
  setup = { sandbox = "workspace-write", env = { GOPI_SANDBOX_TEST_LANDLOCK_ABI = "0" } },
})

test(
  "sandbox: the escape question waits like every question; opened, it offers Allow once and Deny; Deny keeps the command in, Allow once lets it out",
  function(t)
    local outside = t.root .. "/outside.txt"
    t.cmd("Gopi")
    t.wait("gopi started", ready)
    -- The bash question: Allow; then the escape question: the answer the test sets.
    t.lua("_G.answer = function(items) _G.items = items return vim.tbl_contains(items, 'Allow') and 'Allow' or _G.escape end")
    for _, answer in ipairs({ "Deny", "Allow once" }) do
      t.lua("_G.escape = ...; _G.asked = {}", answer)
      prompt(t, "bash: echo out > ../outside.txt")
      t.wait("the bash question", "return #require('gopi.review').pending == 1")
      t.cmd("GopiReview")
      t.wait("the escape question", "return #require('gopi.review').pending == 1 and require('gopi.review').pending[1].details.sandboxEscape == true")
      ok(
        t.lua("return require('gopi').status()"):find("⚑ bash outside the sandbox waits", 1, true),
        "the status: " .. t.lua("return require('gopi').status()")
      )
      eq(1, #t.lua("return _G.asked"), "not asked before it is opened")
      t.cmd("GopiReview")
      t.wait("settled", "return #_G.asked == 2 and " .. settled:gsub("^return ", ""))
      eq("gopi's sandbox stopped bash: echo out > ../outside.txt\nRun it once outside the sandbox?", t.lua("return _G.asked[2]"), "the picker's prompt")
      eq({ "Allow once", "Deny" }, t.lua("return _G.items"), "the answers offered")
      if answer == "Deny" then
        eq(0, vim.fn.filereadable(outside), "Deny: the command stayed in the sandbox")
      else
        eq({ "out" }, vim.fn.readfile(outside), "Allow once: the command ran outside the sandbox")
      end
    end
  end,
  { setup = { sandbox = "workspace-write" } }
)

-- The MCP test server of core/mcp, built once for the run.
local mcp_server
local function mcp_server_binary()
  if not mcp_server then
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, "p")
    local out = dir .. "/mcpserver"
    local r = vim
      .system({ "go", "build", "-o", out, "./core/mcp/testdata/mcpserver" }, { cwd = vim.fn.fnamemodify(plugin .. "/../..", ":p"), text = true })
      :wait()
    assert(r.code == 0, "building the MCP test server: " .. (r.stderr or ""))
    mcp_server = out
  end
  return mcp_server
end

--- The :GopiMcp float, while it is open: its lines and the window's title.
local mcp_view = [[
  local v = require('gopi.mcp').view
  if not v or not vim.api.nvim_win_is_valid(v.win) then return nil end
  return { lines = vim.api.nvim_buf_get_lines(v.buf, 0, -1, false), current = vim.api.nvim_get_current_win() == v.win }
]]

test(":GopiMcp lists the MCP servers, the failed one first with its error, and warns of it; <CR> on one shows its tools; /mcp and :checkhealth too", function(t)
  local bin = mcp_server_binary()
  local servers = { test = { command = bin, exposure = "direct" }, broken = { command = "gopi-no-such-mcp-server", exposure = "direct" } }
  vim.fn.writefile({ vim.json.encode({ mcpServers = servers }) }, t.root .. "/agent/mcp.json")
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  -- gopi reports the failure: a warning on one line, never a prompt.
  local warn = t.wait_note("the warning", "MCP server broken failed: ")
  ok(warn:find("^" .. vim.log.levels.WARN .. " gopi: MCP server broken failed: connecting: exec") and warn:find("  %(:GopiMcp%)$"), warn)
  local said = warn:gsub("^%d+ ", "")
  ok(not said:find("\n") and vim.fn.strdisplaywidth(said) <= t.lua("return vim.v.echospace"), "one line that fits: " .. warn)
  t.wait(
    "both servers settled",
    [[
    local r = require('gopi.chat').current().client:call('get_mcp_servers', {}, 2000) or {}
    if #(r.servers or {}) ~= 2 then return false end
    for _, s in ipairs(r.servers) do if s.state == 'connecting' then return false end end
    return true
  ]]
  )
  -- Each list of tools is kept as the user sees it (format_item's lines).
  t.lua([[
    _G.lists = {}
    vim.ui.select = function(items, o, cb)
      local lines = {}
      for _, it in ipairs(items) do table.insert(lines, o.format_item and o.format_item(it) or tostring(it)) end
      table.insert(_G.lists, { prompt = o.prompt, lines = lines })
      vim.schedule(function() cb(nil) end)
    end
  ]])
  t.cmd("GopiMcp")
  t.wait("the float", "return require('gopi.mcp').view ~= nil")
  local view = t.lua(mcp_view)
  ok(view.current, "the float has the cursor")
  eq(2, #view.lines, vim.inspect(view))
  ok(view.lines[1]:match("^broken%s+failed · direct — .*gopi%-no%-such%-mcp%-server"), view.lines[1])
  ok(view.lines[2]:match("^test%s+connected · direct · %d+ tools$"), view.lines[2])
  -- <CR> on test: its tools.
  t.input("j<CR>")
  t.wait("the tools' list", "return #_G.lists == 1")
  eq(vim.NIL, t.lua(mcp_view), "the float closed")
  local lists = t.lua("return _G.lists")
  local n = tonumber(view.lines[2]:match("(%d+) tools$"))
  eq(n, #lists[1].lines)
  eq("gopi: tools of MCP server test (connected, direct)", lists[1].prompt)
  local echo, slow
  for _, l in ipairs(lists[1].lines) do
    echo = echo or l:match("^echo%s+direct · read%-only  %(mcp__test__echo%)$")
    slow = slow or l:match("^slow%s+direct  %(mcp__test__slow%)$")
  end
  ok(echo and slow, vim.inspect(lists[1].lines))
  -- The failed one, from the prompt's /mcp: its error, and no list of tools.
  prompt(t, "/mcp")
  t.wait("the float again", "return require('gopi.mcp').view ~= nil")
  t.input("<CR>")
  local note = t.wait_note("the server's error", "MCP server broken failed to connect:\n")
  ok(note:find("^" .. vim.log.levels.ERROR .. " ") and note:find("gopi-no-such-mcp-server", 1, true), note)
  eq(1, t.lua("return #_G.lists"), "no list of tools")
  ok(not t.chat_has("/mcp"), "not sent to the model")
  -- q closes it.
  t.cmd("GopiMcp")
  t.wait("the float once more", "return require('gopi.mcp').view ~= nil")
  t.input("q")
  t.wait("the float closed", "return require('gopi.mcp').view == nil")
  -- :checkhealth gopi, with the chat running, shows both.
  t.cmd("checkhealth gopi")
  local text = table.concat(t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "\n")
  ok(text:find("gopi: MCP servers", 1, true), text)
  ok(text:match("OK test: connected · direct · %d+ tools"), text)
  ok(text:match("ERROR broken: failed · direct: [^\n]*gopi%-no%-such%-mcp%-server"), text)
end)

test(":GopiMcp follows gopi's mcp_server_state while open, without asking again; a failure warns once", function(t)
  local bin = mcp_server_binary()
  -- "late" connects once the test says so; "broken" fails.
  local gate = t.root .. "/go"
  local late = { command = "sh", args = { "-c", string.format("while [ ! -e '%s' ]; do sleep 0.05; done; exec '%s'", gate, bin) }, exposure = "deferred" }
  vim.fn.writefile({ vim.json.encode({ mcpServers = { late = late, broken = { command = "gopi-no-such-mcp-server" } } }) }, t.root .. "/agent/mcp.json")
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  t.wait_note("the warning", "MCP server broken failed: ")
  -- What the plugin asks gopi about MCP from here on (the status line's own
  -- refresh, get_state then get_session_stats, may still be under way).
  t.lua([[
    local c = require('gopi.chat').current().client
    _G.asked_gopi = {}
    local request = c.request
    c.request = function(self, command, ...)
      if command:find("mcp", 1, true) then
        table.insert(_G.asked_gopi, command)
      end
      return request(self, command, ...)
    end
  ]])
  t.cmd("GopiMcp")
  t.wait("the float", "return require('gopi.mcp').view ~= nil")
  local view = t.lua(mcp_view)
  ok(view.lines[2]:match("^late%s+connecting · deferred$"), vim.inspect(view.lines))
  vim.fn.writefile({}, gate)
  t.wait(
    "late connected in the float",
    "local v = require('gopi.mcp').view; return v ~= nil and vim.api.nvim_buf_get_lines(v.buf, 1, 2, false)[1]:match('^late%s+connected · deferred · %d+ tools$') ~= nil"
  )
  ok(t.lua(mcp_view).current, "the float kept the cursor")
  eq({ "get_mcp_servers" }, t.lua("return _G.asked_gopi"), "asked once, then told")
  -- One warning for the failure.
  local n = t.lua("local n = 0 for _, m in ipairs(_G.notes) do if m:find('MCP server broken failed: ', 1, true) then n = n + 1 end end return n")
  eq(1, n)
end)

test("gopi killed: the chat says so, and :GopiRestart goes on with the same conversation", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: before the crash")
  t.wait_chat("the reply", "\nbefore the crash")
  t.wait("the session file", "return require('gopi.chat').current().state.session_file ~= nil")
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
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  local start = uv.hrtime()
  prompt(t, "stream: 10000")
  local worst, samples = 0, 0
  while true do
    local t0 = uv.hrtime()
    local done = t.lua(
      "return require('gopi.chat').current().state.streaming == false and table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, -3, -1, false), ' '):find('9999 10000', 1, true) ~= nil"
    )
    local dt = (uv.hrtime() - t0) / 1e6
    worst, samples = math.max(worst, dt), samples + 1
    if done then
      break
    end
    ok((uv.hrtime() - start) / 1e6 < 120000, "the reply finished")
    vim.wait(5)
  end
  io.stdout:write(
    string.format(
      "# 10,000 deltas: %.0f ms to the end of the reply; the editor answered %d requests meanwhile, the slowest in %.1f ms\n",
      (uv.hrtime() - start) / 1e6,
      samples,
      worst
    )
  )
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
  eq({ "@src/server.go#L1-3 " }, t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)"), "the prompt")
end)

test(":GopiFork puts the message back in the prompt; :GopiClone and :GopiExport make files", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: worth keeping")
  t.wait_chat("the reply", "\nworth keeping")
  t.wait("the session file", "return require('gopi.chat').current().state.session_file ~= nil")
  local first = t.lua("return require('gopi.chat').current().state.session_file")
  t.lua("_G.answer = function(items) return items[1] end")
  t.cmd("GopiFork")
  t.wait(
    "the forked message in the prompt",
    "return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)[1] == 'reply: worth keeping'"
  )
  t.cmd("GopiClone")
  t.wait("a new session file", "local f = require('gopi.chat').current().state.session_file return f ~= nil and f ~= ...", first)
  t.lua("_G.notes = {} vim.notify = function(m) table.insert(_G.notes, m) end vim.ui.open = function() end")
  t.lua("_G.typed = ...", t.root .. "/exported.html")
  t.cmd("GopiExport")
  t.wait("the export", "for _, n in ipairs(_G.notes) do if n:find('exported to ', 1, true) then return true end end return false")
  local path = t.lua("for _, n in ipairs(_G.notes) do local p = n:match('exported to (.*)') if p then return p end end")
  eq(1, vim.fn.filereadable(path), "the HTML file")
end)

test("every command exists once plugin/gopi.lua is sourced, before :Gopi and without setup(); :help gopi resolves", function(t)
  -- What the plugin defines is all there is: each one a user command now.
  local want = {}
  for name in io.open(plugin .. "/plugin/gopi.lua"):read("*a"):gmatch('cmd%("(Gopi%w*)"') do
    table.insert(want, name)
  end
  ok(#want >= 15, "the commands read from plugin/gopi.lua: " .. vim.inspect(want))
  local have = t.lua("return vim.tbl_keys(vim.api.nvim_get_commands({}))")
  for _, name in ipairs(want) do
    ok(vim.tbl_contains(have, name), ":" .. name .. " is defined before :Gopi")
  end
  eq(false, t.lua("return package.loaded['gopi.chat'] ~= nil"), "nothing of the chat loaded yet")
  -- The shipped doc/tags: no :helptags needed.
  t.cmd("help gopi")
  eq("gopi.txt", t.lua("return vim.fn.expand('%:t')"), ":help gopi")
  t.cmd("help gopi-slash")
  t.cmd("help :GopiChanges")
  eq("help", t.lua("return vim.bo.buftype"), "a help buffer")
  -- :checkhealth gopi finds the plugin's health module.
  t.cmd("checkhealth gopi")
  local text = table.concat(t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "\n")
  ok(text:find("gopi", 1, true) and not text:find("No healthcheck found", 1, true), text)
end, { bare = true })

test("a gopi binary that is not there: one clear message, no traceback, no half-open chat", function(t)
  t.lua("require('gopi').setup({ cmd = ... })", t.root .. "/nowhere/gopi")
  local okcmd, err = pcall(t.cmd, "Gopi")
  ok(okcmd, "no error from :Gopi: " .. tostring(err))
  local notes = t.lua("return _G.notes")
  eq(1, #notes, "one message: " .. vim.inspect(notes))
  ok(notes[1]:find("^" .. t.lua("return vim.log.levels.ERROR") .. " "), "an error: " .. notes[1])
  ok(
    notes[1]:find("nowhere/gopi", 1, true) and notes[1]:find("make build", 1, true) and notes[1]:find("PATH", 1, true),
    "what is missing and how to get it: " .. notes[1]
  )
  eq(1, t.lua("return #vim.api.nvim_tabpage_list_wins(0)"), "no chat windows")
  -- Other commands too, each with one message.
  pcall(t.cmd, "GopiModel")
  pcall(t.cmd, "Gopi hello")
  eq(3, #t.lua("return _G.notes"), "one message per command")
  local msgs = t.lua("return vim.api.nvim_exec2('messages', { output = true }).output")
  ok(not msgs:find("stack traceback", 1, true) and not msgs:find("E5108", 1, true), ":messages: " .. msgs)
end)

test("built-in slash commands run in the editor: /new, /compact, /model, /thinking, /export, /help; / completes them", function(t)
  -- Short messages are enough to compact.
  vim.fn.writefile({ vim.fn.json_encode({ compaction = { enabled = false, keepRecentTokens = 10 } }) }, t.root .. "/agent/settings.json")
  vim.fn.mkdir(t.root .. "/agent/prompts", "p")
  vim.fn.writefile({ "---", "description: Review the change", "---", "Review it." }, t.root .. "/agent/prompts/review.md")
  t.cmd("Gopi")
  t.wait("the commands", "return #require('gopi.complete').commands > 0")
  local words = vim.tbl_map(function(i)
    return i.word
  end, t.lua("return require('gopi.complete').items('/')"))
  for _, w in ipairs({ "/new", "/compact", "/model", "/fork", "/resume", "/export", "/help", "/review" }) do
    ok(vim.tbl_contains(words, w), w .. " offered: " .. vim.inspect(words))
  end
  prompt(t, "reply: kept until /new")
  t.wait_chat("the reply", "\nkept until /new")
  t.wait("settled", settled)
  t.wait("the session file", "return require('gopi.chat').current().state.session_file ~= nil")
  local first = t.lua("return require('gopi.chat').current().state.session_file")
  prompt(t, "reply: a second turn")
  t.wait_chat("the reply", "\na second turn")
  t.wait("settled", settled)
  -- /compact compacts (the summary replaces the earlier messages).
  prompt(t, "/compact")
  t.wait(
    "compacted",
    "local r = require('gopi.chat').current().client:call('get_messages') for _, m in ipairs(r.messages) do if m.role == 'compactionSummary' then return true end end return false"
  )
  eq("", t.lua("return table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false))"), "the prompt emptied")
  -- /model and /thinking with arguments.
  prompt(t, "/model faux/faux-1")
  t.wait("the model", "return require('gopi.chat').current().client:call('get_state').model.id == 'faux-1'")
  prompt(t, "/thinking high")
  t.wait("the thinking level", "return require('gopi.chat').current().client:call('get_state').thinkingLevel == 'high'")
  -- /help lists them.
  prompt(t, "/help")
  t.wait_note("the help", "/compact")
  -- /export asks where (answered here), writes and opens it.
  t.lua("_G.opened = nil vim.ui.open = function(p) _G.opened = p end _G.typed = ...", t.root .. "/slash.html")
  prompt(t, "/export")
  t.wait("opened", "return _G.opened ~= nil")
  eq(1, vim.fn.filereadable(t.root .. "/slash.html"), "exported")
  -- /new: a new session, the chat emptied.
  prompt(t, "/new")
  t.wait("a new session", "local f = require('gopi.chat').current().client:call('get_state').sessionFile return f ~= nil and f ~= ...", first)
  t.wait("an empty chat", "return #table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '') == 0")
  -- None of them went to the model as text.
  local msgs = t.lua("return require('gopi.chat').current().client:call('get_messages').messages")
  eq(0, #msgs, "the new session is empty")
  ok(not t.chat_has("/new") and not t.chat_has("/help"), "no slash command in the chat")
end)

test("@file and :GopiAdd carry the file's content (a buffer's unsaved changes too), shown as a chip", function(t)
  vim.fn.writefile({ "package main", "", "func main() {}" }, t.work .. "/main.go")
  vim.fn.writefile({ "one", "two", "three", "four" }, t.work .. "/notes.txt")
  t.cmd("edit main.go")
  -- An unsaved change.
  t.lua("vim.api.nvim_buf_set_lines(0, 2, 3, false, { 'func main() { println(\"unsaved\") }' })")
  eq(true, t.lua("return vim.bo.modified"), "modified")
  t.cmd("Gopi")
  -- (No directive: faux answers without repeating the message.)
  prompt(t, "explain @main.go, and @notes.txt.")
  -- What gopi's session holds: the user messages' text.
  local users = [[
    local out = {}
    for _, m in ipairs(require('gopi.chat').current().client:call('get_messages').messages) do
      if m.role == 'user' then table.insert(out, require('gopi.render').content_text(m.content)) end
    end
    return out
  ]]
  t.wait_chat("the reply", "## gopi")
  t.wait("settled", settled)
  local user = t.lua(users)[1]
  ok(user:find('println("unsaved")', 1, true), "the unsaved line reached gopi:\n" .. user)
  ok(user:find('<file path="main.go">', 1, true) and user:find("package main", 1, true), "main.go's content:\n" .. user)
  ok(user:find("three\nfour", 1, true), "notes.txt from disk:\n" .. user)
  ok(t.chat_has("[@main.go (3 lines)]") and t.chat_has("[@notes.txt (4 lines)]"), "the chips:\n" .. table.concat(t.chat(), "\n"))
  ok(not t.chat_has("package main"), "not the content in the chat:\n" .. table.concat(t.chat(), "\n"))
  -- :GopiAdd with a range: those lines only.
  t.lua("vim.api.nvim_set_current_win(vim.fn.win_getid(1))")
  t.cmd("edit notes.txt")
  t.cmd("2,3GopiAdd")
  eq({ "@notes.txt#L2-3 " }, t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)"), "the prompt")
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().prompt))")
  t.input("<Esc>Awhat is this<Esc><CR>")
  t.wait(
    "the second reply",
    "return #vim.fn.split(table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '\\n'), '## gopi', 1) >= 3"
  )
  t.wait("settled", settled)
  local second = t.lua(users)[2]
  ok(second:find('<file path="notes.txt" lines="2-3">\n```\ntwo\nthree\n```', 1, true), "the range's lines:\n" .. second)
  ok(t.chat_has("[@notes.txt#L2-3 (2 lines)]"), "the range's chip:\n" .. table.concat(t.chat(), "\n"))
end)

test("#buffer (unsaved), #selection, #diagnostics, #quickfix and #diff reach gopi as content, shown as chips", function(t)
  local function git(...)
    local r = vim.system({ "git", "-c", "user.name=t", "-c", "user.email=t@t", ... }, { cwd = t.work }):wait()
    assert(r.code == 0, r.stderr)
  end
  vim.fn.writefile({ "package main", "", "func main() {}" }, t.work .. "/main.go")
  vim.fn.writefile({ "committed" }, t.work .. "/notes.txt")
  git("init", "-q")
  git("add", ".")
  git("commit", "-q", "-m", "one")
  vim.fn.writefile({ "changed on disk" }, t.work .. "/notes.txt")
  t.cmd("edit main.go")
  -- An unsaved change, a diagnostic, a selection and a quickfix list.
  t.lua("vim.api.nvim_buf_set_lines(0, 2, 3, false, { 'func main() { println(\"unsaved\") }' })")
  t.lua([[
    local ns = vim.api.nvim_create_namespace("test")
    vim.diagnostic.set(ns, 0, { { lnum = 2, col = 5, severity = vim.diagnostic.severity.ERROR, message = "main redeclared", source = "compiler" } })
    vim.fn.setqflist({}, " ", { title = "grep", items = { { filename = "notes.txt", lnum = 1, col = 1, text = "changed here" } } })
  ]])
  t.input("1GVj<Esc>")
  t.cmd("Gopi")
  -- <C-x><C-u> in the prompt completes a # name (after a space: what
  -- Neovim's second call to 'completefunc' leaves of the line is used).
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().prompt))")
  t.input("<Esc>ccsee #quick<C-x><C-u><Esc>")
  t.wait("#quickfix completed", "return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)[1] == 'see #quickfix'")
  prompt(t, "look: #buffer #selection #diagnostics #quickfix #diff")
  local users = [[
    local out = {}
    for _, m in ipairs(require('gopi.chat').current().client:call('get_messages').messages) do
      if m.role == 'user' then table.insert(out, require('gopi.render').content_text(m.content)) end
    end
    return out
  ]]
  t.wait_chat("the reply", "## gopi")
  t.wait("settled", settled)
  local user = t.lua(users)[1]
  ok(
    user:find('<buffer path="main.go" modified="true">\n```go\npackage main\n\nfunc main() { println("unsaved") }\n```\n</buffer>', 1, true),
    "#buffer with the unsaved line:\n" .. user
  )
  ok(user:find('<selection path="main.go" lines="1-2">\n```go\npackage main\n\n```\n</selection>', 1, true), "#selection:\n" .. user)
  ok(user:find('<diagnostics path="main.go" count="1">\n```\nmain.go:3:6: ERROR: main redeclared [compiler]\n```', 1, true), "#diagnostics:\n" .. user)
  ok(user:find('<quickfix title="grep" count="1">\n```\nnotes.txt:1:1: changed here\n```', 1, true), "#quickfix:\n" .. user)
  ok(
    user:find('<diff files="1">\n```diff\ndiff --git a/notes.txt b/notes.txt', 1, true) and user:find("\n-committed\n+changed on disk\n", 1, true),
    "#diff:\n" .. user
  )
  local shown = table.concat(t.chat(), "\n")
  for _, c in ipairs({
    "[#buffer main.go (3 lines, unsaved)]",
    "[#selection main.go#L1-2 (2 lines)]",
    "[#diagnostics 1]",
    "[#quickfix 1]",
    "[#diff 1 file (7 lines)]",
  }) do
    ok(shown:find(c, 1, true), c .. " in the chat:\n" .. shown)
  end
  ok(not shown:find("main redeclared", 1, true) and not shown:find("diff --git", 1, true), "no content in the chat:\n" .. shown)
end)

test(":GopiChanges lists the changed files at their first change; :GopiChanges FILE shows its diff", function(t)
  vim.fn.writefile({ "first", "hello world", "last" }, t.work .. "/a.txt")
  t.cmd("Gopi")
  prompt(t, "edit: a.txt :: hello => bye")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false and next(require('gopi.chat').current().state.changed) ~= nil")
  eq({ "first", "bye world", "last" }, vim.fn.readfile(t.work .. "/a.txt"), "edited")
  t.cmd("GopiChanges")
  t.wait("the quickfix list", "return #vim.fn.getqflist() == 1")
  local item = t.lua("local i = vim.fn.getqflist()[1] return { name = vim.fn.bufname(i.bnr or i.bufnr), lnum = i.lnum, text = i.text }")
  eq("a.txt", item.name, "the file")
  eq(2, item.lnum, "its first changed line")
  ok(item.text:find("+1 -1", 1, true), item.text)
  eq({ "a.txt" }, t.lua("return vim.fn.getcompletion('GopiChanges ', 'cmdline')"), "completion")
  t.cmd("GopiChanges a.txt")
  t.wait("the diff tab", "return #vim.api.nvim_list_tabpages() == 2")
  local sides = t.lua([[
    local out = {}
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local b = vim.api.nvim_win_get_buf(w)
      table.insert(out, { name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':.'), diff = vim.wo[w].diff, lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) })
    end
    return out
  ]])
  eq(2, #sides, "two windows")
  eq({ "first", "hello world", "last" }, sides[1].lines, "before the run, on the left")
  ok(sides[1].name:find("gopi://before/a.txt", 1, true), sides[1].name)
  eq({ "first", "bye world", "last" }, sides[2].lines, "the file, on the right")
  eq("a.txt", sides[2].name, "the file's own buffer")
  ok(sides[1].diff and sides[2].diff, "in diff mode")
end, { approval = "off" })

--- Makes t.work a git work tree with its files committed: gopi records
--- checkpoints there.
local function git_repo(t, files)
  for name, lines in pairs(files) do
    vim.fn.writefile(lines, t.work .. "/" .. name)
  end
  for _, c in ipairs({
    { "git", "init", "-q" },
    { "git", "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A" },
    { "git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "start" },
  }) do
    local r = vim.system(c, { cwd = t.work }):wait()
    eq(0, r.code, table.concat(c, " ") .. ": " .. (r.stderr or ""))
  end
end

test(":GopiRewind: the checkpoints newest first, the diff, code and conversation restored, buffers loaded again (not a modified one), undo", function(t)
  git_repo(t, { ["a.txt"] = { "one", "two" }, ["b.txt"] = { "bee" } })
  t.cmd("edit a.txt")
  t.cmd("Gopi")
  prompt(t, "edit: a.txt :: two => TWO")
  t.wait("the first run", "return vim.fn.readfile(...)[2] == 'TWO' and require('gopi.chat').current().state.streaming == false", t.work .. "/a.txt")
  prompt(t, "write: c.txt :: new file")
  t.wait("the second run", "return vim.fn.filereadable(...) == 1 and require('gopi.chat').current().state.streaming == false", t.work .. "/c.txt")
  t.wait_chat("the second reply", "write: c.txt")
  -- The buffer of a.txt followed the edit; b.txt gets changes of the user's.
  eq({ "one", "TWO" }, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)"), "a.txt's buffer after the edit")
  vim.fn.writefile({ "bee", "changed outside" }, t.work .. "/b.txt")
  t.lua([[
    local b = vim.fn.bufadd("b.txt")
    vim.fn.bufload(b)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, { "mine, unsaved" })
  ]])
  -- The list: newest first, with the message's first line and the file
  -- count (waited for here however busy the machine).
  t.lua([[
    require("gopi.rewind").count_wait = 15000
    _G.lists = {}
    _G.answer = function(items, prompt)
      if prompt == "gopi: rewind to" then
        local shown = {}
        for _, cp in ipairs(items) do table.insert(shown, _G.fmt(cp)) end
        table.insert(_G.lists, shown)
        return items[2]
      elseif prompt == "gopi: rewind what?" then
        for _, c in ipairs(items) do if c.restore == _G.what then return c end end
      else
        _G.confirm = prompt
        return "Rewind"
      end
    end
    local select = vim.ui.select
    vim.ui.select = function(items, o, cb)
      _G.fmt = o.format_item
      return select(items, o, cb)
    end
  ]])
  t.lua("_G.what = 'both'")
  t.cmd("GopiRewind")
  t.wait("the list", "return #_G.lists == 1")
  local list = t.lua("return _G.lists[1]")
  eq(2, #list, "two checkpoints: " .. vim.inspect(list))
  ok(
    list[1]:find("prompt", 1, true) and list[1]:find("write: c.txt :: new file", 1, true) and list[1]:find("(2 files)", 1, true),
    "the newest first: " .. list[1]
  )
  ok(list[2]:find("edit: a.txt :: two => TWO", 1, true) and list[2]:find("(3 files)", 1, true), "the oldest last: " .. list[2])
  ok(list[1]:match("^%d%d:%d%d:%d%d  "), "its time: " .. list[1])
  -- The preview: filetype diff, the files, the unified diffs.
  t.wait("restored", "return vim.fn.readfile(...)[2] == 'two'", t.work .. "/a.txt")
  ok(
    t.lua("return _G.confirm"):find('3 files back and the conversation to before "edit: a.txt :: two => TWO"', 1, true),
    "the question: " .. t.lua("return _G.confirm")
  )
  -- The restore writes one file after another: wait for each.
  t.wait("c.txt, added since, removed", "return vim.fn.filereadable(...) == 0", t.work .. "/c.txt")
  t.wait("b.txt restored on disk", "return vim.fn.readfile(...)[1] == 'bee'", t.work .. "/b.txt")
  -- a.txt's buffer, with nothing unsaved, shows the file; b.txt's is kept, with a warning.
  t.wait("a.txt's buffer loaded again", "return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)[2] == 'two'")
  eq({ "mine, unsaved" }, t.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr('b.txt'), 0, -1, false)"), "b.txt's buffer kept")
  ok(t.lua("return vim.bo[vim.fn.bufnr('b.txt')].modified"), "b.txt's buffer still modified")
  local warn = t.wait_note("the warning", "b.txt changed on disk (rewind)")
  ok(vim.startswith(warn, tostring(vim.log.levels.WARN) .. " "), warn)
  -- The conversation: back to before the first message, which is in the prompt.
  t.wait(
    "the message in the prompt",
    "return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)[1] == 'edit: a.txt :: two => TWO'"
  )
  t.wait(
    "the chat shown again",
    "return not table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '\\n'):find('c.txt', 1, true)"
  )
  t.wait_note("the summary", "rewound to ")
  eq(1, t.lua("return #vim.api.nvim_list_tabpages()"), "the preview closed")
  -- Undo: the files and the conversation as they were; the message leaves the prompt.
  t.cmd("GopiRewind undo")
  t.wait("undone", "return vim.fn.filereadable(...) == 1", t.work .. "/c.txt")
  eq({ "one", "TWO" }, vim.fn.readfile(t.work .. "/a.txt"), "a.txt after the undo")
  t.wait("a.txt's buffer after the undo", "return vim.api.nvim_buf_get_lines(vim.fn.bufnr('a.txt'), 0, -1, false)[2] == 'TWO'")
  eq({ "bee", "changed outside" }, vim.fn.readfile(t.work .. "/b.txt"), "b.txt after the undo")
  t.wait_chat("the conversation back", "write: c.txt")
  eq({ "" }, t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)"), "the prompt emptied")
  t.wait_note("undone said", "rewind undone")
end, { approval = "off" })

test(":GopiRewind: the preview shows the diff; dismissing the question keeps it, its key asks again; code only leaves the chat", function(t)
  git_repo(t, { ["a.txt"] = { "one", "two" } })
  t.cmd("Gopi")
  prompt(t, "edit: a.txt :: two => TWO")
  t.wait("the run", "return vim.fn.readfile(...)[2] == 'TWO' and require('gopi.chat').current().state.streaming == false", t.work .. "/a.txt")
  t.wait_chat("the reply", "a.txt")
  t.lua([[
    _G.answer = function(items, prompt)
      if prompt == "gopi: rewind to" then return items[1] end
      if prompt == "gopi: rewind what?" then
        for _, c in ipairs(items) do if c.restore == _G.what then return c end end
      end
      return _G.what and "Rewind" or nil
    end
  ]])
  t.cmd("GopiRewind")
  t.wait("the preview", "return vim.bo.filetype == 'diff' and vim.api.nvim_buf_get_name(0):find('gopi://rewind/', 1, true) ~= nil")
  t.wait("asked and dismissed", "return vim.tbl_contains(_G.asked, 'gopi: rewind what?')")
  local lines = t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
  local text = table.concat(lines, "\n")
  ok(text:find("Rewind to %d%d:%d%d:%d%d %(prompt%): edit: a.txt :: two => TWO"), text)
  ok(text:find("  modified  a.txt", 1, true), text)
  ok(text:find("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO", 1, true), text)
  eq(2, t.lua("return #vim.api.nvim_list_tabpages()"), "the preview stays")
  eq({ "one", "TWO" }, vim.fn.readfile(t.work .. "/a.txt"), "nothing restored yet")
  -- Its key asks again: code only.
  t.lua("_G.what = 'code'")
  t.input("<CR>")
  t.wait("restored", "return vim.fn.readfile(...)[2] == 'two'", t.work .. "/a.txt")
  local said = t.wait_note("the summary", "rewound to ")
  ok(said:find(": 1 file (:GopiRewind undo takes it back)", 1, true), said)
  eq(1, t.lua("return #vim.api.nvim_list_tabpages()"), "the preview closed")
  ok(t.chat_has("two => TWO"), "the conversation stays")
  eq({ "" }, t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)"), "nothing in the prompt")
end, { approval = "off" })

test(":GopiExport asks where (a temporary file by default, not the project), writes there and opens it", function(t)
  t.cmd("Gopi")
  prompt(t, "reply: to export")
  t.wait_chat("the reply", "\nto export")
  t.wait("settled", settled)
  t.lua("_G.opened = nil vim.ui.open = function(p) _G.opened = p end _G.typed = nil")
  t.cmd("GopiExport")
  t.wait("asked", "return #_G.inputs == 1")
  local default = t.lua("return _G.inputs[1].default")
  ok(default:find("%.html$") and not vim.startswith(default, t.work), "a default out of the project: " .. default)
  ok(
    vim.startswith(vim.fn.resolve(default), vim.fn.resolve((vim.uv or vim.loop).os_tmpdir()))
      or vim.startswith(default, t.lua("return (vim.uv or vim.loop).os_tmpdir()")),
    "in the temporary directory: " .. default
  )
  vim.wait(300)
  eq(true, t.lua("return _G.opened == nil"), "dismissed: nothing written")
  t.lua("_G.typed = ...", t.root .. "/out/session.html")
  t.cmd("GopiExport")
  t.wait("opened", "return _G.opened ~= nil")
  eq(t.root .. "/out/session.html", t.lua("return _G.opened"), "opened")
  eq(1, vim.fn.filereadable(t.root .. "/out/session.html"), "written")
  eq({}, vim.fn.glob(t.work .. "/*.html", false, true), "nothing in the project")
  vim.fn.delete(default)
end)

test(":GopiModel and :GopiThinking complete their arguments", function(t)
  t.cmd("Gopi")
  t.wait("gopi started", "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true")
  local models = t.lua("return vim.fn.getcompletion('GopiModel faux/', 'cmdline')")
  ok(vim.tbl_contains(models, "faux/faux-1") and vim.tbl_contains(models, "faux/faux-fast"), vim.inspect(models))
  eq({ "faux/faux-1" }, t.lua("return vim.fn.getcompletion('GopiModel faux-1', 'cmdline')"), "by the id alone")
  eq({ "high" }, t.lua("return vim.fn.getcompletion('GopiThinking hi', 'cmdline')"), "a level")
  eq(6, #t.lua("return vim.fn.getcompletion('GopiThinking ', 'cmdline')"), "all levels")
end)

test("the chat as a float", function(t)
  t.cmd("Gopi")
  local floats = t.lua(
    "local n = 0 for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do if vim.api.nvim_win_get_config(w).relative ~= '' then n = n + 1 end end return n"
  )
  eq(2, floats, "the chat and the prompt float")
  prompt(t, "reply: afloat")
  t.wait_chat("the reply", "\nafloat")
end, { setup = { chat = { layout = "float" } } })

test("buffers of files gopi changes are loaded again; one with unsaved changes is kept, with a warning", function(t)
  vim.fn.writefile({ "hello" }, t.work .. "/a.txt")
  vim.fn.writefile({ "one" }, t.work .. "/b.txt")
  vim.fn.writefile({ "keep" }, t.work .. "/c.txt")
  vim.fn.writefile({ "more" }, t.work .. "/d.txt")
  t.cmd("edit c.txt")
  t.cmd("edit d.txt")
  t.cmd("edit b.txt")
  t.cmd("edit a.txt")
  local lines = "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)"
  t.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr('c.txt'), 0, -1, false, { 'mine' })")
  t.lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr('d.txt'), 0, -1, false, { 'mine too' })")
  t.cmd("Gopi")
  -- edit: the open file's buffer shows gopi's change, and :w keeps it.
  prompt(t, "edit: a.txt :: hello => bye")
  t.wait("a.txt loaded again", "return (" .. lines:sub(8) .. ")[1] == 'bye'", "a.txt")
  eq(false, t.lua("return vim.bo[vim.fn.bufnr('a.txt')].modified"), "a.txt unmodified")
  t.lua("vim.api.nvim_buf_call(vim.fn.bufnr('a.txt'), function() vim.cmd('write') end)")
  eq({ "bye" }, vim.fn.readfile(t.work .. "/a.txt"), ":w keeps gopi's change")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  -- bash: every buffer whose file it changed.
  prompt(t, "bash: echo two > b.txt")
  t.wait("b.txt loaded again", "return (" .. lines:sub(8) .. ")[1] == 'two'", "b.txt")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  -- write over unsaved changes: the buffer is kept, and the user warned.
  prompt(t, "write: c.txt :: theirs")
  local warning = t.wait_note("the warning", "c.txt changed on disk")
  eq(tostring(t.lua("return vim.log.levels.WARN")), warning:match("^%d+"), "a warning")
  eq({ "mine" }, t.lua(lines, "c.txt"), "the unsaved changes kept")
  eq(true, t.lua("return vim.bo[vim.fn.bufnr('c.txt')].modified"), "still modified")
  eq({ "theirs" }, vim.fn.readfile(t.work .. "/c.txt"), "gopi's file on disk")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  -- bash over unsaved changes: the same.
  prompt(t, "bash: echo changed > d.txt")
  t.wait_note("the warning", "d.txt changed on disk")
  eq({ "mine too" }, t.lua(lines, "d.txt"), "the unsaved changes kept")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  -- A buffer of a file not there yet: gopi's new file is loaded (without
  -- Neovim's "created after editing started" question).
  t.cmd("wincmd t")
  t.cmd("edit new.txt")
  prompt(t, "write: new.txt :: fresh")
  t.wait("new.txt loaded", "return (" .. lines:sub(8) .. ")[1] == 'fresh'", "new.txt")
  eq("n", t.lua("return vim.api.nvim_get_mode().mode"), "no question pending")
end, { approval = "off" })

test("after a compaction the window bar still shows how full the context is (estimated)", function(t)
  -- A small session is compacted when little of it is kept.
  vim.fn.writefile({ vim.fn.json_encode({ compaction = { keepRecentTokens = 50 } }) }, t.root .. "/agent/settings.json")
  t.cmd("Gopi")
  stream(t, 400)
  stream(t, 300)
  t.wait("the context's size", "return require('gopi.chat').current().state.status.percent ~= nil")
  local bar = "return vim.wo[vim.fn.bufwinid(require('gopi.chat').current().buf)].winbar"
  ok(t.lua(bar):find("%d+%%%%"), "the context's percent before: " .. t.lua(bar))
  t.cmd("GopiCompact")
  t.wait_chat("the compaction", "the context was compacted")
  t.wait("the estimate", "return require('gopi.chat').current().state.status.estimated == true")
  ok(t.lua(bar):find(" · ~%d+%%%%"), "the context's estimated percent after: " .. t.lua(bar))
  local pct = t.lua("return require('gopi.chat').current().state.status.percent")
  ok(pct > 0 and pct < 100, "an estimate: " .. tostring(pct))
  -- The next reply reports the size again.
  prompt(t, "reply: after")
  t.wait(
    "the size reported",
    "local s = require('gopi.chat').current().state return s.streaming == false and s.status.estimated == nil and s.status.percent ~= nil"
  )
  ok(t.lua(bar):find(" · %d+%%%%"), "the context's percent after a reply: " .. t.lua(bar))
end)

--- The chat's window and the prompt's, and how many windows the tab has.
local function panes(t)
  return t.lua([[
    local s = require("gopi.chat").current()
    local c, p = vim.fn.bufwinid(s.buf), vim.fn.bufwinid(s.prompt)
    return { chat = c ~= -1, prompt = p ~= -1, wins = #vim.api.nvim_tabpage_list_wins(0) }
  ]])
end

test("a half-closed chat: after :q in the chat's window or the prompt's, one :Gopi opens it whole", function(t)
  t.cmd("Gopi")
  eq({ chat = true, prompt = true, wins = 3 }, panes(t), "opened")
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().buf))")
  t.cmd("q")
  eq({ chat = false, prompt = true, wins = 2 }, panes(t), "the chat's window closed")
  t.cmd("Gopi")
  eq({ chat = true, prompt = true, wins = 3 }, panes(t), "one :Gopi after the chat's window closed")
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().prompt))")
  t.cmd("q")
  eq({ chat = true, prompt = false, wins = 2 }, panes(t), "the prompt's window closed")
  t.cmd("Gopi")
  eq({ chat = true, prompt = true, wins = 3 }, panes(t), "one :Gopi after the prompt's window closed")
  t.cmd("Gopi")
  eq({ chat = false, prompt = false, wins = 1 }, panes(t), "a whole chat closes")
  -- Left alone in a tab of its own, the prompt's window makes room.
  t.cmd("tabnew")
  t.cmd("Gopi")
  t.cmd("only")
  eq({ chat = false, prompt = true, wins = 1 }, panes(t), "the prompt's window alone in the tab")
  t.cmd("Gopi")
  eq({ chat = true, prompt = true, wins = 3 }, panes(t), "reopened whole in that tab")
  eq(2, t.lua("return #vim.api.nvim_list_tabpages()"), "the tab stays")
end)

test("the chat keeps its configured width when the editor is resized", function(t)
  t.lua("vim.o.columns = 160 vim.o.lines = 45")
  t.cmd("Gopi")
  local width = "return vim.api.nvim_win_get_width(vim.fn.bufwinid(require('gopi.chat').current().buf))"
  eq(64, t.lua(width), "0.4 of 160 columns")
  t.lua("vim.o.columns = 100 vim.o.lines = 30")
  t.wait("the chat at 0.4 of 100 columns", "return " .. width:sub(8) .. " == 40")
  eq(5, t.lua("return vim.api.nvim_win_get_height(vim.fn.bufwinid(require('gopi.chat').current().prompt))"), "the prompt's height")
  t.lua("vim.o.columns = 200")
  t.wait("the chat at 0.4 of 200 columns", "return " .. width:sub(8) .. " == 80")
  eq(true, t.lua("return vim.wo[vim.fn.bufwinid(require('gopi.chat').current().buf)].winfixwidth"), "winfixwidth")
end)

--- What the chat's window shows: its rows as on screen.
local function chat_view(t)
  return t.lua([[
    vim.cmd("redraw!")
    local win = vim.fn.bufwinid(require("gopi.chat").current().buf)
    local pos = vim.fn.win_screenpos(win)
    local rows = {}
    for r = pos[1], pos[1] + vim.api.nvim_win_get_height(win) - 1 do
      local cells = {}
      for c = pos[2], pos[2] + vim.api.nvim_win_get_width(win) - 1 do
        cells[#cells + 1] = vim.fn.screenstring(r, c)
      end
      rows[#rows + 1] = table.concat(cells)
    end
    return table.concat(rows, "\n")
  ]])
end

test("the chat follows a reply longer than its window, unless scrolled up; it follows again at the end", function(t)
  t.cmd("Gopi")
  stream(t, 3000)
  local view = chat_view(t)
  ok(view:find("2999 3000", 1, true), "the end of the reply on screen:\n" .. view)
  -- Scrolled up (with the cursor in the prompt), it stays where it was.
  t.lua(
    "local w = vim.fn.bufwinid(require('gopi.chat').current().buf) vim.api.nvim_win_call(w, function() vim.fn.winrestview({ topline = 1, skipcol = 0 }) end)"
  )
  t.cmd("redraw")
  stream(t, 2000)
  eq(
    1,
    t.lua("local w = vim.fn.bufwinid(require('gopi.chat').current().buf) return vim.api.nvim_win_call(w, vim.fn.winsaveview).topline"),
    "the view stays at the top"
  )
  view = chat_view(t)
  ok(view:find("## You", 1, true) and not view:find("1999 2000", 1, true), "the top stays on screen:\n" .. view)
  -- Back at the end, it follows again.
  t.lua("local w = vim.fn.bufwinid(require('gopi.chat').current().buf) vim.api.nvim_win_call(w, function() vim.cmd('normal! G$') end)")
  t.cmd("redraw")
  stream(t, 1500)
  view = chat_view(t)
  ok(view:find("1499 1500", 1, true), "the end of the third reply on screen:\n" .. view)
  -- With the cursor in the chat's window: it follows from the last line,
  -- and not from further up.
  local settle =
    "local s = require('gopi.chat').current() local l = vim.api.nvim_buf_get_lines(s.buf, -2, -1, false)[1] return s.state.streaming == false and l:sub(-#(...)) == (...)"
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().buf))")
  t.cmd("normal! G")
  t.cmd("Gopi stream: 1200")
  t.wait("the fourth reply", settle, " 1199 1200")
  view = chat_view(t)
  ok(view:find("1199 1200", 1, true), "the end of the fourth reply on screen:\n" .. view)
  t.cmd("normal! gg")
  t.cmd("Gopi stream: 900")
  t.wait("the fifth reply", settle, " 899 900")
  eq(1, t.lua("return vim.fn.line('.')"), "the cursor stays on the first line")
end)

test("a session resumed (:GopiSessions) or restarted (:GopiRestart) opens at its end", function(t)
  t.cmd("Gopi")
  prompt(t, "stream: 2500")
  t.wait_chat("the reply", "2499 2500")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  t.cmd("GopiNew")
  t.wait("an empty chat", "return #table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '') == 0")
  t.lua("_G.answer = function(items) for _, s in ipairs(items) do if (s.firstMessage or ''):find('stream: 2500', 1, true) then return s end end end")
  t.cmd("GopiSessions")
  t.wait_chat("the resumed history", "2499 2500")
  local view = chat_view(t)
  ok(view:find("2499 2500", 1, true), "the end of the resumed session on screen:\n" .. view)
  t.lua(
    "local w = vim.fn.bufwinid(require('gopi.chat').current().buf) vim.api.nvim_win_call(w, function() vim.fn.winrestview({ topline = 1, skipcol = 0 }) end)"
  )
  t.cmd("GopiRestart")
  t.wait(
    "the history again",
    "local s = require('gopi.chat').current() return s.client and s.client.ready and table.concat(vim.api.nvim_buf_get_lines(s.buf, 0, -1, false), '\\n'):find('2499 2500', 1, true) ~= nil"
  )
  view = chat_view(t)
  ok(view:find("2499 2500", 1, true), "the end of the restarted session on screen:\n" .. view)
end)

-- pi extensions' UI, from pi's example rpc-demo.ts: at session start it sets a
-- title, a widget and a status; each turn updates the status; /rpc-input,
-- /rpc-editor and /rpc-prefill ask through input and editor dialogs and set
-- the prompt's text; a dangerous bash command asks with select, a new session
-- with confirm; each outcome comes back as a notify.
local function ext_started(t)
  ok(vim.fn.filereadable(vim.env.GOPI_PI_EXAMPLES .. "/rpc-demo.ts") == 1, "rpc-demo.ts in GOPI_PI_EXAMPLES=" .. vim.env.GOPI_PI_EXAMPLES)
  -- Wide enough for the window bar and the statusline to show all they have.
  t.lua("vim.o.columns = 200 vim.o.lines = 40")
  t.lua("vim.o.laststatus = 2 vim.o.statusline = \"%!v:lua.require'gopi'.status()\"")
  t.cmd("Gopi")
  t.wait("rpc-demo's first status", "return require('gopi').status():find('Turns: 0', 1, true) ~= nil")
end

test("extensions: setStatus in the statusline, setWidget above the prompt, setTitle in the window bar", function(t)
  ext_started(t)
  -- The status component: gopi's own parts, then the extension's text.
  local st = t.lua("return require('gopi').status()")
  ok(st:find("^gopi · faux%-fast.* · Turns: 0$"), "the status: " .. st)
  -- The title, in the chat window's bar.
  t.wait("the title", "return vim.wo[vim.fn.bufwinid(require('gopi.chat').current().buf)].winbar:find('pi RPC Demo', 1, true) ~= nil")
  -- The widget: virtual lines above the prompt's text, on screen.
  t.wait("the widget", "return #vim.api.nvim_buf_get_extmarks(require('gopi.chat').current().prompt, -1, 0, -1, {}) > 0")
  local virt = t.lua([[
    local s = require('gopi.chat').current()
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(s.prompt, -1, 0, -1, { details = true })) do
      if m[4].virt_lines_above then
        for _, vl in ipairs(m[4].virt_lines or {}) do table.insert(out, vl[1][1]) end
      end
    end
    return out
  ]])
  eq({ "--- RPC Extension UI Demo ---", "Loaded and ready." }, virt, "the widget's lines above the prompt")
  local screen = t.screen()
  local shown = table.concat(screen, "\n")
  local w1, w2 = find_row(screen, "--- RPC Extension UI Demo ---"), find_row(screen, "Loaded and ready.")
  ok(w1 and w2 == w1 + 1, "the widget on screen, its lines in order:\n" .. shown)
  ok(find_row(screen, "pi RPC Demo"), "the title on screen:\n" .. shown)
  ok(find_row(screen, "Turns: 0"), "the status on screen:\n" .. shown)
  -- A turn: the status follows it (turn_start, turn_end).
  prompt(t, "reply: one turn")
  t.wait_chat("the reply", "\none turn")
  t.wait("the turn's status", "return require('gopi').status():find(' · Turn 1 done$') ~= nil")
  screen = t.screen()
  ok(find_row(screen, "Loaded and ready."), "the widget stays above the prompt once it was used:\n" .. table.concat(screen, "\n"))
  -- The statusline (of the bottom windows) shows the component as it reads:
  -- the context's percent sign too, which a statusline would take as an item
  -- if the component did not double it.
  -- The turn's status can come before the run has ended (the spinner still
  -- leads the component then): wait for the run's end.
  t.wait("the status once the run ended", [[return require('gopi.chat').current():status_text():find("^gopi · faux%-fast · %d+%% · Turn 1 done$") ~= nil]])
  local text = t.lua("return require('gopi.chat').current():status_text()")
  ok(text:find("^gopi · faux%-fast · %d+%% · Turn 1 done$"), "the status: " .. text)
  -- (Read in one go: the context's percent may still change once.)
  local ok_row = pcall(
    t.wait,
    "the status in the statusline",
    [[
    vim.cmd("redraw!")
    local cells = {}
    for c = 1, vim.o.columns do cells[c] = vim.fn.screenstring(vim.o.lines - vim.o.cmdheight, c) end
    return table.concat(cells):find(require('gopi.chat').current():status_text(), 1, true) ~= nil
  ]]
  )
  screen = t.screen()
  ok(ok_row, "the statusline row shows " .. text .. ":\n" .. table.concat(screen, "\n"))
end, { ext = true })

test("extensions: /rpc-prefill sets the prompt window's text (setEditorText)", function(t)
  ext_started(t)
  prompt(t, "/rpc-prefill")
  t.wait_note("rpc-demo's notify", "gopi: Editor prefilled")
  eq(
    { "This text was set by the rpc-demo extension." },
    t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)"),
    "the prompt"
  )
  local screen = t.screen()
  local text, widget = find_row(screen, "This text was set by the rpc-demo extension."), find_row(screen, "Loaded and ready.")
  ok(text and widget and widget < text, "the text in the prompt window, the widget above it:\n" .. table.concat(screen, "\n"))
  -- It is the prompt: <CR> sends it.
  prompt(t, "reply: prefilled and sent")
  t.wait_chat("the reply", "\nprefilled and sent")
end, { ext = true })

test("extensions: /rpc-input asks through vim.ui.input; the answer (or a dismissal) reaches the extension", function(t)
  ext_started(t)
  t.lua("_G.typed = '42'")
  prompt(t, "/rpc-input")
  local note = t.wait_note("the extension's answer", "You entered: 42")
  eq(tostring(t.lua("return vim.log.levels.INFO")) .. " gopi: You entered: 42", note, "an info message")
  eq("Enter a value: ", t.lua("return _G.inputs[1].prompt"), "vim.ui.input's prompt")
  t.lua("_G.typed = nil")
  prompt(t, "/rpc-input")
  t.wait_note("the dismissal", "gopi: Input cancelled")
  eq(2, t.lua("return #_G.inputs"), "asked twice")
end, { ext = true })

test("extensions: /rpc-editor opens the text in a buffer; :w sends it back, :q cancels", function(t)
  ext_started(t)
  prompt(t, "/rpc-editor")
  t.wait("the editor tab", "return #vim.api.nvim_list_tabpages() == 2")
  ok(
    t.lua("return vim.api.nvim_buf_get_name(0)"):find("gopi://editor/Edit some text", 1, true),
    "the buffer names the dialog: " .. t.lua("return vim.api.nvim_buf_get_name(0)")
  )
  eq({ "Line 1", "Line 2", "Line 3" }, t.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), "the prefill")
  -- Edited: two more lines, and the second one changed.
  t.input("Go")
  t.input("Line 4<CR>Line 5<Esc>")
  t.lua("vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'Line two' })")
  t.cmd("w")
  t.wait_note("the extension's answer", "gopi: Editor submitted (5 lines)")
  t.wait("the editor closed", "return #vim.api.nvim_list_tabpages() == 1")
  -- Closed without :w: cancelled.
  prompt(t, "/rpc-editor")
  t.wait("the editor tab", "return #vim.api.nvim_list_tabpages() == 2")
  t.cmd("q")
  t.wait_note("the cancellation", "gopi: Editor cancelled")
  eq(1, t.lua("return #vim.api.nvim_list_tabpages()"), "the editor closed")
end, { ext = true })

test("extensions: select and confirm dialogs go through vim.ui.select, and their answer decides", function(t)
  vim.fn.mkdir(t.work .. "/doomed", "p")
  ext_started(t)
  -- select: rpc-demo asks before a dangerous bash command; Block stops it.
  t.lua("_G.answer = function(items, p) _G.items = items return 'Block' end")
  prompt(t, "bash: rm -rf doomed")
  local note = t.wait_note("the block", "gopi: Command blocked by user")
  eq(tostring(t.lua("return vim.log.levels.WARN")) .. " gopi: Command blocked by user", note, "a warning")
  eq("Dangerous command: rm -rf doomed", t.lua("return _G.asked[1]"), "the question")
  eq({ "Allow", "Block" }, t.lua("return _G.items"), "the choices")
  t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
  t.wait_chat("the refused tool", "✗ bash: rm -rf doomed")
  eq(1, vim.fn.isdirectory(t.work .. "/doomed"), "nothing was removed")
  -- confirm: a new session asks "Clear session?"; No keeps this one, Yes clears it.
  t.lua("_G.asked = {} _G.answer = function(items) _G.items = items return 'No' end")
  t.cmd("GopiNew")
  t.wait_note("the refusal", "gopi: Clear cancelled")
  eq("Clear session?\n\nAll messages will be lost.", t.lua("return _G.asked[1]"), "the question")
  eq({ "Yes", "No" }, t.lua("return _G.items"), "the choices")
  ok(t.chat_has("rm -rf doomed"), "the session is kept")
  t.lua("_G.answer = function() return 'Yes' end")
  t.cmd("GopiNew")
  t.wait("an empty chat", "return #table.concat(vim.api.nvim_buf_get_lines(require('gopi.chat').current().buf, 0, -1, false), '') == 0")
  t.wait(
    "the new session's title",
    "return vim.wo[vim.fn.bufwinid(require('gopi.chat').current().buf)].winbar:find('pi RPC Demo (new session)', 1, true) ~= nil"
  )
end, { ext = true, approval = "off" })

-- gopi's sources under the real completion plugins, set up as
-- :help gopi-completion says: typing `/` or `@` in the prompt window shows
-- gopi's items in the plugin's menu, and confirming one puts it in place of
-- what was typed.
local completers = {
  ["nvim-cmp"] = {
    setup = [[
      local cmp = require("cmp")
      -- <C-n> selects without inserting the item: with keys sent over RPC,
      -- nvim-cmp filters its menu on what an inserting select puts in, as if
      -- typed, and the menu shrinks to that item (in a terminal it does not).
      local select = { behavior = cmp.SelectBehavior.Select }
      cmp.setup({
        mapping = cmp.mapping.preset.insert({ ["<C-n>"] = cmp.mapping.select_next_item(select) }),
        sources = {},
      })
      cmp.setup.filetype("gopi_prompt", { sources = { { name = "gopi" } } })
    ]],
    visible = "return require('cmp').visible()",
    labels = "return vim.tbl_map(function(e) return e.completion_item.label end, require('cmp').get_entries())",
    selected = "local e = require('cmp').get_selected_entry() return e and e.completion_item.label or vim.NIL",
  },
  ["blink.cmp"] = {
    setup = [[
      require("blink.cmp").setup({
        keymap = { preset = "default" },
        fuzzy = { implementation = "lua" },
        sources = {
          per_filetype = { gopi_prompt = { "gopi" } },
          providers = { gopi = { name = "gopi", module = "gopi.blink" } },
        },
      })
    ]],
    visible = "return require('blink.cmp').is_menu_visible()",
    labels = "return vim.tbl_map(function(i) return i.label end, require('blink.cmp.completion.list').items)",
    selected = "local i = require('blink.cmp.completion.list').get_selected_item() return i and i.label or vim.NIL",
  },
}

--- Types keys in insert mode at the end of the prompt (emptied first), waits
--- for the menu to offer label, checks it is on screen, moves to it with
--- <C-n> and confirms it with <C-y>.
local function complete_in_prompt(t, c, keys, label)
  t.input("<Esc>")
  t.lua(
    "local s = require('gopi.chat').current() vim.api.nvim_set_current_win(vim.fn.bufwinid(s.prompt)) vim.api.nvim_buf_set_lines(s.prompt, 0, -1, false, {})"
  )
  t.input("i")
  -- Then a key at a time, as a person types: the plugins react to each change
  -- (nvim-cmp's InsertEnter handler, run once typeahead is empty, would take
  -- keys typed along with the i as there before, and not complete them).
  t.wait("insert mode", "return vim.api.nvim_get_mode().mode == 'i'")
  vim.wait(100)
  local typed = ""
  for _, ch in ipairs(vim.fn.split(keys, "\\zs")) do
    typed = typed .. ch
    t.input(ch)
    t.wait("the text typed", "return vim.api.nvim_get_current_line() == (...)", typed)
    vim.wait(20)
  end
  t.wait("the menu offering " .. label, c.visible .. " and vim.tbl_contains((function() " .. c.labels .. " end)(), (...))", label)
  local screen = t.screen()
  ok(find_row(screen, label), label .. " in the menu on screen:\n" .. table.concat(screen, "\n"))
  for _ = 1, 20 do
    if t.lua(c.selected) == label then
      break
    end
    t.input("<C-n>")
    vim.wait(50)
  end
  eq(label, t.lua(c.selected), "the selected item")
  t.input("<C-y>")
  t.wait("the menu closed", "return not (function() " .. c.visible .. " end)()")
  return t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)")
end

test("nvim-cmp loaded after gopi's setup: the source is registered with the prompt, once", function(t)
  vim.fn.mkdir(t.root .. "/agent/prompts", "p")
  vim.fn.writefile({ "Review it." }, t.root .. "/agent/prompts/review.md")
  local c = completers["nvim-cmp"]
  t.lua(c.setup)
  local gopis = "local n = 0 for _, s in ipairs(require('cmp').get_registered_sources()) do if s.name == 'gopi' then n = n + 1 end end return n"
  eq(0, t.lua(gopis), "gopi's sources before :Gopi")
  t.cmd("Gopi")
  t.wait("the commands", "return #require('gopi.complete').commands > 0")
  eq({ "/review" }, complete_in_prompt(t, c, "/rev", "/review"), "a template completed")
  t.lua("require('gopi.cmp').register()")
  eq(1, t.lua(gopis), "gopi's sources after registering again")
end, { plugins = { "nvim-cmp" }, plugins_late = true })

for _, name in ipairs({ "nvim-cmp", "blink.cmp" }) do
  local c = completers[name]
  test(name .. ": / offers gopi's prompt templates and skills, @ the workspace's files; <C-y> inserts them", function(t)
    vim.fn.mkdir(t.work .. "/.pi/skills/deploy", "p")
    vim.fn.writefile({ "---", "name: deploy", "description: Ship the app to staging", "---", "Run ./ship.sh." }, t.work .. "/.pi/skills/deploy/SKILL.md")
    -- The project's own skills load once it is trusted (pi 1.5's trust.json).
    vim.fn.mkdir(t.root .. "/agent", "p")
    vim.fn.writefile({ vim.fn.json_encode({ [vim.fn.resolve(t.work)] = true }) }, t.root .. "/agent/trust.json")
    vim.fn.mkdir(t.work .. "/src", "p")
    vim.fn.writefile({ "package main" }, t.work .. "/src/server.go")
    vim.fn.writefile({ "package main" }, t.work .. "/server_test.go")
    vim.fn.mkdir(t.root .. "/agent/prompts", "p")
    vim.fn.writefile({ "---", "description: Review the change", "---", "Review it." }, t.root .. "/agent/prompts/review.md")
    vim.fn.writefile({ "Refactor it." }, t.root .. "/agent/prompts/refactor.md")
    t.lua(c.setup)
    t.cmd("Gopi")
    t.wait("the commands", "return #require('gopi.complete').commands > 0")
    eq({ "/review" }, complete_in_prompt(t, c, "/rev", "/review"), "a template completed")
    -- What was inserted is the prompt: sent, gopi expands the template.
    t.input("<Esc><CR>")
    t.wait_chat("the template sent", "Review it.")
    t.wait("settled", "return require('gopi.chat').current().state.streaming == false")
    eq({ "/refactor" }, complete_in_prompt(t, c, "/", "/refactor"), "a template from / alone")
    eq({ "/skill:deploy" }, complete_in_prompt(t, c, "/skill:de", "/skill:deploy"), "a skill")
    -- (After a word of more bytes than characters: the edits count bytes.)
    eq({ "voilà @src/server.go" }, complete_in_prompt(t, c, "voilà @serv", "@src/server.go"), "a file completed")
    eq({ "see @src/server.go" }, complete_in_prompt(t, c, "see @src/se", "@src/server.go"), "a file from its directory on")
    -- What follows @ is found anywhere in the path, not only at its start.
    vim.fn.mkdir(t.work .. "/lib/src", "p")
    vim.fn.writefile({ "package src" }, t.work .. "/lib/src/session.go")
    eq({ "see @lib/src/session.go" }, complete_in_prompt(t, c, "see @src/sess", "@lib/src/session.go"), "a file by the middle of its path")
  end, { plugins = { name } })

  test(name .. ": / offers an extension's commands; the one confirmed runs", function(t)
    t.lua(c.setup)
    ext_started(t)
    t.wait(
      "the extension's commands",
      "for _, c in ipairs(require('gopi.complete').commands) do if c.name == 'rpc-prefill' then return true end end return false"
    )
    eq({ "/rpc-prefill" }, complete_in_prompt(t, c, "/rpc-pre", "/rpc-prefill"), "the command completed")
    t.input("<Esc><CR>")
    t.wait_note("rpc-demo's notify", "gopi: Editor prefilled")
  end, { plugins = { name }, ext = true })
end

-- A 1×1 PNG, and bytes that start as a JPEG does.
local png = vim.base64.decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
local jpeg = "\255\216\255\224\0\16JFIF\0\1\1\0\0\1\0\1\0\0" .. string.rep("\0", 200) .. "\255\217"

local function write_bytes(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

--- The image blocks of the session's user messages, one list per message.
local user_images = [[
  local out = {}
  for _, m in ipairs(require('gopi.chat').current().client:call('get_messages').messages) do
    if m.role == 'user' then
      local imgs = {}
      for _, c in ipairs(type(m.content) == 'table' and m.content or {}) do
        if c.type == 'image' then table.insert(imgs, { mimeType = c.mimeType, data = c.data }) end
      end
      table.insert(out, imgs)
    end
  end
  return out
]]

local ready = "return require('gopi.chat').current().client ~= nil and require('gopi.chat').current().client.ready == true"

--- The virtual lines under the prompt, as text.
local function under_prompt(t)
  return t.lua([[
    local s = require('gopi.chat').current()
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(s.prompt, -1, 0, -1, { details = true })) do
      for _, vl in ipairs(m[4].virt_lines or {}) do
        local l = ''
        for _, chunk in ipairs(vl) do l = l .. chunk[1] end
        table.insert(out, l)
      end
    end
    return table.concat(out, '\n')
  ]])
end

test(":GopiImage and @image.png attach images: gopi stores them with their type and data; chips in the prompt and the chat", function(t)
  write_bytes(t.work .. "/shot.png", png)
  write_bytes(t.work .. "/photo.jpg", jpeg)
  t.cmd("Gopi")
  t.wait("gopi started", ready)
  t.cmd("GopiImage shot.png")
  t.wait_note("attached", "attached [image: shot.png " .. #png .. " B]")
  ok(under_prompt(t):find("[image: shot.png " .. #png .. " B]", 1, true), "the chip under the prompt:\n" .. under_prompt(t))
  -- (shot.png named with @ as well as attached goes once.)
  prompt(t, "what is in these, @shot.png and @photo.jpg?")
  t.wait_chat("the reply", "## gopi")
  t.wait("settled", settled)
  eq(
    { { { mimeType = "image/png", data = vim.base64.encode(png) }, { mimeType = "image/jpeg", data = vim.base64.encode(jpeg) } } },
    t.lua(user_images),
    "the stored images"
  )
  ok(
    t.chat_has("[image: shot.png " .. #png .. " B]") and t.chat_has("[image: photo.jpg " .. #jpeg .. " B]"),
    "the chips in the chat:\n" .. table.concat(t.chat(), "\n")
  )
  ok(not t.chat_has('<file path="photo.jpg"'), "no text block for an image:\n" .. table.concat(t.chat(), "\n"))
  eq(0, t.lua("return #require('gopi.chat').current().images"), "the attachments went with the message")
  eq("", under_prompt(t), "no chip left under the prompt")
  -- The session shown again (from gopi's history) shows them again.
  t.cmd("GopiRestart")
  t.wait("gopi started again", ready)
  t.wait_chat("the history", "[image: photo.jpg " .. #jpeg .. " B]")
end)

test("an image missing, not an image or too large: a clear message, nothing sent, the prompt kept", function(t)
  write_bytes(t.work .. "/fake.png", "hello, not a picture\n")
  write_bytes(t.work .. "/shot.png", png)
  t.cmd("Gopi")
  t.wait("gopi started", ready)
  t.cmd("GopiImage nothere.png")
  ok(t.wait_note("missing", "nothere.png: no such file"):match("^4 "), "an error")
  t.cmd("GopiImage fake.png")
  t.wait_note("not an image", "fake.png is not an image gopi can send (png, jpeg, gif or webp)")
  t.lua("require('gopi.image').max_bytes = 10")
  t.cmd("GopiImage shot.png")
  t.wait_note("too large", "shot.png is " .. #png .. " B; images over 10 B are not sent")
  t.lua("require('gopi.image').max_bytes = 20 * 1024 * 1024")
  eq(0, t.lua("return #require('gopi.chat').current().images"), "nothing attached")
  -- In the prompt: nothing goes, the text comes back.
  prompt(t, "look at @gone.png please")
  t.wait_note("missing", "gone.png: no such file: nothing was sent")
  eq({ "look at @gone.png please" }, t.lua("return vim.api.nvim_buf_get_lines(require('gopi.chat').current().prompt, 0, -1, false)"), "the prompt kept")
  prompt(t, "and @fake.png")
  t.wait_note("not an image", "fake.png is not an image gopi can send (png, jpeg, gif or webp): nothing was sent")
  -- An attached image stays attached when the message fails.
  t.cmd("GopiImage shot.png")
  t.wait_note("attached", "attached [image: shot.png")
  prompt(t, "with @gone.png")
  t.wait("the message failed", "return #_G.notes >= 2 and _G.notes[#_G.notes]:find('nothing was sent', 1, true) ~= nil")
  eq(1, t.lua("return #require('gopi.chat').current().images"), "still attached")
  eq({}, t.lua(user_images), "no message reached gopi")
  eq(false, t.lua("return require('gopi.chat').current().state.streaming"), "nothing runs")
  -- :GopiImage! drops the attached ones.
  t.cmd("GopiImage!")
  eq(0, t.lua("return #require('gopi.chat').current().images"), "dropped")
  eq("", under_prompt(t), "no chip under the prompt")
end)

test(":GopiImage without a path reads the clipboard with the tool there is; none, or no image in it, is said", function(t)
  write_bytes(t.work .. "/clip.png", png)
  t.cmd("Gopi")
  t.wait("gopi started", ready)
  local bin = t.root .. "/bin"
  vim.fn.mkdir(bin, "p")
  -- No tool on PATH.
  t.lua("vim.env.PATH = ...; vim.env.WAYLAND_DISPLAY = 'wayland-0'", bin)
  t.cmd("GopiImage")
  t.wait_note("no tool", "no tool to read an image from the clipboard: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS)")
  -- wl-paste with no image in the clipboard (it fails, as the real one does).
  vim.fn.writefile({ "#!/bin/sh", 'echo "No suitable type of content copied" >&2', "exit 1" }, bin .. "/wl-paste")
  vim.fn.setfperm(bin .. "/wl-paste", "rwxr-xr-x")
  t.cmd("GopiImage")
  t.wait_note("no image", "the clipboard holds no image (wl-paste: No suitable type of content copied)")
  -- One that fails without a word.
  vim.fn.writefile({ "#!/bin/sh", "exit 1" }, bin .. "/wl-paste")
  t.cmd("GopiImage")
  t.wait_note("no image", "the clipboard holds no image (wl-paste found none)")
  -- wl-paste with text in the clipboard.
  vim.fn.writefile({ "#!/bin/sh", "echo some text" }, bin .. "/wl-paste")
  t.cmd("GopiImage")
  t.wait_note("text", "the clipboard holds no image gopi can send")
  -- With an image: it is asked for as a PNG and attached.
  vim.fn.writefile({ "#!/bin/sh", 'echo "$@" > "$0.args"', 'exec /bin/cat "' .. t.work .. '/clip.png"' }, bin .. "/wl-paste")
  t.cmd("GopiImage")
  t.wait_note("attached", "attached [image: clipboard.png " .. #png .. " B]")
  eq({ "--no-newline --type image/png" }, vim.fn.readfile(bin .. "/wl-paste.args"), "wl-paste's arguments")
  prompt(t, "what is this")
  t.wait_chat("the reply", "## gopi")
  t.wait("settled", settled)
  eq({ { { mimeType = "image/png", data = vim.base64.encode(png) } } }, t.lua(user_images), "the stored image")
  ok(t.chat_has("[image: clipboard.png " .. #png .. " B]"), "the chip:\n" .. table.concat(t.chat(), "\n"))
end)

test("? in the chat, the prompt and a review lists the keys as configured, a remapped one too", function(t)
  t.cmd("Gopi")
  t.wait("gopi started", ready)
  local float = [[
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' and vim.b[vim.api.nvim_win_get_buf(w)].gopi_help then
        return { where = vim.b[vim.api.nvim_win_get_buf(w)].gopi_help, text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n'), current = w == vim.api.nvim_get_current_win() }
      end
    end
  ]]
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().buf))")
  t.input("?")
  t.wait("the keys", "return (function() " .. float .. " end)() ~= nil")
  local h = t.lua(float)
  eq("chat", h.where, "the chat's help")
  ok(h.current, "the float has the cursor")
  ok(h.text:find("In the chat and its prompt:", 1, true), h.text)
  -- A row of the help: the key (as text), then what it does.
  local function row(text, key, what)
    for _, l in ipairs(vim.split(text, "\n")) do
      if vim.startswith(l, "  " .. key .. " ") and vim.endswith(l, what) and vim.trim(l:sub(#key + 3, -#what - 1)) == "" then
        return true
      end
    end
    return false
  end
  ok(row(h.text, "<C-x> (normal), <C-x> (insert)", "stop the run"), "the remapped abort key:\n" .. h.text)
  ok(row(h.text, "<CR> (normal), <C-s> (insert)", "send the message (steers while gopi works)"), "send:\n" .. h.text)
  ok(row(h.text, "gy", "accept the change"), "the remapped accept key:\n" .. h.text)
  ok(not h.text:find("ga%s"), "not the default accept key:\n" .. h.text)
  t.input("q")
  t.wait("closed", "return (function() " .. float .. " end)() == nil")
  eq(t.lua("return require('gopi.chat').current().buf"), t.lua("return vim.api.nvim_get_current_buf()"), "back in the chat")
  -- In the prompt (normal mode) too.
  t.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(require('gopi.chat').current().prompt))")
  t.input("<Esc>?")
  t.wait("the keys from the prompt", "return (function() " .. float .. " end)() ~= nil")
  t.input("<Esc>")
  t.wait("closed", "return (function() " .. float .. " end)() == nil")
  -- In a review: its keys first.
  prompt(t, "write: notes.txt :: hello")
  t.wait("the question", pending)
  t.cmd("GopiReview")
  t.wait("the review tab", "return #vim.api.nvim_list_tabpages() == 2")
  t.input("?")
  t.wait("the review's keys", "return (function() " .. float .. " end)() ~= nil")
  h = t.lua(float)
  eq("review", h.where, "the review's help")
  ok(vim.startswith(h.text, "In a review:\n  gy"), "the review's keys first, remapped:\n" .. h.text)
  ok(row(h.text, ":q", "reject (closing the review)"), ":q:\n" .. h.text)
  t.input("q")
  t.wait("closed", "return (function() " .. float .. " end)() == nil")
  eq(1, t.lua("return #require('gopi.review').pending"), "the question still waits")
end, { setup = { keys = { accept = "gy", abort = { n = "<C-x>", i = "<C-x>" } } } })

lib.finish()
